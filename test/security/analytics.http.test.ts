import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppClient } from '../app/http-client.js';
import { useAppServer } from '../helpers/fixtures.js';
import { request, type TestResponse } from '../helpers/http.js';
import { storeFiles } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Analytics against visitors who are not what they say (docs/analytics.md): counting adds nothing
 * to a page and sets no cookie, the data directory holds no address or user agent, hostile paths
 * and referrers are bounded and shown escaped, and a flood of distinct paths keeps a bounded
 * number of rows while every view still counts.
 */

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const PAGE = '<!doctype html><html><head><title>Home</title></head><body><h1>Home</h1></body></html>';

// The server trusts one proxy hop, so X-Forwarded-For names the visitor as a proxy would.
const server = useAppServer({ PLINTH_ANALYTICS_FLUSH_MS: '100', PLINTH_TRUST_PROXY: '1', PLINTH_ANALYTICS_ITEMS_PER_DAY: '5' });

async function ownSite(client: AppClient, email: string, name: string, plan: 'builder' | 'free' = 'builder'): Promise<void> {
  await client.signIn(email);
  const account = server.store.getAccountByEmail(email)!;
  const result = await server.store.commitRevision({
    site: name,
    create: { name, plan, claimed: true, accountId: account.id },
    baseRevision: null,
    files: await storeFiles(server.store, { 'index.html': PAGE }),
    kind: 'deploy',
    createdBy: email,
  });
  expect(result.ok).toBe(true);
}

function browse(name: string, path: string, address: string | string[], headers: Record<string, string> = {}): Promise<TestResponse> {
  return request({ port: server.port, host: `${name}.sites.localhost`, path, headers: { 'user-agent': FIREFOX, 'x-forwarded-for': address, ...headers } });
}

/** The analytics of `name` as the app's site page builds them, once `page_views` reached `views`. */
async function countedTotals(name: string, views: number): Promise<any> {
  const store = server.store;
  const site = store.getSite(name)!;
  let totals: { pageViews: number } | undefined;
  const done = await waitUntil(
    async () => {
      const days = await store.readAnalytics(site.id, '2000-01-01', '2999-12-31');
      totals = { pageViews: days.reduce((sum, day) => sum + day.pageViews, 0) };
      return totals.pageViews >= views;
    },
    10_000,
    50,
  );
  expect(done, JSON.stringify(totals)).toBe(true);
  return (await store.readAnalytics(site.id, '2000-01-01', '2999-12-31'))[0];
}

