import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { hashPassword, hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, type TestAccount } from '../api/api-helpers.js';
import type { AppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/runtime/server.js';
import { useAppServer } from '../helpers/fixtures.js';
import { callApi, request, type TestResponse } from '../helpers/http.js';
import { INGEST_WORKER } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Attacks on protected sites (issue 23): every form, cookie, ticket and header of the site host's
 * gate is attacker input. The server's clock is the tests' own, so tickets can expire.
 */

let clock = Date.now();
let owner: TestAccount;
let viewer: TestAccount;
let outsider: TestAccount;
const PASSWORD = 'correct horse battery';
let counter = 0;

const host = (label: string): string => `${label}.sites.localhost:${server.port}`;
const visit = (label: string, path = '/', headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<TestResponse> =>
  request({ port: server.port, host: host(label), path, headers, method, body });
const basic = (password: string, user = 'anyone'): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const login = (label: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  visit(
    label,
    '/.plinth/login',
    { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${host(label)}`, ...headers },
    'POST',
    new URLSearchParams(fields).toString(),
  );
const cookieOf = (res: TestResponse): string => {
  const line = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0] ?? '';
  return line.split(';')[0]!;
};
const FILES = {
  'index.html': '<h1>secret home</h1>',
  'about.html': '<h1>secret about</h1>',
  'report-2026.pdf': '%PDF-1.4 secret',
  '404.html': '<h1>secret not found</h1>',
};

async function protectedSite(mode: 'password' | 'members', members: Array<[TestAccount, 'viewer' | 'editor' | 'owner']> = []) {
  const site = await accountSite(server.store, owner, members, { files: FILES });
  const set = await api(server, {
    method: 'PUT',
    path: `/v1/sites/${site.name}/access`,
    token: owner.token,
    body: mode === 'password' ? { mode, password: PASSWORD } : { mode },
  });
  expect(set.status).toBe(200);
  return site;
}

function expectNothingRevealed(res: TestResponse, status = 401): void {
  expect(res.status).toBe(status);
  expect(res.headers['cache-control']).toBe('private, no-store');
  expect(res.headers['x-robots-tag']).toBe('noindex');
  // The page repeats only the path the visitor asked for (to return to it): no content, no other file.
  // The sign-in link names the app's address; its port may contain the file's size as digits.
  const text = res.text.replace(/:\d{2,5}\b/g, ':PORT');
  for (const secret of ['secret', 'about.html', '404.html']) expect(text).not.toContain(secret);
  expect(text).not.toMatch(new RegExp(`\\b${FILES['report-2026.pdf'].length}\\b`));
}

const server = useAppServer(
  { PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '8', PLINTH_SITE_PASSWORD_TRIES_PER_SITE: '20', PLINTH_SITE_PASSWORD_HASHES: '0' },
  { now: () => clock },
);

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  viewer = await accountWithToken(server.store, 'builder');
  outsider = await accountWithToken(server.store, 'builder');
});

describe('setting the access', () => {
  it.each<[string, () => TestAccount | string, Record<string, unknown>, number]>([
    ['a viewer token', () => viewer, { mode: 'members' }, 403],
    ['a non-member token', () => outsider, { mode: 'members' }, 404],
    ['no token', () => '', { mode: 'members' }, 401],
    ['a short password', () => owner, { mode: 'password', password: 'short' }, 400],
    ['a password of 129 characters', () => owner, { mode: 'password', password: 'x'.repeat(129) }, 400],
    ['an unknown mode', () => owner, { mode: 'secret' }, 400],
    ['a password without password mode', () => owner, { mode: 'members', password: 'long enough' }, 400],
  ])('refuses %s', async (_label, who, body, status) => {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']]);
    const caller = who();
    const token = typeof caller === 'string' ? caller : caller.token;
    const res = await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, ...(token ? { token } : {}), body });
    expect(res.status).toBe(status);
    expect((await visit(site.name)).status).toBe(200);
  });

  it('keeps unclaimed sites public, telling the agent to claim first', async () => {
    const anon = await anonymousSite(server.store, clock + 72 * 3600_000);
    const res = await api(server, { method: 'PUT', path: `/v1/sites/${anon.name}/access`, token: anon.siteToken, body: { mode: 'members' } });
    expect(res.status).toBe(403);
    expect(res.json.agent_message).toMatch(/[Cc]laim/);
  });

  it('lets every member read the mode, and stores only a slow hash of the password', async () => {
    const site = await protectedSite('password', [[viewer, 'viewer']]);
    const read = await api(server, { path: `/v1/sites/${site.name}/access`, token: viewer.token });
    expect(read.json).toEqual({ access: { mode: 'password', previews: 'public' } });
    const record = server.store.getSite(site.name)!;
    expect(record.access?.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(JSON.stringify(record)).not.toContain(PASSWORD);
  });
});

describe('password sites', () => {
  it('answers 401 with a sign-in page and nothing of the site, for any path and method', async () => {
    const site = await protectedSite('password');
    for (const path of [
      '/',
      '/about',
      '/report-2026.pdf',
      '/missing.png',
      '/.plinth/login',
      '/%2e%2e/index.html',
      '/about/../report-2026.pdf',
      '//report-2026.pdf',
    ]) {
      const res = await visit(site.name, path);
      expectNothingRevealed(res);
      expect(res.text).toContain('Password required');
      if (!path.includes('report')) expect(res.text).not.toContain('report-2026');
    }
    expectNothingRevealed(await visit(site.name, '/report-2026.pdf', {}, 'HEAD'));
    expect((await visit(site.name, '/report-2026.pdf', {}, 'HEAD')).headers['content-length']).not.toBe(String(FILES['report-2026.pdf'].length));
    expect((await visit(site.name, '/', {}, 'DELETE')).status).toBe(405);
  });

  it('applies a byte range behind the password only while If-Range names the current file', async () => {
    const site = await protectedSite('password');
    const whole = await visit(site.name, '/report-2026.pdf', basic(PASSWORD));
    const etag = whole.headers.etag as string;
    const current = await visit(site.name, '/report-2026.pdf', { ...basic(PASSWORD), range: 'bytes=0-3', 'if-range': etag });
    expect(current.status).toBe(206);
    const stale = await visit(site.name, '/report-2026.pdf', { ...basic(PASSWORD), range: 'bytes=0-3', 'if-range': '"an-older-file"' });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(FILES['report-2026.pdf']);
  });

  it('serves the site for HTTP Basic with the password, privately', async () => {
    const site = await protectedSite('password');
    const res = await visit(site.name, '/about', basic(PASSWORD));
    expect(res.status).toBe(200);
    expect(res.text).toContain('secret about');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['x-robots-tag']).toBe('noindex');
    // The site's own 404 page shows once in.
    expect((await visit(site.name, '/nope.png', basic(PASSWORD))).text).toContain('secret not found');
    expectNothingRevealed(await visit(site.name, '/about', basic('wrong password')));
    expectNothingRevealed(await visit(site.name, '/about', { authorization: 'Basic !!!notbase64' }));
    expectNothingRevealed(await visit(site.name, '/about', { authorization: `Bearer ${outsider.token}` }));
  });

  it('challenges HTTP clients to send the password as Basic auth, but never a browser loading a page (which would open its own password dialog)', async () => {
    const site = await protectedSite('password');
    const challenge = `Basic realm="${site.name}", charset="UTF-8"`;
    // wget --user/--password, curl --anyauth, .NET and Java clients send the password once told to.
    for (const headers of [{}, { accept: '*/*' }, { accept: 'application/json' }, basic('wrong password')]) {
      const res = await visit(site.name, '/about', headers);
      expectNothingRevealed(res);
      expect(res.headers['www-authenticate'], JSON.stringify(headers)).toBe(challenge);
    }
    expect((await visit(site.name, '/about', {}, 'HEAD')).headers['www-authenticate']).toBe(challenge);
    // A browser marks its requests (Sec-Fetch-Mode), and older ones ask for HTML when they load a page.
    const browsers: Array<Record<string, string>> = [
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      { 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin', accept: '*/*' },
      { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-origin', accept: 'image/avif,image/webp,*/*' },
      { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
      { accept: 'text/html', ...basic('wrong password') },
    ];
    for (const headers of browsers) {
      const res = await visit(site.name, '/about', headers);
      expectNothingRevealed(res);
      expect(res.headers['www-authenticate'], JSON.stringify(headers)).toBeUndefined();
    }
    // A members-only site takes no password: its challenge stays Bearer (a member's API token).
    const members = await protectedSite('members');
    expect((await visit(members.name, '/about')).headers['www-authenticate']).toBe('Bearer');
  });

  it('signs in through the form with a cookie for that host only, and returns to a local path only', async () => {
    const site = await protectedSite('password');
    const wrong = await login(site.name, { password: 'not it at all', return: '/about' });
    expectNothingRevealed(wrong);
    expect(wrong.text).toContain('not right');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const ok = await login(site.name, { password: PASSWORD, return: '/about' });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/about');
    const line = ([] as string[]).concat(ok.headers['set-cookie'] ?? [])[0]!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Max-Age=604800/);
    expect(line).not.toMatch(/Domain=/i);
    const cookie = cookieOf(ok);
    const page = await visit(site.name, '/about', { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('secret about');

    for (const hostile of [
      '//evil.example/',
      'https://evil.example/',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      '/%0d%0aSet-Cookie:x=1'.replace('%0d%0a', '\r\n'),
    ]) {
      const res = await login(site.name, { password: PASSWORD, return: hostile });
      expect(res.status, hostile).toBe(303);
      expect(res.headers.location, hostile).toBe('/');
    }
  });

  it('refuses a cookie on any other host: another site, a preview address, a forged or altered one', async () => {
    const site = await protectedSite('password');
    const other = await protectedSite('password');
    const cookie = cookieOf(await login(site.name, { password: PASSWORD }));
    expectNothingRevealed(await visit(other.name, '/', { cookie }));
    expectNothingRevealed(await visit(`1--${site.name}`, '/', { cookie }));
    const [name, value] = cookie.split('=') as [string, string];
    const [account, expires, signature] = value.split('.') as [string, string, string];
    for (const forged of [
      `${name}=${account}.${Number(expires) + 86_400_000}.${signature}`,
      `${name}=acct_someone.${expires}.${signature}`,
      `${name}=${account}.${expires}.${signature.slice(0, -2)}AA`,
      `${name}=${account}.${expires}`,
      `${name}=`,
    ]) {
      expectNothingRevealed(await visit(site.name, '/', { cookie: forged }));
    }
  });

  it('lets in a visitor whose real cookie comes after planted ones of the same name', async () => {
    // On an http install any site host's script may set `plinth_access` for the whole site domain,
    // or for a longer path, and browsers send those first: the real cookie must still count.
    const site = await protectedSite('password');
    const other = await protectedSite('password');
    const real = cookieOf(await login(site.name, { password: PASSWORD }));
    const [name, value] = real.split('=') as [string, string];
    const otherCookie = cookieOf(await login(other.name, { password: PASSWORD }));
    for (const planted of [
      `${name}=junk`,
      `${name}=`,
      `${name}=-.${Date.now() + 86_400_000}.forged`,
      `${otherCookie}`,
      Array.from({ length: 5 }, (_, i) => `${name}=planted-${i}`).join('; '),
    ]) {
      const res = await visit(site.name, '/about', { cookie: `${planted}; ${name}=${value}` });
      expect(res.status, planted).toBe(200);
      expect(res.text).toContain('secret about');
    }
    // Planted ones alone open nothing.
    expectNothingRevealed(await visit(site.name, '/about', { cookie: `${name}=junk; ${otherCookie}` }));
  });

  it('signs everyone out when the password is set again, and expires cookies after 7 days', async () => {
    const site = await protectedSite('password');
    const cookie = cookieOf(await login(site.name, { password: PASSWORD }));
    expect((await visit(site.name, '/', { cookie })).status).toBe(200);
    clock += 1;
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'password', password: PASSWORD } });
    expectNothingRevealed(await visit(site.name, '/', { cookie }));
    const fresh = cookieOf(await login(site.name, { password: PASSWORD }));
    expect((await visit(site.name, '/', { cookie: fresh })).status).toBe(200);
    clock += 7 * 24 * 3600_000 + 1;
    expectNothingRevealed(await visit(site.name, '/', { cookie: fresh }));
  });

  it('refuses a form posted from another origin, without counting or checking it', async () => {
    const site = await protectedSite('password');
    const res = await login(site.name, { password: PASSWORD }, { origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
    const fromOtherSite = await login(site.name, { password: PASSWORD }, { origin: `http://other-site.sites.localhost:${server.port}` });
    expect(fromOtherSite.status).toBe(403);
  });

  it('answers 429 with Retry-After once a network has tried too many passwords, even for the right one', async () => {
    const site = await protectedSite('password');
    // Each unknown password counts once (8 per hour here); a known good one is not counted again.
    let refused: TestResponse | undefined;
    for (let i = 0; i < 12 && refused === undefined; i++) {
      const res = await visit(site.name, '/', basic(`guess-number-${i}-${++counter}`));
      if (res.status === 429) refused = res;
      else expectNothingRevealed(res);
    }
    expect(refused, 'no 429 after 12 guesses').toBeDefined();
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused!.text).not.toContain('secret');
    const right = await visit(site.name, '/', basic(`${PASSWORD}`, 'late'));
    expect(right.status).toBe(429);
    // The form is capped the same way.
    expect((await login(site.name, { password: 'another guess entirely' })).status).toBe(429);
    clock += 3600_000;
  });
});

