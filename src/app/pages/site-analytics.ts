import { html } from 'hono/html';
import type { SiteAnalyticsView } from '../../contract/index.js';
import { formatBytes } from '../../sites/index.js';

/** Height of the chart's drawing, and the width each day gets in it (the SVG scales to the page). */
const CHART_HEIGHT = 100;
const DAY_WIDTH = 10;
const BAR_WIDTH = 8;

/**
 * The site page's "Visits" section: what the server counted (docs/analytics.md), as an inline SVG
 * chart with one bar per day (no script, no request of its own), the totals, and the top pages
 * and referrers. The numbers are in text too, for a screen reader and a printed page.
 */
export function analyticsSection(stats: SiteAnalyticsView) {
  const { totals, days } = stats;
  const most = Math.max(1, ...days.map((day) => day.page_views));
  const bars = days.map((day, i) => {
    const height = day.page_views === 0 ? 0 : Math.max(1, Math.round((day.page_views / most) * CHART_HEIGHT));
    const label = `${day.day}: ${views(day.page_views)}, ${day.visitors} ${day.visitors === 1 ? 'visitor' : 'visitors'}`;
    return html`<rect class="chart-bar" x="${i * DAY_WIDTH + 1}" y="${CHART_HEIGHT - height}" width="${BAR_WIDTH}" height="${height}"><title>${label}</title></rect>`;
  });
  const chartLabel = `Page views per day from ${stats.from} to ${stats.to}: ${views(totals.page_views)} in all.`;
  return html`<h2 id="visits">Visits</h2>
<p class="hint">Counted by Plinth as pages are served, without a script or a cookie; crawlers are counted apart. Times are UTC; new visits show up within a minute.</p>
<dl class="facts">
  <dt>Page views</dt><dd>${totals.page_views}</dd>
  <dt>Visitors</dt><dd>${totals.visitors} <span class="hint">(distinct per day, added up)</span></dd>
  <dt>Not found (404)</dt><dd>${totals.not_found}</dd>
  <dt>Served</dt><dd>${formatBytes(totals.bytes)}</dd>
  <dt>Crawler views</dt><dd>${totals.crawler_views}</dd>
  <dt>Days</dt><dd>${stats.from} to ${stats.to}</dd>
</dl>
<svg class="chart" role="img" aria-labelledby="visits-chart-title" viewBox="0 0 ${days.length * DAY_WIDTH} ${CHART_HEIGHT}" preserveAspectRatio="none" width="100%" height="120">
  <title id="visits-chart-title">${chartLabel}</title>
  ${bars}
</svg>
${
  totals.pages.length > 0
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Top pages">
<table class="stack-table">
  <caption>Top pages</caption>
  <thead><tr><th scope="col">Page</th><th scope="col">Views</th></tr></thead>
  <tbody>${totals.pages.map((page) => html`<tr><th scope="row"><code>${page.path}</code></th><td data-label="Views">${page.count}</td></tr>`)}</tbody>
</table></div>`
    : html`<p>No page views in these days yet.</p>`
}
${
  totals.referrers.length > 0
    ? html`<div class="table-wrap" role="region" tabindex="0" aria-label="Top referrers">
<table class="stack-table">
  <caption>Where visitors came from</caption>
  <thead><tr><th scope="col">Site</th><th scope="col">Visits</th></tr></thead>
  <tbody>${totals.referrers.map((referrer) => html`<tr><th scope="row">${referrer.host}</th><td data-label="Visits">${referrer.count}</td></tr>`)}</tbody>
</table></div>`
    : ''
}`;
}

function views(count: number): string {
  return `${count} page ${count === 1 ? 'view' : 'views'}`;
}
