import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../api/api-helpers.js';
import { countMailTo, linkIn, mailTo, startAppServer, type AppServer } from './browser.js';
import { AppClient } from './http-client.js';

/** The app's security rules from outside, over HTTP, on a server whose clock the tests move. */

const DAY = 24 * 3600_000;
let clock = Date.now();
let server: AppServer;
let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

beforeAll(async () => {
  server = await startAppServer({}, () => clock);
});
afterAll(async () => {
  await server?.close();
});

async function tokenNames(client: AppClient): Promise<string[]> {
  const page = await client.get('/tokens');
  return [...page.text.matchAll(/<th scope="row">([^<]*)<\/th>/g)].map((m) => m[1]!);
}

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

describe('sessions', () => {
  it('cookies are HttpOnly, SameSite=Lax and host-only (never sent to the site domain)', async () => {
    const client = new AppClient(server);
    const before = countMailTo(server, 'cookies@example.com');
    await client.post('/login', { email: 'cookies@example.com', csrf: await client.formToken('/login') });
    const link = linkIn(await mailTo(server, 'cookies@example.com', { after: before }), `${server.appUrl}/login/verify?token=`);
    const token = new URL(link).searchParams.get('token')!;
    const csrf = await client.formToken(`/login/verify?token=${token}`);
    const res = await client.post('/login/verify', { token, csrf });
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    const session = cookies.find((c) => c.startsWith('plinth_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).not.toMatch(/Domain=/i);
    expect(session).toMatch(/Max-Age=2592000/);
  });

  it('a session planted before sign-in is not the one after it (no fixation)', async () => {
    const attacker = new AppClient(server);
    const planted = await attacker.signIn(email('planter'));
    // The victim asks for a link elsewhere and opens it in the browser holding the planted cookie.
    const address = email('fixated');
    const phone = new AppClient(server);
    const before = countMailTo(server, address);
    await phone.post('/login', { email: address, csrf: await phone.formToken('/login') });
    const token = new URL(linkIn(await mailTo(server, address, { after: before }), `${server.appUrl}/login/verify?token=`)).searchParams.get('token')!;
    const victim = new AppClient(server);
    victim.cookies.set('plinth_session', planted);
    const done = await victim.post('/login/verify', { token, csrf: await victim.formToken(`/login/verify?token=${token}`) });
    expect(done.status).toBe(303);
    const own = victim.session();
    expect(own).toMatch(/^ses_/);
    expect(own).not.toBe(planted);
    // The planted session was ended by the new sign-in, so the attacker is signed out too.
    expect((await attacker.get('/')).headers.location).toBe('/login');
    const page = await victim.get('/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('fixated-');
  });

  it('sign-out ends the session on the server', async () => {
    const client = new AppClient(server);
    const session = await client.signIn(email('out'));
    const out = await client.post('/logout', { csrf: await client.formToken('/') });
    expect(out.status).toBe(303);
    const replay = new AppClient(server);
    replay.cookies.set('plinth_session', session);
    expect((await replay.get('/')).headers.location).toBe('/login');
  });

  it('slides for 30 days of use and expires after 30 idle days', async () => {
    const client = new AppClient(server);
    await client.signIn(email('slide'));
    clock += 20 * DAY;
    expect((await client.get('/')).status).toBe(200);
    clock += 20 * DAY; // 40 days after sign-in, 20 after last use
    expect((await client.get('/')).status).toBe(200);
    clock += 31 * DAY;
    const expired = await client.get('/tokens');
    expect(expired.status).toBe(303);
    expect(expired.headers.location).toBe('/login?next=%2Ftokens');
  });
});

describe('sign-in links and codes', () => {
  async function start(client: AppClient, address: string): Promise<{ token: string; code: string }> {
    const before = countMailTo(server, address);
    await client.post('/login', { email: address, csrf: await client.formToken('/login') });
    const mail = await mailTo(server, address, { after: before });
    const token = new URL(linkIn(mail, `${server.appUrl}/login/verify?token=`)).searchParams.get('token')!;
    const code = /code on the sign-in page: (\d{6})/.exec(mail.text ?? '')![1]!;
    return { token, code };
  }

  it('a link works once', async () => {
    const client = new AppClient(server);
    const { token } = await start(client, email('once'));
    const csrf = await client.formToken(`/login/verify?token=${token}`);
    expect((await client.post('/login/verify', { token, csrf })).status).toBe(303);
    const again = new AppClient(server);
    const page = await again.get(`/login/verify?token=${token}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('This sign-in link does not work');
    const post = await again.post('/login/verify', { token, csrf: await again.formToken('/login') });
    expect(post.status).toBe(400);
    expect(again.session()).toBeUndefined();
  });

  it('a link expires after 15 minutes', async () => {
    const client = new AppClient(server);
    const { token } = await start(client, email('late'));
    clock += 15 * 60_000 + 1;
    const page = await client.get(`/login/verify?token=${token}`);
    expect(page.status).toBe(400);
    const post = await client.post('/login/verify', { token, csrf: await client.formToken('/login') });
    expect(post.status).toBe(400);
    expect(post.text).toContain('expired');
    expect(client.session()).toBeUndefined();
  });

  it('the code signs in the browser that asked; five wrong codes lock it', async () => {
    const client = new AppClient(server);
    const { code } = await start(client, email('code'));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let attempt = 1; attempt <= 4; attempt++) {
      const res = await client.post('/login/code', { code: wrong, csrf: await client.formToken('/login/check') });
      expect(res.status).toBe(400);
      expect(res.text).toContain(`${5 - attempt} ${5 - attempt === 1 ? 'try' : 'tries'} left`);
    }
    const fifth = await client.post('/login/code', { code: wrong, csrf: await client.formToken('/login') });
    expect(fifth.status).toBe(400);
    expect(fifth.text).toContain('locked');
    const right = await client.post('/login/code', { code, csrf: await client.formToken('/login') });
    expect(right.status).toBe(400);
    expect(client.session()).toBeUndefined();

    const fresh = new AppClient(server);
    const second = await start(fresh, email('code2'));
    const ok = await fresh.post('/login/code', { code: second.code, csrf: await fresh.formToken('/login/check') });
    expect(ok.status).toBe(303);
    expect(fresh.session()).toMatch(/^ses_/);
  });

  it('returns only to app paths after sign-in', async () => {
    for (const [next, expected] of [
      ['/claim/ct_abc', '/claim/ct_abc'],
      ['//evil.example/', '/'],
      ['https://evil.example/', '/'],
      ['/\\evil.example', '/'],
    ]) {
      const client = new AppClient(server);
      const address = email('next');
      const before = countMailTo(server, address);
      await client.post('/login', { email: address, next: next!, csrf: await client.formToken(`/login?next=${encodeURIComponent(next!)}`) });
      const token = new URL(linkIn(await mailTo(server, address, { after: before }), `${server.appUrl}/login/verify?token=`)).searchParams.get('token')!;
      const done = await client.post('/login/verify', { token, csrf: await client.formToken(`/login/verify?token=${token}`) });
      expect(done.headers.location, next).toBe(expected);
    }
  });

  it('caps sign-in e-mails per address', async () => {
    const capped = await startAppServer({ PLINTH_SIGNIN_EMAILS_PER_ADDRESS: '2' });
    try {
      const client = new AppClient(capped);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await client.post('/login', { email: 'flood@example.com', csrf: await client.formToken('/login') })).status);
      expect(statuses).toEqual([303, 303, 429]);
      expect(countMailTo(capped, 'flood@example.com')).toBe(2);
    } finally {
      await capped.close();
    }
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
      const sent = await client.post(`/report/${deploy.json.site.name}`, { reason: 'other', details, csrf: await client.formToken(`/report/${deploy.json.site.name}`) });
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

describe('links that no longer work', () => {
  it('an expired claim link gets a clear page and claims nothing', async () => {
    const deploy = await api(server, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>late</h1>' }] } });
    const client = new AppClient(server);
    await client.signIn(email('lateclaim'));
    clock += 72 * 3600_000 + 1;
    const path = new URL(deploy.json.claim_url).pathname;
    const page = await client.get(path);
    expect(page.status).toBe(410);
    expect(page.text).toContain('This site has expired');
    const post = await client.post(path, { csrf: await client.formToken('/') });
    expect(post.status).toBe(410);
    expect((await client.get('/')).text).not.toContain(deploy.json.site.name);
  });
});

describe('reports', () => {
  it('are capped per network', async () => {
    const capped = await startAppServer({ PLINTH_REPORTS_PER_HOUR: '1' });
    try {
      const deploy = await api(capped, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>x</h1>' }] } });
      const name = deploy.json.site.name as string;
      const client = new AppClient(capped);
      const send = async () => client.post(`/report/${name}`, { reason: 'spam', details: 'spam', csrf: await client.formToken(`/report/${name}`) });
      expect((await send()).status).toBe(303);
      const second = await send();
      expect(second.status).toBe(429);
      expect(second.text).toContain('Too many reports');
    } finally {
      await capped.close();
    }
  });
});