describe('analytics and privacy', () => {
  it('adds no script and no cookie to a page, and keeps no address or user agent anywhere in the data directory', async () => {
    const client = new AppClient(server);
    await ownSite(client, 'private-count@example.com', 'private-count');
    const userAgent = `${FIREFOX} Unmistakable/4.2.1`;
    const res = await browse('private-count', '/', '203.0.113.201', {
      'user-agent': userAgent,
      referer: 'https://referrer.example.com/some/path?q=secret-query',
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe(PAGE);
    expect(res.headers['set-cookie']).toBeUndefined();
    const day = await countedTotals('private-count', 1);
    expect(day).toMatchObject({ pageViews: 1, visitors: 1, referrers: [['referrer.example.com', 1]] });

    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((entry) => {
        const path = join(dir, entry);
        return statSync(path).isDirectory() ? files(path) : [path];
      });
    const stored = files(server.dataDir)
      .map((path) => readFileSync(path).toString('latin1'))
      .join('\n');
    expect(stored).toContain('referrer.example.com');
    for (const secret of ['203.0.113.201', '203.0.113.0/24', '203.0.113', 'Unmistakable/4.2.1', 'secret-query', '/some/path']) {
      expect(stored, secret).not.toContain(secret);
    }
  });

  it('keeps a bounded number of distinct pages per day while every view counts', async () => {
    const client = new AppClient(server);
    await ownSite(client, 'flooded@example.com', 'flooded-site');
    // Paths without an extension serve index.html (SPEC 4.5): every one is a page view.
    for (let i = 0; i < 12; i++) expect((await browse('flooded-site', `/p${i}`, `198.51.100.${i}`)).status).toBe(200);
    const day = await countedTotals('flooded-site', 12);
    expect(day.pageViews).toBe(12);
    expect(day.visitors).toBe(1);
    expect(day.pages).toHaveLength(5);
  });

  it('counts a visitor as the network the proxy saw, whatever X-Forwarded-For lines the visitor wrote', async () => {
    const client = new AppClient(server);
    await ownSite(client, 'spoofed@example.com', 'spoofed-site');
    // A proxy that adds a line of its own (HAProxy) after the visitor's: one real visitor who
    // writes a new address each time is one visitor; two who write the same one are two.
    for (let i = 0; i < 4; i++) expect((await browse('spoofed-site', '/', [`203.0.${i}.7`, '198.51.100.9'])).status).toBe(200);
    expect((await browse('spoofed-site', '/', ['203.0.0.7', '192.0.2.9'])).status).toBe(200);
    const day = await countedTotals('spoofed-site', 5);
    expect(day.pageViews).toBe(5);
    expect(day.visitors).toBe(2);
  });

  it.each([
    ['javascript:alert(1)', undefined],
    ['//evil.example/', undefined],
    ['data:text/html,hi', undefined],
    ['HTTPS://User:pw@WWW.Evil.Example:8443/path?x', 'evil.example'],
    ['http://[2001:db8::1]:8080/', '[2001:db8::1]'],
    [`https://${'a'.repeat(300)}.example/`, undefined],
  ])('counts the referrer %s as %s', async (referer, host) => {
    const client = new AppClient(server);
    const name = `ref-${Math.random().toString(36).slice(2, 10)}`;
    await ownSite(client, `${name}@example.com`, name);
    await browse(name, '/', '192.0.2.1', { referer });
    const day = await countedTotals(name, 1);
    expect(day.referrers).toEqual(host === undefined ? [] : [[host, 1]]);
  });

  it('shows counted paths and referrers escaped on the site page, in an inline chart with no script', async () => {
    const client = new AppClient(server);
    await ownSite(client, 'escaped@example.com', 'escaped-site');
    // Node sends < > and quotes in a path as they are; a browser would percent-encode them.
    expect((await browse('escaped-site', '/"<script>alert(1)</script>', '192.0.2.7', { referer: 'https://<b>bold</b>.example/' })).status).toBe(200);
    await browse('escaped-site', '/', '192.0.2.8');
    await countedTotals('escaped-site', 2);
    const page = await client.get('/sites/escaped-site');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2 id="visits">Visits</h2>');
    expect(page.text).toContain('<code>/&quot;&lt;script&gt;alert(1)&lt;/script&gt;</code>');
    expect(page.text).not.toMatch(/<b>bold/);
    const chart = /<svg class="chart"[\s\S]*?<\/svg>/.exec(page.text)?.[0];
    expect(chart).toBeDefined();
    // One bar per day of the default range; the last has both views, of one visitor (one network, one browser).
    expect(chart!.match(/<rect /g)).toHaveLength(30);
    expect(chart, chart).toMatch(/<title>\d{4}-\d{2}-\d{2}: 2 page views, 1 visitor<\/title><\/rect>\s*<\/svg>$/);
    // The chart is markup alone; the page's only scripts are the app's own files (progressive enhancement).
    expect(chart).not.toMatch(/<script|\son[a-z]+=|\sstyle=|href=/i);
    expect((page.text.match(/<script[^>]*>/g) ?? []).filter((tag) => !/^<script src="\/[^"]+\.js" defer>$/.test(tag))).toEqual([]);
    expect(page.text).not.toMatch(/\sstyle=/);
  });
});
