import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, api, unique, type TestAccount } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request, type TestResponse } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * Shared caches in front of a protected site (nginx `proxy_cache`, a CDN) must never keep one of
 * its answers: whatever the site's `_headers` say, deployed before or after it turned private,
 * every answer is `private, no-store`, `noindex`, varies by the credential and is
 * `Cross-Origin-Resource-Policy: same-origin`. A site's cache instructions to CDNs
 * (`CDN-Cache-Control` and kin, `Expires`, `Edge-Control`…) are left out.
 */

let owner: TestAccount;
const PASSWORD = 'correct horse battery';
const basic = (password: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`visitor:${password}`).toString('base64')}` });

// Everything a site could say to keep its files in shared caches, written while it was public.
const HOSTILE_HEADERS = `/*
  Cache-Control: public, max-age=31536000, immutable
  Expires: Thu, 01 Jan 2099 00:00:00 GMT
  Pragma: public
  CDN-Cache-Control: public, max-age=31536000
  Cloudflare-CDN-Cache-Control: public, max-age=31536000
  Vercel-CDN-Cache-Control: max-age=31536000
  Netlify-CDN-Cache-Control: public, max-age=31536000, durable
  Edge-Control: !no-store, cache-maxage=365d
  Netlify-Vary: query
  Cache-Tag: private-files
  Vary: Origin
  Cross-Origin-Resource-Policy: cross-origin
  X-Robots-Tag: all
  X-Frame-Options: DENY
/assets/*
  ! X-Robots-Tag
  Cache-Control: s-maxage=31536000
`;
const CACHE_INSTRUCTIONS = [
  'expires',
  'pragma',
  'cdn-cache-control',
  'cloudflare-cdn-cache-control',
  'vercel-cdn-cache-control',
  'netlify-cdn-cache-control',
  'edge-control',
  'netlify-vary',
  'cache-tag',
  'surrogate-control',
  'x-accel-expires',
];

function expectPrivate(res: TestResponse, what: string): void {
  expect(res.headers['cache-control'], what).toBe('private, no-store');
  expect(res.headers['x-robots-tag'], what).toBe('noindex');
  const vary = String(res.headers.vary ?? '')
    .toLowerCase()
    .split(',')
    .map((name) => name.trim());
  expect(vary, what).toContain('cookie');
  expect(vary, what).toContain('authorization');
  for (const name of CACHE_INSTRUCTIONS) expect(res.headers[name], `${what}: ${name}`).toBeUndefined();
  // No other origin may embed it, whatever the site's own _headers say.
  expect(res.headers['cross-origin-resource-policy'], what).toBe('same-origin');
}

const domain = `${unique('private')}.example.org`;
let site: string;

const server = useTestServer({ PLINTH_STREAM_THRESHOLD_KB: '16', PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '0', PLINTH_SITE_PASSWORD_TRIES_PER_SITE: '0' });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  const deployed = await deployTo(server.port, {
    token: owner.token,
    contentType: 'application/json',
    body: jsonDeployBody([
      ['index.html', '<h1>private home</h1>'],
      ['about.html', '<h1>private about</h1>'],
      ['404.html', '<h1>private not found</h1>'],
      ['docs/index.html', '<h1>private docs</h1>'],
      ['assets/app.js', `window.PRIVATE_CFG = ${JSON.stringify({ key: 'x'.repeat(400) })};`],
      ['assets/big.bin', Buffer.alloc(40 * 1024, 7)],
      ['_redirects', '/old /about 301\n/gone /about 410\n'],
      ['_headers', HOSTILE_HEADERS],
    ]),
  });
  expect(deployed.status, deployed.text).toBe(201);
  site = deployed.json.site.name;
  // Public first: the site's own headers apply (the rules are allowed), then it turns private.
  const before = await request({ port: server.port, host: `${site}.sites.localhost`, path: '/assets/app.js' });
  expect(before.headers['cache-control']).toContain('public, max-age=31536000');
  const set = await api(server, { method: 'PUT', path: `/v1/sites/${site}/access`, token: owner.token, body: { mode: 'password', password: PASSWORD } });
  expect(set.status).toBe(200);
  const id = server.store.getSite(site)!.id;
  const added = await server.store.addDomain({ domain, siteId: id, token: 'plinth-verify=x', maxPerSite: 10 });
  if (!added.ok) throw new Error(added.reason);
  await server.store.updateDomain(domain, added.record.claim, { status: 'active', verifiedAt: Date.now() });
});

describe('every answer of a protected site stays out of shared caches', () => {
  const cases: Array<[string, string, string, Record<string, string>?, string?]> = [
    ['the home page', 'site', '/'],
    ['a page', 'site', '/about'],
    ['a script', 'site', '/assets/app.js'],
    ['HEAD of a script', 'site', '/assets/app.js', {}, 'HEAD'],
    ['a byte range', 'site', '/assets/app.js', { range: 'bytes=0-5' }],
    ['a range outside the file', 'site', '/assets/app.js', { range: 'bytes=99999-' }],
    ['a streamed file', 'site', '/assets/big.bin'],
    ['a range of a streamed file', 'site', '/assets/big.bin', { range: 'bytes=10-20' }],
    ['a missing file (the site 404 page)', 'site', '/missing.png'],
    ['a _redirects redirect', 'site', '/old'],
    ['a page _redirects marks gone', 'site', '/gone'],
    ['a folder without its slash', 'site', '/docs'],
    ['a bad path', 'site', '/a%00b'],
    ['a POST', 'site', '/', {}, 'POST'],
    ['a preview', 'preview', '/about'],
    ['a preview script', 'preview', '/assets/app.js'],
    ['the custom domain', 'domain', '/about'],
    ['a script at the custom domain', 'domain', '/assets/app.js'],
    ['the sign-in page', 'site', '/.plinth/login'],
  ];
  const hostOf = (where: string): string => (where === 'site' ? `${site}.sites.localhost` : where === 'preview' ? `1--${site}.sites.localhost` : domain);

  it.each(cases)('%s, with and without the password', async (what, where, path, headers = {}, method = 'GET') => {
    for (const credential of [{}, basic(PASSWORD)]) {
      const res = await request({ port: server.port, host: hostOf(where), path, method, headers: { ...headers, ...credential } });
      const label = `${what} (${'authorization' in credential ? 'signed in' : 'no credential'}): ${res.status}`;
      expect(res.status, label).not.toBe(500);
      expectPrivate(res, label);
      // The site's other headers still apply where it has them.
      if (res.status === 200 && where !== 'domain') expect(res.headers['x-frame-options'], label).toBe('DENY');
    }
  });

  it('a 304 for a file revalidated with its ETag', async () => {
    const full = await request({ port: server.port, host: hostOf('site'), path: '/assets/app.js', headers: basic(PASSWORD) });
    expect(full.status).toBe(200);
    expect(full.text).toContain('PRIVATE_CFG');
    const again = await request({
      port: server.port,
      host: hostOf('site'),
      path: '/assets/app.js',
      headers: { ...basic(PASSWORD), 'if-none-match': String(full.headers.etag) },
    });
    expect(again.status).toBe(304);
    expectPrivate(again, '304');
  });

  it('a signed-in visitor through the form, and the wrong password', async () => {
    const form = (password: string) =>
      request({
        port: server.port,
        host: hostOf('site'),
        path: '/.plinth/login',
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${hostOf('site')}` },
        body: new URLSearchParams({ password, return: '/about' }).toString(),
      });
    const wrong = await form('not the password');
    expect(wrong.status).toBe(401);
    expectPrivate(wrong, 'wrong password');
    const right = await form(PASSWORD);
    expect(right.status).toBe(303);
    expectPrivate(right, 'sign-in redirect');
    const cookie = String(([] as string[]).concat(right.headers['set-cookie'] ?? [])[0]).split(';')[0]!;
    const page = await request({ port: server.port, host: hostOf('site'), path: '/assets/app.js', headers: { cookie } });
    expect(page.status).toBe(200);
    expectPrivate(page, 'with the cookie');
  });

  it('a page with the badge (Free plan)', async () => {
    const free = await accountWithToken(server.store, 'free');
    const deployed = await deployTo(server.port, {
      token: free.token,
      contentType: 'application/json',
      body: jsonDeployBody([
        ['index.html', '<!doctype html><body><h1>private free</h1></body>'],
        ['_headers', HOSTILE_HEADERS],
      ]),
    });
    expect(deployed.status, deployed.text).toBe(201);
    const name = deployed.json.site.name as string;
    await api(server, { method: 'PUT', path: `/v1/sites/${name}/access`, token: free.token, body: { mode: 'password', password: PASSWORD } });
    for (const method of ['GET', 'HEAD']) {
      const res = await request({ port: server.port, host: `${name}.sites.localhost`, path: '/', method, headers: basic(PASSWORD) });
      expect(res.status).toBe(200);
      if (method === 'GET') expect(res.text).toContain('data-plinth-badge');
      expectPrivate(res, `badged ${method}`);
    }
  });

  it('the redirects between its addresses (www to apex, and its own address to its primary domain)', async () => {
    const id = server.store.getSite(site)!.id;
    const apex = `${unique('apex')}.example.org`;
    for (const name of [apex, `www.${apex}`]) {
      const added = await server.store.addDomain({ domain: name, siteId: id, token: 'plinth-verify=x', maxPerSite: 10 });
      if (!added.ok) throw new Error(added.reason);
      await server.store.updateDomain(name, added.record.claim, { status: 'active', verifiedAt: Date.now() });
    }
    await server.store.setPrimaryDomain(id, apex, true, true);
    for (const [host, path] of [
      [`www.${apex}`, '/about'],
      [`${site}.sites.localhost`, '/assets/app.js'],
    ] as const) {
      const res = await request({ port: server.port, host, path });
      expect(res.status, host).toBe(301);
      expect(res.headers.location).toBe(`http://${apex}${path}`);
      expectPrivate(res, `redirect from ${host}`);
    }
  });
});