/**
 * A request from another loopback address, so from another network (IPv4 /24) as the caps count
 * them: `127.0.<network>.1`. Linux answers every 127/8 address on the loopback interface.
 */
function visitFrom(
  network: number,
  label: string,
  path = '/',
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
  on: AppServer = server,
): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        localAddress: `127.0.${network}.1`,
        port: on.port,
        method,
        path,
        headers: { host: `${label}.sites.localhost:${on.port}`, connection: 'close', ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, text: bytes.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const loginFrom = (network: number, label: string, password: string) =>
  visitFrom(
    network,
    label,
    '/.plinth/login',
    { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${host(label)}` },
    'POST',
    new URLSearchParams({ password }).toString(),
  );
let networks = 10;

describe('password tries', () => {
  it('counts every try before checking it: past the cap the right password is 429 too, even one that opened the site before', async () => {
    const site = await protectedSite('password');
    const net = ++networks;
    // The right password, once: it opens the site and is remembered as good.
    expect((await visitFrom(net, site.name, '/', basic(PASSWORD))).status).toBe(200);
    const cookie = cookieOf(await loginFrom(net, site.name, PASSWORD));
    let wrong = 0;
    for (let i = 0; i < 12; i++) {
      const res = await visitFrom(net, site.name, '/', basic(`guess-${i}-${++counter}`));
      if (res.status === 429) break;
      expectNothingRevealed(res);
      wrong++;
    }
    expect(wrong).toBeGreaterThan(0);
    // Past the cap, no answer tells the right password from a wrong one.
    for (const attempt of [
      () => visitFrom(net, site.name, '/', basic(PASSWORD)),
      () => visitFrom(net, site.name, '/about', basic(PASSWORD, 'other-user')),
      () => visitFrom(net, site.name, '/report-2026.pdf', basic(PASSWORD), 'HEAD'),
      () => loginFrom(net, site.name, PASSWORD),
      () => visitFrom(net, site.name, '/', basic('a wrong one')),
    ]) {
      const res = await attempt();
      expectNothingRevealed(res, 429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    // A visitor already signed in keeps going.
    expect((await visitFrom(net, site.name, '/about', { cookie })).status).toBe(200);
  });

  it('does not use up the budget of a visitor who sends the right password with every request', async () => {
    const site = await protectedSite('password');
    const net = ++networks;
    for (let i = 0; i < 20; i++) {
      expect((await visitFrom(net, site.name, i % 2 ? '/about' : '/', basic(PASSWORD))).status).toBe(200);
      if (i % 5 === 0) expect((await loginFrom(net, site.name, PASSWORD)).status).toBe(303);
    }
    // The whole budget is still there: exactly 8 wrong tries are judged.
    let wrong = 0;
    while (wrong < 12 && (await visitFrom(net, site.name, '/', basic(`guess-${wrong}-${++counter}`))).status === 401) wrong++;
    expect(wrong).toBe(8);
  });

  it('lets no try slip past the cap when many are sent at once', async () => {
    const site = await protectedSite('password');
    const net = ++networks;
    expect((await visitFrom(net, site.name, '/', basic(PASSWORD))).status).toBe(200);
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => visitFrom(net, site.name, '/', basic(`burst-${i}-${++counter}`))),
      visitFrom(net, site.name, '/', basic(PASSWORD)),
    ]);
    const wrongJudged = answers.slice(0, 30).filter((res) => res.status === 401).length;
    expect(wrongJudged).toBeLessThanOrEqual(8);
    for (const res of answers) expect([200, 401, 429]).toContain(res.status);
    // Whatever the order was, the cap is full now, for the right password as well.
    while ((await visitFrom(net, site.name, '/', basic(`more-${++counter}`))).status === 401);
    expectNothingRevealed(await visitFrom(net, site.name, '/', basic(PASSWORD)), 429);
  });

  it('caps the tries on one site from all networks together (PLINTH_SITE_PASSWORD_TRIES_PER_SITE)', async () => {
    const site = await protectedSite('password');
    const other = await protectedSite('password');
    const first = networks + 1;
    networks += 6;
    // 5 networks × 4 wrong tries: each network is under its own cap of 8, the site reaches its 20.
    for (let n = 0; n < 5; n++) {
      for (let i = 0; i < 4; i++) expectNothingRevealed(await visitFrom(first + n, site.name, '/', basic(`spread-${n}-${i}-${++counter}`)));
    }
    for (const res of [
      await visitFrom(first + 5, site.name, '/', basic('one more guess')),
      await visitFrom(first + 5, site.name, '/', basic(PASSWORD)),
      await loginFrom(first + 5, site.name, PASSWORD),
    ]) {
      expectNothingRevealed(res, 429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Other sites keep their own budget; the networks still have theirs.
    expect((await visitFrom(first, other.name, '/', basic(PASSWORD))).status).toBe(200);
    expectNothingRevealed(await visitFrom(first, other.name, '/', basic('wrong for the other site')));
  });
});

describe('password hashing at once (PLINTH_SITE_PASSWORD_HASHES)', () => {
  const bounded = useAppServer({
    PLINTH_SITE_PASSWORD_HASHES: '1',
    PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '16',
    PLINTH_SITE_PASSWORD_TRIES_PER_SITE: '0',
  });

  it('answers 503 with Retry-After on the sign-in page, not a queue of scrypt runs, past the bound', async () => {
    const site = await accountSite(bounded.store, await accountWithToken(bounded.store, 'builder'), [], { files: FILES });
    await bounded.store.changeSiteAccess(site.id, { access: { mode: 'password', passwordHash: await hashPassword(PASSWORD), since: Date.now() } });
    const net = ++networks;
    const guess = (password: string, from = net) => visitFrom(from, site.name, '/about', basic(password), 'GET', undefined, bounded);
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => guess(`flood-${i}-${++counter}`)));
    const busy = answers.filter((res) => res.status === 503);
    expect(busy.length, answers.map((res) => res.status).join(' ')).toBeGreaterThan(0);
    expect(answers.filter((res) => res.status === 401).length).toBeGreaterThan(0);
    for (const res of answers) expect([401, 503]).toContain(res.status);
    for (const res of busy) {
      expectNothingRevealed(res, 503);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('Password required');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Tries beyond the bound count all the same: the 16 used the network's whole budget, so a
    // full bound never answers a password remembered as good for free.
    expect((await guess(PASSWORD, ++networks)).status).toBe(200);
    expectNothingRevealed(await guess(PASSWORD), 429);
    // The bound frees up as hashes finish.
    expectNothingRevealed(await guess('one more wrong', ++networks));
  });
});

describe('loads from other sites (Sec-Fetch-*)', () => {
  // Every site host shares the site domain: to a browser they are one site, and the access cookie
  // rides along with another site host's <script>, <img> or fetch. Only navigations get through.
  const FOREIGN: Array<[string, Record<string, string>]> = [
    ['a <script> on another site host', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' }],
    ['a <script> on another site', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' }],
    ['an <img>', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }],
    ['a style sheet', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'style' }],
    ['a fetch with credentials', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }],
    ['a no-cors fetch', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty' }],
    ['an <iframe>', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' }],
    ['an <object>', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'object' }],
    ['a frame of an older browser', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'nested-navigate' }],
    ['a worker', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'same-origin', 'sec-fetch-dest': 'worker' }],
    ['a media element', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'video' }],
    ['upper-case values', { 'sec-fetch-site': 'SAME-SITE', 'sec-fetch-mode': 'NO-CORS', 'sec-fetch-dest': 'SCRIPT' }],
  ];

  it.each(FOREIGN)('refuses %s alike, signed in or not, with any credential', async (_what, fetchHeaders) => {
    const site = await protectedSite('password', [[viewer, 'viewer']]);
    const cookie = cookieOf(await login(site.name, { password: PASSWORD }));
    const answers = await Promise.all(
      [{}, { cookie }, basic(PASSWORD), { authorization: `Bearer ${viewer.token}` }].map((credential) =>
        visit(site.name, '/report-2026.pdf', { ...fetchHeaders, ...credential }),
      ),
    );
    for (const res of answers) {
      expectNothingRevealed(res, 403);
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    // Nothing tells them apart.
    expect(new Set(answers.map((res) => res.text)).size).toBe(1);
    // Members-only sites and previews alike.
    const members = await protectedSite('members', [[viewer, 'viewer']]);
    expectNothingRevealed(await visit(members.name, '/', { ...fetchHeaders, authorization: `Bearer ${viewer.token}` }), 403);
    expectNothingRevealed(await visit(`1--${site.name}`, '/', { ...fetchHeaders, cookie }), 403);
  });

  it('lets navigations in, from anywhere, and loads of the site itself', async () => {
    const site = await protectedSite('password');
    const cookie = cookieOf(await login(site.name, { password: PASSWORD }));
    for (const fetchHeaders of [
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
      { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
      {},
    ] as Record<string, string>[]) {
      const res = await visit(site.name, '/about', { ...fetchHeaders, cookie });
      expect(res.status, JSON.stringify(fetchHeaders)).toBe(200);
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expectNothingRevealed(await visit(site.name, '/about', fetchHeaders));
    }
  });
});

describe('members-only sites', () => {
  it('lets member API tokens in as Bearer, whatever their role, and no one else', async () => {
    const site = await protectedSite('members', [[viewer, 'viewer']]);
    for (const token of [owner.token, viewer.token]) {
      const res = await visit(site.name, '/about', { authorization: `Bearer ${token}` });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
    for (const authorization of [
      `Bearer ${outsider.token}`,
      'Bearer pl_forged',
      'Bearer st_nope',
      'Bearer pla_oauth',
      basic(PASSWORD).authorization!,
      'Bearer',
    ]) {
      expectNothingRevealed(await visit(site.name, '/about', { authorization }));
    }
    const page = await visit(site.name, '/about');
    expectNothingRevealed(page);
    expect(page.text).toContain('Members only');
    expect(page.text).toContain(`${server.appUrl}/site-access?site=${site.name}&amp;return=%2Fabout`);
    // A password form is no way into a members site.
    expect((await login(site.name, { password: PASSWORD })).status).toBe(405);
  });

  it('takes a member through the app and back with a single-use ticket', async () => {
    const client = new AppClient(server);
    const email = `member-${++counter}@example.com`;
    await client.signIn(email);
    const member = server.store.getAccountByEmail(email)!;
    const site = await accountSite(server.store, owner, [], { files: FILES });
    await server.store.setMember(site.id, member.id, 'viewer');
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'members' } });

    // The site host's sign-in link leads to the app.
    const start = await visit(site.name, `/.plinth/login?return=${encodeURIComponent('/about')}`);
    expect(start.status).toBe(303);
    const hop = new URL(start.headers.location!);
    expect(hop.origin).toBe(server.appUrl);
    const page = await client.get(`${hop.pathname}${hop.search}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain(`form-action 'self' http://*.sites.localhost:${server.port}`);
    const issued = await client.post('/site-access', { site: site.name, return: '/about', csrf: await client.formToken(`${hop.pathname}${hop.search}`) });
    expect(issued.status).toBe(303);
    const ticketUrl = new URL(issued.headers.location!);
    expect(ticketUrl.host).toBe(host(site.name));
    expect(ticketUrl.pathname).toBe('/.plinth/ticket');

    const redeemed = await visit(site.name, `${ticketUrl.pathname}${ticketUrl.search}`);
    expect(redeemed.status).toBe(303);
    expect(redeemed.headers.location).toBe('/about');
    const cookie = cookieOf(redeemed);
    const about = await visit(site.name, '/about', { cookie });
    expect(about.status).toBe(200);
    expect(about.text).toContain('secret about');

    // Replayed: used up.
    const replay = await visit(site.name, `${ticketUrl.pathname}${ticketUrl.search}`);
    expectNothingRevealed(replay);
    expect(replay.text).toContain('expired or was already used');
    expect(replay.headers['set-cookie']).toBeUndefined();

    // Removed from the site: the cookie stops working.
    await server.store.removeMember(site.id, member.id);
    expectNothingRevealed(await visit(site.name, '/about', { cookie }));
  });

  it('refuses a ticket for another site, another address of the site, an expired one and a made-up one', async () => {
    const site = await protectedSite('members', [[viewer, 'viewer']]);
    const other = await protectedSite('members', [[viewer, 'viewer']]);
    await commitFiles(server.store, site.name, { 'index.html': '<h1>secret two</h1>' });
    const ticket = async (label: string, expiresIn = 60_000): Promise<string> => {
      const value = `tk_${(++counter).toString(36).padStart(30, 'x')}`;
      await server.store.createAccessTicket(hashToken(value), { siteId: site.id, accountId: viewer.account.id, host: label, expiresAt: clock + expiresIn });
      return value;
    };
    expectNothingRevealed(await visit(other.name, `/.plinth/ticket?ticket=${await ticket(site.name)}`));
    expectNothingRevealed(await visit(`2--${site.name}`, `/.plinth/ticket?ticket=${await ticket(site.name)}`));
    const late = await ticket(site.name, 1000);
    clock += 1001;
    expectNothingRevealed(await visit(site.name, `/.plinth/ticket?ticket=${late}`));
    expectNothingRevealed(await visit(site.name, '/.plinth/ticket?ticket=tk_madeupmadeupmadeupmadeup'));
    expectNothingRevealed(await visit(site.name, '/.plinth/ticket'));
    // A ticket made for the preview address works there, and the cookie it sets works only there.
    const preview = await visit(`2--${site.name}`, `/.plinth/ticket?ticket=${await ticket(`2--${site.name}`)}&return=//evil.example`);
    expect(preview.status).toBe(303);
    expect(preview.headers.location).toBe('/');
    const cookie = cookieOf(preview);
    const seen = await visit(`2--${site.name}`, '/', { cookie });
    expect(seen.status).toBe(200);
    expect(seen.text).toContain('secret two');
    expectNothingRevealed(await visit(site.name, '/', { cookie }));
  });

  it('looks a ticket up read-only first: a made-up one, or one shown at another address, takes no write and is not used up', async () => {
    const site = await protectedSite('members', [[viewer, 'viewer']]);
    const other = await protectedSite('members', [[viewer, 'viewer']]);
    const value = `tk_${(++counter).toString(36).padStart(30, 'r')}`;
    await server.store.createAccessTicket(hashToken(value), { siteId: site.id, accountId: viewer.account.id, host: site.name, expiresAt: clock + 60_000 });
    const uses = vi.spyOn(server.store, 'useAccessTicket');
    try {
      for (const [label, ticket] of [
        [site.name, 'tk_madeupmadeupmadeupmadeup'],
        [site.name, `tk_${'x'.repeat(40)}`],
        [other.name, value],
        [`1--${site.name}`, value],
      ] as const) {
        expectNothingRevealed(await visit(label, `/.plinth/ticket?ticket=${ticket}`));
      }
      expect(uses).not.toHaveBeenCalled();
      // Still good where it was made for, once.
      const redeemed = await visit(site.name, `/.plinth/ticket?ticket=${value}`);
      expect(redeemed.status).toBe(303);
      expect(uses).toHaveBeenCalledTimes(1);
      expectNothingRevealed(await visit(site.name, `/.plinth/ticket?ticket=${value}`));
      expect(uses).toHaveBeenCalledTimes(1);
    } finally {
      uses.mockRestore();
    }
  });

  it('shows a non-member nothing in the app, and issues no ticket', async () => {
    const site = await protectedSite('members');
    const client = new AppClient(server);
    await client.signIn(`stranger-${++counter}@example.com`);
    const page = await client.get(`/site-access?site=${site.name}`);
    expect(page.status).toBe(403);
    const post = await client.post('/site-access', { site: site.name, csrf: await client.formToken('/') });
    expect(post.status).toBe(403);
    expect(post.headers.location).toBeUndefined();
  });
});

