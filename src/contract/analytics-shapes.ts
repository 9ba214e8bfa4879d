import { arrayOf, int, object, str, type JsonOf } from './schema-kit.js';

/** The JSON of a site's analytics (docs/analytics.md), listed in shapes.ts's SHAPES. */

const DAY = '^\\d{4}-\\d{2}-\\d{2}$';

const countedProperties = {
  page_views: int('GET answers with an HTML page (200 or 304), crawlers left out.'),
  visitors: int("Distinct visitors (by a keyed hash of network and user agent that changes daily); in `totals`, the sum of the days' figures."),
  not_found: int('Answers 404.'),
  bytes: int('Body bytes of every answer: pages and files.'),
  crawler_views: int('Page views by crawlers and bots, counted apart.'),
  pages: arrayOf(object({ path: str('The path asked for.'), count: int() }), 'Most viewed pages, most first (at most 10).'),
  referrers: arrayOf(object({ host: str('The host of the page the visitor came from.'), count: int() }), 'Referrer hosts, most first (at most 10).'),
};

export const AnalyticsDay = object({ day: str('UTC day, YYYY-MM-DD.', { pattern: DAY }), ...countedProperties });
export const SiteAnalytics = object({
  site: str('Site name.'),
  from: str('First day covered (UTC), YYYY-MM-DD.', { pattern: DAY }),
  to: str('Last day covered (UTC), YYYY-MM-DD: today at most.', { pattern: DAY }),
  totals: object(countedProperties),
  days: arrayOf(AnalyticsDay, 'Every day from `from` to `to`, oldest first; days without visits have zeros.'),
});

export type SiteAnalyticsView = JsonOf<typeof SiteAnalytics>;
export type AnalyticsDayView = JsonOf<typeof AnalyticsDay>;
