import { callApi } from './api-client.js';
import { reportFailure } from './output.js';
import { siteOfFolder, type SiteCommandOptions } from './site-commands.js';

/** `plinth stats [dir]`: what the server counted of the folder's site's visits (GET /v1/sites/<name>/analytics). */

interface Counted {
  page_views: number;
  visitors: number;
  not_found: number;
  bytes: number;
  crawler_views: number;
  pages: Array<{ path: string; count: number }>;
  referrers: Array<{ host: string; count: number }>;
}

interface Analytics {
  site: string;
  from: string;
  to: string;
  totals: Counted;
  days: Array<Counted & { day: string }>;
}

export async function statsCommand(options: SiteCommandOptions & { from?: string; to?: string }): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const query = new URLSearchParams();
  if (options.from !== undefined) query.set('from', options.from);
  if (options.to !== undefined) query.set('to', options.to);
  const path = `v1/sites/${encodeURIComponent(state.site)}/analytics${query.size > 0 ? `?${query}` : ''}`;
  const answer = await callApi({ apiUrl: options.apiUrl, method: 'GET', path, token });
  if (answer.status !== 200) return reportFailure(options, 'Reading analytics', answer);
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  const stats = answer.json as unknown as Analytics;
  const { totals } = stats;
  options.out(`${stats.site}, ${stats.from} to ${stats.to} (UTC)`);
  options.out(
    `${count(totals.page_views, 'page view')}, ${count(totals.visitors, 'visitor')}, ${totals.not_found} not found, ${formatBytes(totals.bytes)} served, ${count(totals.crawler_views, 'crawler view')}`,
  );
  const visited = stats.days.filter((day) => day.page_views + day.not_found + day.crawler_views > 0);
  if (visited.length > 0) {
    options.out('');
    table(
      options,
      ['DAY', 'VIEWS', 'VISITORS', '404', 'BYTES'],
      visited.map((day) => [day.day, String(day.page_views), String(day.visitors), String(day.not_found), formatBytes(day.bytes)]),
    );
  }
  if (totals.pages.length > 0) {
    options.out('');
    table(
      options,
      ['VIEWS', 'PAGE'],
      totals.pages.map((page) => [String(page.count), page.path]),
    );
  }
  if (totals.referrers.length > 0) {
    options.out('');
    table(
      options,
      ['VISITS', 'FROM'],
      totals.referrers.map((referrer) => [String(referrer.count), referrer.host]),
    );
  }
  return 0;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function table(io: { out(line: string): void }, header: string[], rows: string[][]): void {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  io.out(line(header));
  for (const row of rows) io.out(line(row));
}
