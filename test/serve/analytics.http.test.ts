import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../src/rules/index.js';
import { accountSite, accountWithToken, anonymousSite, api, type TestAccount } from '../api/api-helpers.js';
import { request, type TestResponse } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Analytics counted by the server (docs/analytics.md): real requests from distinct clients, read
 * back through GET /v1/sites/<name>/analytics with every number checked. The server trusts one
 * proxy hop here, so X-Forwarded-For names each client's address, as a proxy in front would.
 */

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

let server: TestServer;
let owner: TestAccount;
let viewer: TestAccount;
let stranger: TestAccount;

beforeAll(async () => {
  server = await startTestServer({ PLINTH_ANALYTICS_FLUSH_MS: '100', PLINTH_TRUST_PROXY: '1' });
  owner = await accountWithToken(server.store, 'builder');
  viewer = await accountWithToken(server.store, 'builder');
  stranger = await accountWithToken(server.store, 'builder');
});

afterAll(async () => {
  await server?.close();
});

const FILES = {
  'index.html': '<!doctype html><html><head><title>Home</title><link rel="stylesheet" href="/style.css"></head><body><h1>Home</h1></body></html>',
  'about.html': '<!doctype html><html><head><title>About</title></head><body><h1>About us</h1></body></html>',
  'style.css': 'body { font-family: sans-serif; }',
};

