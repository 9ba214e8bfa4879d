import { siteUrl, type PublicUrls } from '../config.js';
import { hasBadge } from '../plans.js';
import type { Plan, RevisionKind, RevisionRecord, Role, SiteRecord } from '../store/index.js';

/** JSON shapes of SPEC 2, built in one place so every endpoint spells fields the same way. */

export const iso = (ms: number): string => new Date(ms).toISOString();

export interface DeploySiteView {
  name: string;
  url: string;
  claimed: boolean;
  expires_at?: string;
}

export function deploySiteView(site: SiteRecord, urls: PublicUrls): DeploySiteView {
  const view: DeploySiteView = { name: site.name, url: siteUrl(urls, site.name), claimed: site.claimed };
  if (!site.claimed && site.expiresAt !== undefined) view.expires_at = iso(site.expiresAt);
  return view;
}

export function deployRevisionView(revision: RevisionRecord): { id: string; number: number; files: number; bytes: number } {
  return { id: revision.id, number: revision.number, files: revision.files, bytes: revision.bytes };
}

/** True when an unclaimed site is past its expiry (decided at read time, never stored). */
export function isExpired(site: SiteRecord, now: number): boolean {
  return !site.claimed && site.expiresAt !== undefined && site.expiresAt <= now;
}

export interface RevisionRef {
  id: string;
  number: number;
  created_at: string;
  created_by: string;
}

/** The site object of SPEC 2 as a member (or an unclaimed site's token) sees it. */
export interface SiteView extends DeploySiteView {
  plan: Plan;
  role: Role;
  live_revision: RevisionRef | null;
  badge: boolean;
}

export function siteView(site: SiteRecord, role: Role, live: RevisionRecord | undefined, urls: PublicUrls): SiteView {
  return {
    ...deploySiteView(site, urls),
    plan: site.plan,
    role,
    live_revision: live ? revisionRef(live) : null,
    badge: hasBadge(site.plan),
  };
}

export function revisionRef(revision: RevisionRecord): RevisionRef {
  return { id: revision.id, number: revision.number, created_at: iso(revision.createdAt), created_by: revision.createdBy };
}

export interface RevisionView extends RevisionRef {
  files: number;
  bytes: number;
  kind: RevisionKind;
  rollback_of?: string;
}

/** A revision in listings and rollback answers. */
export function revisionView(revision: RevisionRecord): RevisionView {
  const view: RevisionView = { ...revisionRef(revision), files: revision.files, bytes: revision.bytes, kind: revision.kind };
  if (revision.rollbackOf !== undefined) view.rollback_of = revision.rollbackOf;
  return view;
}
