import { PLAN_LIMITS, type Plan } from './plans.js';

/**
 * Site analytics counted by the server (docs/analytics.md): the days they are kept in, the range a
 * reader asks for, and what a request's headers say about where a visitor came from.
 */

export const ANALYTICS_DAY_MS = 24 * 3600 * 1000;
/** The default range: the last 30 days, today included. */
export const DEFAULT_ANALYTICS_DAYS = 30;
/** The longest range one answer covers (the longest history reach, Company's two years, and a day). */
export const MAX_ANALYTICS_DAYS = 731;
/** An anonymous site keeps its analytics as long as it lives unclaimed. */
const ANONYMOUS_ANALYTICS_DAYS = 3;
/** Top pages and referrers an answer lists per day and in its totals. */
export const TOP_ANALYTICS_ITEMS = 10;
/** Longest page path counted as it is; longer ones are cut (a path is the site's, not a secret, but may be huge). */
export const MAX_COUNTED_PATH = 512;

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of a time, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Midnight UTC that starts `day`, or undefined for text that is no real date. */
export function dayStart(day: string): number | undefined {
  const m = DAY_PATTERN.exec(day);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return utcDay(ms) === day ? ms : undefined;
}

/** `day` moved by `days` (negative: earlier). */
export function addDays(day: string, days: number): string {
  return utcDay(dayStart(day)! + days * ANALYTICS_DAY_MS);
}

/** Days a site's analytics are kept, today included: the plan's history reach, and an anonymous site's life. */
export function analyticsReachDays(plan: Plan): number {
  return Math.max(ANONYMOUS_ANALYTICS_DAYS, Math.ceil(PLAN_LIMITS[plan].historyReachMs / ANALYTICS_DAY_MS));
}

export type AnalyticsRange = { ok: true; from: string; to: string } | { ok: false; problem: string };

/**
 * The days an analytics answer covers: `from` and `to` (`YYYY-MM-DD`, UTC, both included),
 * by default the last 30 days. A range reaching back past what the plan keeps starts where it
 * starts; one ending after today ends today. Text that is no date, `from` after `to`, or a range
 * longer than the longest reach is a problem, said in words.
 */
export function analyticsRange(asked: { from?: string; to?: string }, today: string, reachDays: number): AnalyticsRange {
  for (const field of ['from', 'to'] as const) {
    const value = asked[field];
    if (value !== undefined && dayStart(value) === undefined)
      return { ok: false, problem: `"${field}" must be a date as YYYY-MM-DD (got "${value.slice(0, 40)}").` };
  }
  let to = asked.to ?? today;
  if (to > today) to = today;
  const from = asked.from ?? addDays(to, 1 - DEFAULT_ANALYTICS_DAYS);
  if (asked.from !== undefined && asked.to !== undefined && asked.from > asked.to)
    return { ok: false, problem: `"from" (${asked.from}) is after "to" (${asked.to}).` };
  if (from > to) return { ok: false, problem: `"from" (${from}) is after today (${today}); there is nothing counted yet.` };
  if ((dayStart(to)! - dayStart(from)!) / ANALYTICS_DAY_MS + 1 > MAX_ANALYTICS_DAYS) {
    return { ok: false, problem: `A range covers at most ${MAX_ANALYTICS_DAYS} days (got ${from} to ${to}).` };
  }
  const kept = addDays(today, 1 - reachDays);
  return { ok: true, from: from < kept ? (kept > to ? to : kept) : from, to };
}

/**
 * The host name a `Referer` header names, lower-case and without port (a `www.` kept); undefined
 * when there is none or it is not an http(s) address. Cheap on purpose: it runs once per distinct
 * value per flush, never per request.
 */
export function referrerHostname(referer: string): string | undefined {
  const m = /^https?:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)/i.exec(referer.trim());
  if (!m) return undefined;
  const host = m[1]!.toLowerCase().replace(/\.$/, '');
  // A name of letters, digits, hyphens and dots (punycode for others), or a bracketed IPv6 address.
  if (host.length > 253 || !/^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(host)) return undefined;
  return host;
}

/** The host a `Referer` header names as counted: `referrerHostname` without `www.`. */
export function referrerHost(referer: string): string | undefined {
  const host = referrerHostname(referer);
  return host === undefined ? undefined : countedReferrerHost(host);
}

/** A referrer's host name as counted: without `www.`. */
export const countedReferrerHost = (hostname: string): string => (hostname.startsWith('www.') ? hostname.slice(4) : hostname);

/**
 * Whether a referrer's host name (`referrerHostname`) is one of the site's own: its address under
 * the site domain or one of its verified custom domains (`ownHosts`), or the `www.` name of one.
 */
export function isOwnReferrer(hostname: string, ownHosts: ReadonlySet<string>): boolean {
  return ownHosts.has(hostname) || (hostname.startsWith('www.') && ownHosts.has(hostname.slice(4)));
}

/** A page path as counted: the request's path, cut to a bounded length. */
export function countedPath(path: string): string {
  return path.length > MAX_COUNTED_PATH ? path.slice(0, MAX_COUNTED_PATH) : path;
}
