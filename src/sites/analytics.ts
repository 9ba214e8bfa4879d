import { ServiceError } from '../errors.js';
import { addDays, analyticsRange, analyticsReachDays, TOP_ANALYTICS_ITEMS, utcDay } from '../rules/index.js';
import type { AnalyticsDayRecord } from '../store/index.js';
import type { AnalyticsDayView, SiteAnalyticsView } from '../contract/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';

export interface AnalyticsOperations {
  /**
   * A site's analytics per day from `from` to `to` (`YYYY-MM-DD`, UTC; default the last 30
   * days), with totals: members, or the site token of an unclaimed site. Days past the plan's
   * history reach are not kept, so a range starts at the reach at the earliest.
   */
  read(caller: Caller, name: string, range?: { from?: unknown; to?: unknown }): Promise<SiteAnalyticsView>;
}

type Counts = Omit<AnalyticsDayView, 'day'>;

/** The most counted first (ties by name), at most the top ten. */
function top(items: Iterable<[string, number]>): Array<[string, number]> {
  return [...items].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_ANALYTICS_ITEMS);
}

function countsOf(record: Omit<AnalyticsDayRecord, 'day'>): Counts {
  return {
    page_views: record.pageViews,
    visitors: record.visitors,
    not_found: record.notFound,
    bytes: record.bytes,
    crawler_views: record.crawlerViews,
    pages: top(record.pages).map(([path, count]) => ({ path, count })),
    referrers: top(record.referrers).map(([host, count]) => ({ host, count })),
  };
}

export function analyticsOperations(deps: OperationsDeps): AnalyticsOperations {
  const { store } = deps;
  return {
    async read(caller, name, asked = {}) {
      const now = deps.now();
      const { site } = resolveSite(store, caller, name, 'read', now);
      for (const field of ['from', 'to'] as const) {
        const value = asked[field];
        if (value !== undefined && typeof value !== 'string') throw new ServiceError('bad_request', `"${field}" must be a date as YYYY-MM-DD.`);
      }
      const today = utcDay(now);
      const range = analyticsRange({ from: asked.from as string | undefined, to: asked.to as string | undefined }, today, analyticsReachDays(site.plan));
      if (!range.ok) {
        throw new ServiceError('bad_request', range.problem, {
          agentMessage: `Ask again with from and to as UTC dates (YYYY-MM-DD), from not after to, or leave both out for the last 30 days of ${site.name}.`,
        });
      }
      const found = new Map((await store.readAnalytics(site.id, range.from, range.to)).map((record) => [record.day, record]));
      const total = {
        pageViews: 0,
        visitors: 0,
        notFound: 0,
        bytes: 0,
        crawlerViews: 0,
        pages: new Map<string, number>(),
        referrers: new Map<string, number>(),
      };
      const days: AnalyticsDayView[] = [];
      for (let day = range.from; day <= range.to; day = addDays(day, 1)) {
        const record = found.get(day) ?? { day, pageViews: 0, visitors: 0, notFound: 0, bytes: 0, crawlerViews: 0, pages: [], referrers: [] };
        days.push({ day, ...countsOf(record) });
        total.pageViews += record.pageViews;
        total.visitors += record.visitors;
        total.notFound += record.notFound;
        total.bytes += record.bytes;
        total.crawlerViews += record.crawlerViews;
        for (const [path, count] of record.pages) total.pages.set(path, (total.pages.get(path) ?? 0) + count);
        for (const [host, count] of record.referrers) total.referrers.set(host, (total.referrers.get(host) ?? 0) + count);
      }
      return {
        site: site.name,
        from: range.from,
        to: range.to,
        totals: countsOf({ ...total, pages: [...total.pages], referrers: [...total.referrers] }),
        days,
      };
    },
  };
}