/** A GET (or HEAD) of a site's page as a browser at `address` with `userAgent` would send it. */
function browse(
  name: string,
  path: string,
  client: { address: string; userAgent: string },
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<TestResponse> {
  return request({
    port: server.port,
    host: `${name}.sites.localhost`,
    path,
    method,
    headers: { 'user-agent': client.userAgent, 'x-forwarded-for': client.address, ...headers },
  });
}

const analytics = (name: string, token: string, query = '') => api(server, { path: `/v1/sites/${name}/analytics${query}`, token });

/** Polls the analytics until today's page views reach `views` (flushes run every 100 ms). */
async function todayOnceCounted(name: string, views: number, token = owner.token): Promise<any> {
  let answer: any;
  const counted = await waitUntil(
    async () => {
      answer = (await analytics(name, token)).json;
      return answer?.totals?.page_views + answer?.totals?.crawler_views >= views;
    },
    10_000,
    50,
  );
  expect(counted, JSON.stringify(answer?.totals)).toBe(true);
  return answer;
}

describe('counting visits', () => {
  it('counts page views, distinct visitors, 404s, bytes, top pages and referrers exactly, crawlers apart', async () => {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']], { files: FILES });
    const alice = { address: '203.0.113.5', userAgent: FIREFOX };
    // The same browser on another address of the same network is the same visitor.
    const aliceAgain = { address: '203.0.113.77', userAgent: FIREFOX };
    const bob = { address: '198.51.100.7', userAgent: CHROME };
    const crawler = { address: '66.249.66.1', userAgent: GOOGLEBOT };
    let bytes = 0;
    const sent = (res: TestResponse, status: number): TestResponse => {
      expect(res.status).toBe(status);
      bytes += res.body.length;
      return res;
    };

    const home = sent(await browse(site.name, '/', alice, { referer: 'https://www.example.org/a/post?x=1' }), 200);
    sent(await browse(site.name, '/about', alice), 200);
    sent(await browse(site.name, '/style.css', alice, { referer: `http://${site.name}.sites.localhost/` }), 200);
    // A 404 counts as not found; Plinth's own status page is not the site's bytes.
    expect((await browse(site.name, '/missing.png', alice)).status).toBe(404);
    sent(await browse(site.name, '/', bob, { referer: 'https://news.example.net/' }), 200);
    // A page answered 304 is a page view too, with no bytes.
    sent(await browse(site.name, '/', bob, { 'if-none-match': String(home.headers.etag) }), 304);
    sent(await browse(site.name, '/about', aliceAgain, { referer: `http://${site.name}.sites.localhost/` }), 200);
    sent(await browse(site.name, '/', crawler), 200);
    // Not counted: HEAD, and previews (a revision's own address).
    expect((await browse(site.name, '/', bob, {}, 'HEAD')).status).toBe(200);

    const answer = await todayOnceCounted(site.name, 6);
    const today = utcDay(Date.now());
    const counted = {
      page_views: 5,
      visitors: 2,
      not_found: 1,
      bytes,
      crawler_views: 1,
      pages: [
        { path: '/', count: 3 },
        { path: '/about', count: 2 },
      ],
      referrers: [
        { host: 'example.org', count: 1 },
        { host: 'news.example.net', count: 1 },
      ],
    };
    expect(answer.site).toBe(site.name);
    expect(answer.to).toBe(today);
    expect(answer.days).toHaveLength(30);
    expect(answer.days.at(-1)).toEqual({ day: today, ...counted });
    expect(answer.totals).toEqual(counted);
    expect(answer.days.slice(0, -1).every((day: any) => day.page_views === 0 && day.bytes === 0)).toBe(true);

    // Further visits add to the day: a returning visitor is not counted twice.
    await browse(site.name, '/about', bob);
    await browse(site.name, '/', { address: '192.0.2.10', userAgent: CHROME });
    // No user agent at all: a crawler's view.
    expect((await request({ port: server.port, host: `${site.name}.sites.localhost`, path: '/about' })).status).toBe(200);
    const later = await todayOnceCounted(site.name, 9);
    expect(later.totals).toMatchObject({ page_views: 7, visitors: 3, not_found: 1, crawler_views: 2 });
    expect(later.totals.pages).toEqual([
      { path: '/', count: 4 },
      { path: '/about', count: 3 },
    ]);
  });
});

describe('counting visits of protected sites', () => {
  it("counts a password site's visitor who came in with Basic auth like a public site's, referrer included", async () => {
    const site = await accountSite(server.store, owner, [], { files: FILES });
    const set = await api(server, {
      method: 'PUT',
      path: `/v1/sites/${site.name}/access`,
      token: owner.token,
      body: { mode: 'password', password: 'correct horse' },
    });
    expect(set.status).toBe(200);
    const basic = { authorization: `Basic ${Buffer.from('any:correct horse').toString('base64')}` };
    const alice = { address: '203.0.113.5', userAgent: FIREFOX };
    // Refused without the password: not a view.
    expect((await browse(site.name, '/', alice, { referer: 'https://news.example.net/' })).status).toBe(401);
    const page = await browse(site.name, '/', alice, { ...basic, referer: 'https://news.example.net/story' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Home');
    const answer = await todayOnceCounted(site.name, 1);
    expect(answer.totals).toMatchObject({
      page_views: 1,
      visitors: 1,
      crawler_views: 0,
      pages: [{ path: '/', count: 1 }],
      referrers: [{ host: 'news.example.net', count: 1 }],
    });
  });

  it("counts a members-only site's visitor who came in with a member's API token, referrer included", async () => {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']], { files: FILES });
    const set = await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'members' } });
    expect(set.status).toBe(200);
    const bob = { address: '198.51.100.7', userAgent: CHROME };
    const page = await browse(site.name, '/about', bob, { authorization: `Bearer ${viewer.token}`, referer: 'https://www.example.org/' });
    expect(page.status).toBe(200);
    const answer = await todayOnceCounted(site.name, 1);
    expect(answer.totals).toMatchObject({ page_views: 1, visitors: 1, crawler_views: 0, referrers: [{ host: 'example.org', count: 1 }] });
  });
});

