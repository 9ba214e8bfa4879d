import { ANONYMOUS_LIFETIME_MS, PLAN_LIMITS, type Plan } from './plans.js';

/** What the reach rule reads of a site and of one of its revisions. */
export interface ReachSite {
  id: string;
  plan: Plan;
  liveRevision?: string;
  liveNumber: number;
}
export interface ReachRevision {
  id: string;
  siteId: string;
  number: number;
  createdAt: number;
}

/**
 * Whether a revision is within the site's history reach (SPEC 4.3): the live revision always,
 * others while younger than the plan's reach. Anonymous sites reach only the current revision,
 * which for them includes drafts stored after it (a draft is the next current one).
 */
export function isInHistoryReach(site: ReachSite, revision: ReachRevision, now: number): boolean {
  if (revision.siteId !== site.id) return false;
  if (revision.id === site.liveRevision) return true;
  const reach = PLAN_LIMITS[site.plan].historyReachMs;
  if (reach === 0) return revision.number > site.liveNumber;
  return revision.createdAt >= now - reach;
}

/**
 * How long the audit log keeps a site's or an account's events: the plan's history reach, and
 * for an anonymous site (reach: its current revision only) its whole short life.
 */
export function eventReachMs(plan: Plan): number {
  return PLAN_LIMITS[plan].historyReachMs || ANONYMOUS_LIFETIME_MS;
}