describe('previews of protected sites', () => {
  it('follow the access mode', async () => {
    const site = await protectedSite('password');
    expectNothingRevealed(await visit(`1--${site.name}`, '/about'));
    const res = await visit(`1--${site.name}`, '/about', basic(PASSWORD));
    expect(res.status).toBe(200);
    expect(res.headers['x-robots-tag']).toBe('noindex');
    expect(res.headers['cache-control']).toBe('private, no-store');
  });
});

describe('previews of a public site kept to members, and preview links', () => {
  /** A public site with revisions 1 (live), 2 and 3 (drafts), previews kept to members. */
  async function keptSite() {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']], { files: FILES });
    await commitDraft(site.name, { 'index.html': '<h1>secret draft two</h1>' });
    await commitDraft(site.name, { 'index.html': '<h1>secret draft three</h1>' });
    const set = await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { previews: 'members' } });
    expect(set.status).toBe(200);
    expect(set.json.access).toEqual({ mode: 'public', previews: 'members' });
    return site;
  }
  async function commitDraft(name: string, files: Record<string, string>): Promise<void> {
    const site = server.store.getSite(name)!;
    const entries = new Map();
    for (const [path, content] of Object.entries(files))
      entries.set(path, await server.store.blobs.putFile(Buffer.from(content), 'text/html; charset=utf-8', { compress: false }));
    const result = await server.store.commitRevision({
      site: name,
      baseRevision: site.liveRevision!,
      files: entries,
      kind: 'deploy',
      createdBy: 'test',
      publish: false,
    });
    expect(result.ok).toBe(true);
  }
  /** The preview links the revision listing gives a member, by revision number. */
  async function links(name: string, token = viewer.token): Promise<Map<number, URL>> {
    const listed = await api(server, { path: `/v1/sites/${name}/revisions`, token });
    expect(listed.status).toBe(200);
    return new Map(listed.json.revisions.map((r: { number: number; preview_url: string }) => [r.number, new URL(r.preview_url)]));
  }
  const exchange = (label: string, link: URL, headers: Record<string, string> = {}) => visit(label, `${link.pathname}${link.search}`, headers);

  it('answers a preview like a members-only site for every path, while the live address stays public', async () => {
    const site = await keptSite();
    expect((await visit(site.name, '/about')).text).toContain('secret about');
    for (const label of [`1--${site.name}`, `2--${site.name}`, `3--${site.name}`]) {
      for (const path of ['/', '/about', '/report-2026.pdf', '/missing', '/%2e%2e/index.html', '/.plinth/share', '/.plinth/share?token=']) {
        const res = await visit(label, path);
        expectNothingRevealed(res);
        expect(res.text).not.toContain('draft');
      }
    }
    const page = await visit(`2--${site.name}`, '/about');
    expect(page.text).toContain('Members only');
    expect(page.text).toContain(`${server.appUrl}/site-access?site=${site.name}&amp;preview=2&amp;return=%2Fabout`);
    // Member API tokens open it as Bearer; no other credential does.
    const asMember = await visit(`2--${site.name}`, '/', { authorization: `Bearer ${viewer.token}` });
    expect(asMember.status).toBe(200);
    expect(asMember.text).toContain('secret draft two');
    expect(asMember.headers['cache-control']).toBe('private, no-store');
    for (const authorization of [`Bearer ${outsider.token}`, basic(PASSWORD).authorization!, 'Bearer st_nope']) {
      expectNothingRevealed(await visit(`2--${site.name}`, '/', { authorization }));
    }
  });

  it('opens one preview with its link, with a cookie of that host only, and goes to the clean address', async () => {
    const site = await keptSite();
    const link = (await links(site.name)).get(2)!;
    expect(link.host).toBe(host(`2--${site.name}`));
    expect(link.pathname).toBe('/.plinth/share');
    const opened = await exchange(`2--${site.name}`, link);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/');
    expect(opened.headers['cache-control']).toBe('private, no-store');
    expect(opened.headers['referrer-policy']).toBe('same-origin');
    const line = ([] as string[]).concat(opened.headers['set-cookie'] ?? [])[0]!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).not.toMatch(/Domain=/i);
    const cookie = cookieOf(opened);
    expect(cookie).not.toContain(link.searchParams.get('token')!);
    const seen = await visit(`2--${site.name}`, '/', { cookie });
    expect(seen.status).toBe(200);
    expect(seen.text).toContain('secret draft two');
    // The cookie is bound to that preview's host: not another preview, not another site's preview.
    expectNothingRevealed(await visit(`3--${site.name}`, '/', { cookie }));
    expectNothingRevealed(await visit(`1--${site.name}`, '/', { cookie }));
    const other = await keptSite();
    expectNothingRevealed(await visit(`2--${other.name}`, '/', { cookie }));
  });

  it('refuses a link on any other preview or site, altered, or forged, and sets no cookie', async () => {
    const site = await keptSite();
    const other = await keptSite();
    const mine = await links(site.name);
    const theirs = await links(other.name);
    const two = mine.get(2)!;
    const token = two.searchParams.get('token')!;
    const [prefix, expires, signature] = token.split('.') as [string, string, string];
    const attempts: Array<[string, string]> = [
      [`3--${site.name}`, `/.plinth/share?token=${token}`],
      [`1--${site.name}`, `/.plinth/share?token=${token}`],
      [`2--${other.name}`, `/.plinth/share?token=${token}`],
      [`2--${site.name}`, `/.plinth/share?token=${theirs.get(2)!.searchParams.get('token')}`],
      [`2--${site.name}`, `/.plinth/share?token=${mine.get(3)!.searchParams.get('token')}`],
      [`2--${site.name}`, `/.plinth/share?token=${prefix}.${(parseInt(expires, 36) + 86_400_000).toString(36)}.${signature}`],
      [`2--${site.name}`, `/.plinth/share?token=${prefix}.${expires}.${signature.slice(0, -2)}AA`],
      [`2--${site.name}`, `/.plinth/share?token=${prefix}.${expires}`],
      [`2--${site.name}`, `/.plinth/share?token=pv2.${expires}.${signature}`],
      [`2--${site.name}`, `/.plinth/share?token=${token}x`],
      [`2--${site.name}`, `/.plinth/share?token=`],
      [`2--${site.name}`, `/.plinth/share?ticket=${token}`],
      [`2--${site.name}`, `/.plinth/ticket?ticket=${token}`],
      [`2--${site.name}`, `/?token=${token}`],
    ];
    for (const [label, path] of attempts) {
      const res = await visit(label, path);
      expectNothingRevealed(res);
      expect(res.headers['set-cookie'], `${label}${path}`).toBeUndefined();
      // A refused link is not repeated back (its return path is `return`, never the link itself).
      if (path.startsWith('/.plinth/share')) expect(res.text).not.toContain(signature);
    }
    // A link's cookie cannot pass for a member's, nor open the live site's protection later on.
    const cookie = cookieOf(await exchange(`2--${site.name}`, two));
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'members' } });
    expectNothingRevealed(await visit(site.name, '/', { cookie }));
    expectNothingRevealed(await visit(`2--${site.name}`, '/', { cookie }));
    // A link sends a visitor back to a local path only.
    await api(server, { method: 'PUT', path: `/v1/sites/${other.name}/access`, token: owner.token, body: { mode: 'public' } });
    const back = await visit(`2--${other.name}`, `/.plinth/share?token=${theirs.get(2)!.searchParams.get('token')}&return=//evil.example`);
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe('/');
  });

  it('stops a link when it expires, when the setting is turned off and on, and when the revision is deleted', async () => {
    const site = await keptSite();
    let two = (await links(site.name)).get(2)!;
    const cookie = cookieOf(await exchange(`2--${site.name}`, two));
    expect((await visit(`2--${site.name}`, '/', { cookie })).status).toBe(200);

    // Asking for what is already on keeps links and cookies good.
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { previews: 'members' } });
    expect((await visit(`2--${site.name}`, '/', { cookie })).status).toBe(200);
    // Off: previews are public again. On again: every earlier link and cookie is void.
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { previews: 'public' } });
    expect((await visit(`2--${site.name}`)).status).toBe(200);
    clock += 1;
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { previews: 'members' } });
    expectNothingRevealed(await visit(`2--${site.name}`, '/', { cookie }));
    const stale = await exchange(`2--${site.name}`, two);
    expectNothingRevealed(stale);
    expect(stale.text).toContain('preview link has expired or no longer works');

    // A fresh link works until its 7 days are over, and so does its cookie.
    two = (await links(site.name)).get(2)!;
    const fresh = cookieOf(await exchange(`2--${site.name}`, two));
    expect((await visit(`2--${site.name}`, '/', { cookie: fresh })).status).toBe(200);
    clock += 7 * 24 * 3600_000 + 1;
    expectNothingRevealed(await visit(`2--${site.name}`, '/', { cookie: fresh }));
    expectNothingRevealed(await exchange(`2--${site.name}`, two));

    // Deleted: the link opens nothing, and a cookie from it meets 410.
    const three = (await links(site.name, owner.token)).get(3)!;
    const threeCookie = cookieOf(await exchange(`3--${site.name}`, three));
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/3`, token: owner.token })).status).toBe(200);
    expectNothingRevealed(await exchange(`3--${site.name}`, three));
    const gone = await visit(`3--${site.name}`, '/', { cookie: threeCookie });
    expect(gone.status).toBe(410);
    expect(gone.text).not.toContain('secret draft three');
  });

  it('takes a member through the app to a kept preview, with a ticket for that preview', async () => {
    const site = await keptSite();
    const client = new AppClient(server);
    const email = `member-${++counter}@example.com`;
    await client.signIn(email);
    await server.store.setMember(site.id, server.store.getAccountByEmail(email)!.id, 'viewer');
    const start = await visit(`2--${site.name}`, `/.plinth/login?return=${encodeURIComponent('/about')}`);
    expect(start.status).toBe(303);
    const hop = new URL(start.headers.location!);
    const page = await client.get(`${hop.pathname}${hop.search}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`2--${site.name}`);
    const issued = await client.post('/site-access', {
      site: site.name,
      preview: '2',
      return: '/about',
      csrf: await client.formToken(`${hop.pathname}${hop.search}`),
    });
    const ticketUrl = new URL(issued.headers.location!);
    expect(ticketUrl.host).toBe(host(`2--${site.name}`));
    const cookie = cookieOf(await visit(`2--${site.name}`, `${ticketUrl.pathname}${ticketUrl.search}`));
    const about = await visit(`2--${site.name}`, '/about', { cookie });
    expect(about.status).toBe(200);
    expectNothingRevealed(await visit(`3--${site.name}`, '/about', { cookie }));
  });

  it('leaves the previews of a protected site behind its own access, and keeps unclaimed sites public', async () => {
    const site = await protectedSite('password');
    const set = await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { previews: 'members' } });
    expect(set.json.access).toEqual({ mode: 'password', previews: 'members' });
    // The password still opens the previews; the listing hands out plain addresses, no links.
    expect((await visit(`1--${site.name}`, '/about', basic(PASSWORD))).status).toBe(200);
    const listed = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(listed.json.revisions[0].preview_url).toBe(`http://1--${site.name}.sites.localhost:${server.port}`);

    const anon = await anonymousSite(server.store, clock + 72 * 3600_000);
    const refused = await api(server, { method: 'PUT', path: `/v1/sites/${anon.name}/access`, token: anon.siteToken, body: { previews: 'members' } });
    expect(refused.status).toBe(403);
    for (const body of [{ previews: 'secret' }, { previews: true }, {}, { previews: 'members', password: 'long enough' }]) {
      expect((await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: viewer.token, body: { previews: 'public' } })).status).toBe(404);
  });
});

