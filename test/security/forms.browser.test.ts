import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localReturnPath } from '../../src/rules/index.js';
import { api } from '../api/api-helpers.js';
import { mailTo, openPage, startAppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { useAppServer, useBrowser } from '../helpers/fixtures.js';

/**
 * Attacks through the app's forms and links, from outside: cross-site posts, where `?next=` may
 * send a person after sign-in, text an attacker puts in a link, and hostile form input.
 */

let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

const server = useAppServer();

async function tokenNames(client: AppClient): Promise<string[]> {
  const page = await client.get('/tokens');
  return [...page.text.matchAll(/<th scope="row">([^<]*)<\/th>/g)].map((m) => m[1]!);
}

/**
 * `?next=` values that try to leave the app host, each with what must come out: undefined
 * (dropped, so the person lands on `/`) or the local path kept.
 */
const HOSTILE_NEXT: Array<[string, string | undefined]> = [
  ['//evil.example/x', undefined],
  ['///evil.example', undefined],
  ['////evil.example', undefined],
  ['/\\evil.example', undefined],
  ['/\\/evil.example', undefined],
  ['\\/evil.example', undefined],
  ['\\\\evil.example', undefined],
  ['/.//evil.example', undefined],
  ['/..//evil.example', undefined],
  ['/%2e//evil.example', undefined],
  ['/%2E//evil.example', undefined],
  ['/%2e%2e//evil.example', undefined],
  ['/.%2e//evil.example', undefined],
  ['/a/..//evil.example', undefined],
  ['/a/b/../..//evil.example', undefined],
  ['/a/%2e%2e//evil.example', undefined],
  ['/././/evil.example', undefined],
  ['/./\\evil.example', undefined],
  ['/\t/evil.example', undefined],
  ['/\n/evil.example', undefined],
  ['/\r/evil.example', undefined],
  ['/ /evil.example', undefined],
  ['/\u0000/evil.example', undefined],
  ['/\u00a0/evil.example', undefined],
  ['/\u3000/evil.example', undefined],
  ['/\ufeff/evil.example', undefined],
  ['/\u2028/evil.example', undefined],
  ['/a\nLocation: x', undefined],
  ['https://evil.example/', undefined],
  ['http:evil.example', undefined],
  ['http:/evil.example', undefined],
  ['HTTPS://evil.example', undefined],
  ['javascript:alert(1)', undefined],
  ['JaVaScRiPt:alert(1)', undefined],
  [' javascript:alert(1)', undefined],
  ['data:text/html,<script>alert(1)</script>', undefined],
  ['evil.example', undefined],
  ['@evil.example', undefined],
  ['%2f%2fevil.example', undefined],
  ['', undefined],
  [`/${'a'.repeat(3000)}`, undefined],
  // Local paths stay, encoded as the URL parser encodes them.
  ['/claim/ct_abc', '/claim/ct_abc'],
  ['/sites/my-site?tab=members', '/sites/my-site?tab=members'],
  ['/oauth/authorize?client_id=x&state=y', '/oauth/authorize?client_id=x&state=y'],
  ['/', '/'],
  ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
  ['/%5Cevil.example', '/%5Cevil.example'],
  ['/@evil.example', '/@evil.example'],
  ['/javascript:alert(1)', '/javascript:alert(1)'],
  ['/a/../b', '/b'],
  ['/\uff0f/evil.example', '/%EF%BC%8F/evil.example'],
  ['/#//evil.example', '/'],
  ['/?x=//evil.example', '/?x=//evil.example'],
];

/** Where a browser goes with this `Location` from the app: it must stay on the app host. */
function staysOnApp(location: string | undefined, appUrl: string): boolean {
  if (location === undefined) return false;
  return new URL(location, `${appUrl}/login`).origin === new URL(appUrl).origin && /^\/(?![/\\])/.test(location);
}

describe('where ?next= may send a person', () => {
  it.each(HOSTILE_NEXT)('localReturnPath(%j) → %j', (raw, expected) => {
    expect(localReturnPath(raw)).toBe(expected);
  });

  it.each(HOSTILE_NEXT.filter(([raw]) => raw.length < 100))('a signed-in person sent to /login?next=%j stays on the app host', async (raw) => {
    const client = signedIn ?? (signedIn = await signedInClient());
    const res = await client.get(`/login?next=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(303);
    expect(staysOnApp(res.headers.location as string | undefined, server.appUrl), String(res.headers.location)).toBe(true);
  });

  it.each(['/.//evil.example/x', '/%2e//evil.example', '/a/..//evil.example', '//evil.example', '/\\evil.example'])(
    'after signing in by the e-mailed link with next=%j, the person lands on the app host',
    async (next) => {
      const client = new AppClient(server);
      const { token } = await client.startSignIn(email('next'), { next });
      const done = await client.post('/login/verify', { token, csrf: await client.formToken(`/login/verify?token=${token}`) });
      expect(done.status).toBe(303);
      expect(staysOnApp(done.headers.location as string | undefined, server.appUrl), String(done.headers.location)).toBe(true);
    },
  );

  describe('in Chromium', () => {
    let trap: Server;
    let trapHits = 0;
    let trapHost = '';
    beforeAll(async () => {
      // Stands for the attacker's site: a loopback address that is not the app host.
      trap = createServer((_req, res) => {
        trapHits++;
        res.end('trapped');
      });
      await new Promise<void>((resolve) => trap.listen(0, '127.0.0.2', resolve));
      trapHost = `127.0.0.2:${(trap.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => trap.close(() => resolve())));
    const browser = useBrowser();

    it('follows none of the hostile forms off the app host', async () => {
      const { context, page } = await openPage(browser);
      const client = signedIn ?? (signedIn = await signedInClient());
      await context.addCookies([{ name: 'plinth_session', value: client.session()!, url: server.appUrl }]);
      for (const form of ['/.//HOST/x', '/..//HOST/x', '/%2e//HOST/x', '/a/..//HOST/x', '/\\HOST/x', '//HOST/x', '/\t/HOST/x']) {
        await page.goto(`${server.appUrl}/login?next=${encodeURIComponent(form.replace('HOST', trapHost))}`);
        expect(new URL(page.url()).origin, form).toBe(new URL(server.appUrl).origin);
      }
      expect(trapHits).toBe(0);
      await context.close();
    });
  });
});

let signedIn: AppClient | undefined;
async function signedInClient(): Promise<AppClient> {
  const client = new AppClient(server);
  await client.signIn(email('next-signed-in'));
  return client;
}

describe('text from the URL is never shown as a notice from Plinth', () => {
  const SPOOF = 'Your account is suspended call 555-0100';

  it.each([
    ['/sites/{site}?notice=invited&email={spoof}'],
    ['/sites/{site}?notice=member_removed&email={spoof}'],
    ['/sites/{site}?notice=invite_revoked&email={spoof}'],
    ['/sites/{site}?notice=renamed&from={spoof}'],
    ['/sites/{site}?notice=rolled_back&from={spoof}&number={spoof}'],
    ['/sites/{site}?notice=joined&role={spoof}'],
    ['/?notice=declined&site={spoof}'],
    ['/tokens?notice=revoked'],
    ['/tokens?notice=disconnected'],
    ['/sites/{site}?notice=claimed'],
    ['/login?signed_out=1'],
  ])('%s shows no notice', async (template) => {
    const client = new AppClient(server);
    await client.signIn(email('notice'));
    const created = await client.post('/tokens', { name: 'deployer', csrf: await client.formToken('/tokens') });
    expect(created.status).toBe(303);
    const token = /<code class="token" id="new-token">([^<]+)<\/code>/.exec((await client.get('/tokens')).text)![1]!;
    const site = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
    const path = template.replace('{site}', site.json.site.name).replaceAll('{spoof}', encodeURIComponent(SPOOF));
    const page = template.startsWith('/login') ? await new AppClient(server).get(path) : await client.get(path);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('role="status"');
    expect(page.text).not.toContain(SPOOF);
  });

  it.each([
    ['/report/{site}?sent=1&id={spoof}', 200],
    ['/report/{site}/sent?id={spoof}', 200],
    ['/report/{spoof}', 404],
    ['/sites/{site}/members/remove?email={spoof}&confirm=x', 404],
  ])('%s shows none of the text in the address', async (template, status) => {
    const client = new AppClient(server);
    await client.signIn(email('echo'));
    await client.post('/tokens', { name: 'deployer', csrf: await client.formToken('/tokens') });
    const token = /<code class="token" id="new-token">([^<]+)<\/code>/.exec((await client.get('/tokens')).text)![1]!;
    const site = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
    const path = template.replace('{site}', site.json.site.name).replaceAll('{spoof}', encodeURIComponent(SPOOF));
    const page = await client.get(path);
    expect(page.status).toBe(status);
    expect(page.text).not.toContain(SPOOF);
    expect(page.text).not.toContain(encodeURIComponent(SPOOF));
  });

  it('a notice set by a form is shown once, on the next page only, and only to its session', async () => {
    const owner = new AppClient(server);
    await owner.signIn(email('owner'));
    await owner.post('/tokens', { name: 'deployer', csrf: await owner.formToken('/tokens') });
    const token = /<code class="token" id="new-token">([^<]+)<\/code>/.exec((await owner.get('/tokens')).text)![1]!;
    const site = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
    const name = site.json.site.name as string;
    const invitee = email('invitee');
    const sent = await owner.post(`/sites/${name}/invites`, { email: invitee, role: 'editor', csrf: await owner.formToken(`/sites/${name}`) });
    expect(sent.status).toBe(303);
    expect(sent.headers.location).toBe(`/sites/${name}`);
    const flash = [...owner.cookies].find(([cookie]) => cookie.endsWith('plinth_flash'));
    expect(flash).toBeDefined();

    // Another signed-in browser holding the same flash cookie sees nothing.
    const other = new AppClient(server);
    await other.signIn(email('other'));
    other.cookies.set(flash![0], flash![1]);
    expect((await other.get('/')).text).not.toContain('invitation');

    const shown = await owner.get(`/sites/${name}`);
    expect(shown.text).toContain(`An invitation was e-mailed to ${invitee}.`);
    const again = await owner.get(`/sites/${name}`);
    expect(again.text).not.toContain('An invitation was e-mailed');
  });

  it('a forged flash cookie shows nothing', async () => {
    const client = new AppClient(server);
    await client.signIn(email('forged'));
    for (const value of ['x', 'a.b.c', `${Buffer.from('{"notice":"spoof"}').toString('base64url')}..`]) {
      client.cookies.set('plinth_flash', value);
      const page = await client.get('/');
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('role="status"');
    }
  });
});

describe('cross-site requests', () => {
  it('refuses a POST from another origin, even with a valid form token', async () => {
    const client = new AppClient(server);
    await client.signIn(email('csrf'));
    const csrf = await client.formToken('/tokens');
    for (const origin of ['http://evil.example', `http://x.sites.localhost:${server.port}`, 'null']) {
      const res = await client.post('/tokens', { name: 'sneaky', csrf }, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.text).toContain('sent from another site');
    }
    // A Referer from elsewhere (no Origin) is refused too.
    const viaReferer = await client.post('/tokens', { name: 'sneaky', csrf }, { origin: '', referer: 'http://evil.example/page' });
    expect(viaReferer.status).toBe(403);
    expect(await tokenNames(client)).toEqual([]);
  });

  it('refuses a POST without the form token, or with another session’s', async () => {
    const victim = new AppClient(server);
    await victim.signIn(email('victim'));
    const attacker = new AppClient(server);
    await attacker.signIn(email('attacker'));
    const attackersToken = await attacker.formToken('/tokens');

    expect((await victim.post('/tokens', { name: 'x' })).status).toBe(403);
    expect((await victim.post('/tokens', { name: 'x', csrf: attackersToken })).status).toBe(403);
    expect((await victim.post('/tokens', { name: 'x', csrf: 'garbage' })).status).toBe(403);
    expect(await tokenNames(victim)).toEqual([]);

    const ok = await victim.post('/tokens', { name: 'mine', csrf: await victim.formToken('/tokens') });
    expect(ok.status).toBe(303);
    expect(await tokenNames(victim)).toEqual(['mine']);
  });

  it('never changes state on GET', async () => {
    const client = new AppClient(server);
    await client.signIn(email('get'));
    const res = await client.get('/tokens?name=x');
    expect(res.status).toBe(200);
    for (const path of ['/logout', '/tokens/tok_x/revoke', '/claim/ct_x', '/approve/ap_x', '/invites/inv_x/accept']) {
      const answer = await client.get(path);
      expect([200, 404, 405], path).toContain(answer.status);
    }
    expect((await client.get('/')).status).toBe(200); // still signed in
  });
});

describe('hostile input', () => {
  it('renders names and texts inert', async () => {
    const client = new AppClient(server);
    await client.signIn(email('hostile'));
    const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&';
    await client.post('/tokens', { name: hostile, csrf: await client.formToken('/tokens') });
    const page = await client.get('/tokens');
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;');
  });

  it('refuses a hostile site name in a report and escapes report text in the operator e-mail', async () => {
    const withAbuse = await startAppServer({ PLINTH_ABUSE_EMAIL: 'abuse@example.com' });
    try {
      const deploy = await api(withAbuse, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
      const client = new AppClient(withAbuse);
      const missing = await client.post('/report/%3Cscript%3E', { reason: 'spam', csrf: await client.formToken('/report/x-site') });
      expect(missing.status).toBe(404);
      expect(missing.text).not.toContain('<script>');
      const details = '<a href="javascript:alert(1)">click</a>';
      const sent = await client.post(`/report/${deploy.json.site.name}`, {
        reason: 'other',
        details,
        csrf: await client.formToken(`/report/${deploy.json.site.name}`),
      });
      expect(sent.status).toBe(303);
      const notice = await mailTo(withAbuse, 'abuse@example.com');
      expect(notice.html).toContain('&lt;a href=&quot;javascript:alert(1)&quot;&gt;click&lt;/a&gt;');
      expect(notice.html).not.toContain('<a href="javascript:');
    } finally {
      await withAbuse.close();
    }
  });
});

describe('headers', () => {
  it('every page carries the security headers; signed-in pages are never cached', async () => {
    const client = new AppClient(server);
    const signedOut = await client.get('/login');
    expect(signedOut.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(signedOut.headers['content-security-policy']).toContain("script-src 'self'");
    expect(signedOut.headers['referrer-policy']).toBe('same-origin');
    expect(signedOut.headers['x-content-type-options']).toBe('nosniff');
    await client.signIn(email('headers'));
    for (const path of ['/', '/tokens', '/billing', '/nope']) {
      const res = await client.get(path);
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.headers['content-security-policy'], path).toBeDefined();
    }
    expect((await client.get('/nope')).status).toBe(404);
  });
});