describe('referrers from the site itself', () => {
  it("leaves out the site's verified custom domains and their www names, as its own address", async () => {
    const site = await accountSite(server.store, owner, [], { files: FILES });
    const suffix = Date.now().toString(36);
    const [apex, www, pending] = [`shop-${suffix}.example.org`, `www.blog-${suffix}.example.net`, `soon-${suffix}.example.com`];
    for (const [domain, status] of [
      [apex, 'active'],
      [www, 'active'],
      [pending, 'pending'],
    ] as const) {
      const added = await server.store.addDomain({ domain, siteId: site.id, token: 'plinth-verify=x', maxPerSite: 10 });
      expect(added.ok).toBe(true);
      if (added.ok && status === 'active') await server.store.updateDomain(domain, added.record.claim, { status, verifiedAt: Date.now() });
    }
    const alice = { address: '203.0.113.5', userAgent: FIREFOX };
    for (const referer of [
      `https://${apex}/`,
      `https://www.${apex}/about`,
      `https://${www}/`,
      `http://${site.name}.sites.localhost/`,
      // Not the site's: a claim not verified, another name, elsewhere.
      `https://${pending}/`,
      `https://blog-${suffix}.example.net/`,
      'https://news.example.net/',
    ]) {
      expect((await browse(site.name, '/', alice, { referer })).status).toBe(200);
    }
    const answer = await todayOnceCounted(site.name, 7);
    expect(answer.totals.page_views).toBe(7);
    expect(answer.totals.referrers).toEqual([
      { host: `blog-${suffix}.example.net`, count: 1 },
      { host: 'news.example.net', count: 1 },
      { host: pending, count: 1 },
    ]);
  });
});

describe('reading analytics', () => {
  it('answers members and the site token of an anonymous site, and nobody else', async () => {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']], { files: FILES });
    expect((await analytics(site.name, viewer.token)).status).toBe(200);
    expect((await analytics(site.name, stranger.token)).json.error.code).toBe('not_found');
    expect((await api(server, { path: `/v1/sites/${site.name}/analytics` })).status).toBe(401);

    const anonymous = await anonymousSite(server.store, Date.now() + 3600_000, FILES);
    await browse(anonymous.name, '/', { address: '203.0.113.9', userAgent: CHROME });
    const answer = await todayOnceCounted(anonymous.name, 1, anonymous.siteToken);
    expect(answer.totals).toMatchObject({ page_views: 1, visitors: 1 });
    // An anonymous site keeps its three days of life.
    expect(answer.days).toHaveLength(3);
  });

  it.each([
    ['?from=2026-13-01', '"from" must be a date'],
    ['?to=yesterday', '"to" must be a date'],
    ['?from=2026-02-30', '"from" must be a date'],
    ['?from=2026-05-02&to=2026-05-01', 'is after "to"'],
    ['?from=2020-01-01&to=2026-01-01', 'at most 731 days'],
    [`?from=${utcDay(Date.now() + 2 * 86_400_000)}`, 'after today'],
  ])('refuses %s with 400 bad_request', async (query, words) => {
    const site = await accountSite(server.store, owner, [], { files: FILES });
    const res = await analytics(site.name, owner.token, query);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
    expect(res.json.error.message).toContain(words);
    expect(res.json.agent_message).toMatch(/YYYY-MM-DD/);
  });

  it('answers the days asked for, starting no earlier than the plan keeps them', async () => {
    const site = await accountSite(server.store, owner, [], { files: FILES, plan: 'free' });
    const today = utcDay(Date.now());
    const week = await analytics(site.name, owner.token, `?from=2020-01-01&to=${today}`);
    expect(week.status).toBe(400);
    const asked = await analytics(site.name, owner.token, `?from=${utcDay(Date.now() - 60 * 86_400_000)}`);
    expect(asked.status).toBe(200);
    // Free keeps seven days.
    expect(asked.json.days).toHaveLength(7);
    expect(asked.json.from).toBe(utcDay(Date.now() - 6 * 86_400_000));
    const one = await analytics(site.name, owner.token, `?from=${today}&to=${today}`);
    expect(one.json.days.map((day: any) => day.day)).toEqual([today]);
  });
});
