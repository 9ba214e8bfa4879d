import { randomBytes } from 'node:crypto';
import type { Database, RootDatabase } from 'lmdb';

/**
 * Site analytics (docs/analytics.md): per site and UTC day, the counts the serving threads
 * flushed, the pages and referrer hosts with theirs, and the day's visitor hashes, which only
 * tell a visitor already counted from a new one and are dropped once their day is over.
 * Embedded, these are this machine's own LMDB tables; in a cluster, PostgreSQL's
 * (records-analytics.ts), where every node adds to the same rows. They are not records of the
 * change log: counts are added, never replaced, so no node's replica needs them.
 */

/** What one flush counted for one site on one day. */
export interface SiteDayVisits {
  siteId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  pageViews: number;
  crawlerViews: number;
  notFound: number;
  bytes: number;
  /** Keyed hashes of the visitors seen (never an address or a user agent). */
  visitors: readonly string[];
  pages: ReadonlyArray<readonly [path: string, count: number]>;
  referrers: ReadonlyArray<readonly [host: string, count: number]>;
}

/** One day of a site, as read back. */
export interface AnalyticsDayRecord {
  day: string;
  pageViews: number;
  visitors: number;
  crawlerViews: number;
  notFound: number;
  bytes: number;
  pages: Array<[path: string, count: number]>;
  referrers: Array<[host: string, count: number]>;
}

export interface AnalyticsRecords {
  /** The secret visitor hashes of `day` are keyed with: made once, the same for every thread and node. */
  analyticsSalt(day: string): Promise<string>;
  /** Adds a flush's counts; a page or referrer new to a site's day is kept only while it has fewer than `maxItemsPerDay` (0: no cap). */
  addVisits(visits: readonly SiteDayVisits[], maxItemsPerDay: number): Promise<void>;
  /** The days of a site from `from` to `to` (both included) that have counts, oldest first. */
  readAnalytics(siteId: string, from: string, to: string): Promise<AnalyticsDayRecord[]>;
  /** Drops a site's days before `beforeDay` (past its plan's reach); returns how many. */
  pruneAnalytics(siteId: string, beforeDay: string): Promise<number>;
  /** Drops visitor hashes and salts of days before `beforeDay`; their counts stay. Returns how many hashes. */
  forgetVisitors(beforeDay: string): Promise<number>;
}

type DayKey = [siteId: string, day: string];
type ItemKey = [siteId: string, day: string, kind: ItemKind, item: string];
type VisitorKey = [day: string, siteId: string, hash: string];
type ItemKind = 'page' | 'referrer';

interface DayCounts {
  pageViews: number;
  crawlerViews: number;
  notFound: number;
  bytes: number;
  visitors: number;
}

interface AnalyticsDbs {
  days: Database<DayCounts, DayKey>;
  items: Database<number, ItemKey>;
  visitors: Database<number, VisitorKey>;
  salts: Database<string, string>;
}

/** A new day's salt: random, so a hash cannot be recomputed from an address once the salt is gone. */
export const newSalt = (): string => randomBytes(32).toString('base64url');

/** The embedded tables, in the data directory's LMDB environment, shared by every thread and process on it. */
export function embeddedAnalytics(env: RootDatabase): AnalyticsRecords {
  const dbs: AnalyticsDbs = {
    days: env.openDB<DayCounts, DayKey>('analyticsDays', {}),
    items: env.openDB<number, ItemKey>('analyticsItems', {}),
    visitors: env.openDB<number, VisitorKey>('analyticsVisitors', {}),
    salts: env.openDB<string, string>('analyticsSalts', {}),
  };
  const itemCount = (siteId: string, day: string, kind: ItemKind): number =>
    dbs.items.getKeysCount({ start: [siteId, day, kind], end: [siteId, day, kind, '\uffff'] });

  return {
    async analyticsSalt(day) {
      const found = dbs.salts.get(day);
      if (found !== undefined) return found;
      const made = newSalt();
      await dbs.salts.ifNoExists(day, () => void dbs.salts.put(day, made));
      return dbs.salts.get(day) ?? made;
    },

    addVisits: (visits, maxItemsPerDay) =>
      env.transaction(() => {
        for (const visit of visits) {
          const key: DayKey = [visit.siteId, visit.day];
          const counts = dbs.days.get(key) ?? { pageViews: 0, crawlerViews: 0, notFound: 0, bytes: 0, visitors: 0 };
          let newVisitors = 0;
          for (const hash of visit.visitors) {
            const visitorKey: VisitorKey = [visit.day, visit.siteId, hash];
            if (dbs.visitors.get(visitorKey) !== undefined) continue;
            void dbs.visitors.put(visitorKey, 1);
            newVisitors++;
          }
          void dbs.days.put(key, {
            pageViews: counts.pageViews + visit.pageViews,
            crawlerViews: counts.crawlerViews + visit.crawlerViews,
            notFound: counts.notFound + visit.notFound,
            bytes: counts.bytes + visit.bytes,
            visitors: counts.visitors + newVisitors,
          });
          for (const [kind, list] of [
            ['page', visit.pages],
            ['referrer', visit.referrers],
          ] as const) {
            let room = maxItemsPerDay === 0 ? Infinity : maxItemsPerDay - itemCount(visit.siteId, visit.day, kind);
            for (const [item, count] of list) {
              const itemKey: ItemKey = [visit.siteId, visit.day, kind, item];
              const before = dbs.items.get(itemKey);
              if (before === undefined) {
                if (room <= 0) continue;
                room--;
              }
              void dbs.items.put(itemKey, (before ?? 0) + count);
            }
          }
        }
      }),

    async readAnalytics(siteId, from, to) {
      const days = new Map<string, AnalyticsDayRecord>();
      for (const { key, value } of dbs.days.getRange({ start: [siteId, from], end: [siteId, `${to}\uffff`] })) {
        days.set(key[1], { day: key[1], ...value, pages: [], referrers: [] });
      }
      for (const { key, value } of dbs.items.getRange({ start: [siteId, from], end: [siteId, `${to}\uffff`] })) {
        const day = days.get(key[1]);
        if (day === undefined) continue;
        (key[2] === 'page' ? day.pages : day.referrers).push([key[3], value]);
      }
      return [...days.values()];
    },

    pruneAnalytics: (siteId, beforeDay) =>
      env.transaction(() => {
        let removed = 0;
        for (const key of dbs.days.getKeys({ start: [siteId], end: [siteId, beforeDay], snapshot: false })) {
          void dbs.days.remove(key);
          removed++;
        }
        for (const key of dbs.items.getKeys({ start: [siteId], end: [siteId, beforeDay], snapshot: false })) void dbs.items.remove(key);
        return removed;
      }),

    forgetVisitors: (beforeDay) =>
      env.transaction(() => {
        let removed = 0;
        for (const key of dbs.visitors.getKeys({ end: [beforeDay], snapshot: false })) {
          void dbs.visitors.remove(key);
          removed++;
        }
        for (const day of dbs.salts.getKeys({ end: beforeDay, snapshot: false })) void dbs.salts.remove(day);
        return removed;
      }),
  };
}