describe('preview links in the logs', () => {
  it('never writes a preview link’s token to the log, at any level', async () => {
    const lines: string[] = [];
    const dataDir = tempDir();
    const config = loadConfig({
      PLINTH_PORT: '0',
      PLINTH_THREADS: '1',
      PLINTH_DATA_DIR: dataDir,
      PLINTH_LISTEN_HOST: '127.0.0.1',
      PLINTH_LOG_LEVEL: 'debug',
      PLINTH_INGEST_THREADS: '1',
    });
    const logged = await startServer({
      config,
      log: createLogger({ level: 'debug', write: (line) => void lines.push(line) }),
      ingestWorkerFile: INGEST_WORKER,
    });
    try {
      const person = await accountWithToken(logged.store, 'builder');
      const site = await accountSite(logged.store, person);
      const call = (method: string, path: string, body?: unknown) =>
        callApi(logged.port, { method, path, token: person.token, ...(body === undefined ? {} : { body }) });
      expect((await call('PUT', `/v1/sites/${site.name}/access`, { previews: 'members' })).status).toBe(200);
      const draft = await call('POST', '/v1/deploy', {
        site: site.name,
        base_revision: site.revision,
        publish: false,
        files: [{ path: 'index.html', content: 'draft' }],
      });
      expect(draft.status).toBe(201);
      const link = new URL(draft.json.revision.preview_url);
      const token = link.searchParams.get('token')!;
      expect(token).toMatch(/^pv1\./);
      const label = `2--${site.name}`;
      const go = (path: string) => request({ port: logged.port, host: `${label}.sites.localhost`, path });
      expect((await go(`${link.pathname}${link.search}`)).status).toBe(303);
      expect((await go(`/.plinth/share?token=${token}x`)).status).toBe(401);
      expect((await go(`/.plinth/share?token=${token}&return=/about`)).status).toBe(303);
      expect((await call('GET', `/v1/sites/${site.name}/revisions`)).status).toBe(200);
      expect((await call('DELETE', `/v1/sites/${site.name}/revisions/2`)).status).toBe(200);
      expect((await go(`${link.pathname}${link.search}`)).status).toBe(401);
      expect(lines.length).toBeGreaterThan(0);
      const signature = token.split('.')[2]!;
      for (const line of lines) {
        expect(line).not.toContain(signature);
        expect(line).not.toContain(signature.slice(0, 16));
      }
    } finally {
      await logged.close();
    }
  });
});
