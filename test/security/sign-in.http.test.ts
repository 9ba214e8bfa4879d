import { beforeAll, describe, expect, it } from 'vitest';
import { countMailTo, startAppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Attacks on signing in and on sessions, from outside, over HTTP: an attacker who asks for a
 * sign-in to someone else's address holds everything the asking browser holds (its cookie, the
 * pages) and nothing the mailbox holds (the link, the code). Run against a plain-http install and
 * an https one (`__Host-` cookies).
 */

const DAY = 24 * 3600_000;
let counter = 0;
const address = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

/** The browser's own sign-in secret: the value of its sign-in cookie. */
function ownSecret(client: AppClient): string {
  const value = client.signInCookie();
  if (!value) throw new Error('no sign-in cookie');
  return value;
}

const installs = [
  { name: 'http', env: {} as Record<string, string>, https: false },
  { name: 'https', env: { PLINTH_PUBLIC_APP_URL: 'https://app.localhost' }, https: true },
] as const;

describe.each(installs)('on an $name install', ({ env, https }) => {
  let clock = Date.now();
  const server = useAppServer(env, { now: () => clock });

  beforeAll(() => {
    if (https) Object.assign(server, { appUrl: 'https://app.localhost' });
  });

  /** The attacker asks for a sign-in e-mail to the victim's address; the mail goes to the victim. */
  async function attackerAsksFor(victim: string): Promise<{ attacker: AppClient; mailbox: { token: string; code: string } }> {
    const attacker = new AppClient(server);
    const mailbox = await attacker.startSignIn(victim);
    return { attacker, mailbox };
  }

  async function isSignedIn(client: AppClient): Promise<boolean> {
    const home = await client.get('/');
    return home.status === 200 && client.session() !== undefined;
  }

  describe('the asking browser alone cannot finish a sign-in', () => {
    // Each row: what the attacker sends, built from what its own browser holds.
    const attempts: Array<[string, (secret: string) => { path: string; fields: Record<string, string> }]> = [
      ['its sign-in cookie as the link token', (secret) => ({ path: '/login/verify', fields: { token: secret } })],
      ['its cookie with the link prefix', (secret) => ({ path: '/login/verify', fields: { token: secret.replace(/^sb_/, 'sl_') } })],
      ['its cookie with the old si_ prefix', (secret) => ({ path: '/login/verify', fields: { token: secret.replace(/^sb_/, 'si_') } })],
      ['its cookie id with the secret cut off', (secret) => ({ path: '/login/verify', fields: { token: secret.replace(/\..*$/, '').replace(/^sb_/, 'sl_') } })],
      [
        'its cookie id with an empty secret',
        (secret) => ({ path: '/login/verify', fields: { token: `${secret.replace(/\..*$/, '').replace(/^sb_/, 'sl_')}.` } }),
      ],
      ['its cookie, url-encoded', (secret) => ({ path: '/login/verify', fields: { token: encodeURIComponent(secret) } })],
      ['its cookie with spaces around it', (secret) => ({ path: '/login/verify', fields: { token: ` ${secret} ` } })],
      ['the code form with no code', () => ({ path: '/login/code', fields: {} })],
      ['the code form with an empty code', () => ({ path: '/login/code', fields: { code: '' } })],
      ['the code form with letters', () => ({ path: '/login/code', fields: { code: 'abcdef' } })],
      ['the code form with a 7-digit code', () => ({ path: '/login/code', fields: { code: '1234567' } })],
      ['the code form with its own cookie as the code', (secret) => ({ path: '/login/code', fields: { code: secret } })],
    ];

    it.each(attempts)('refuses %s', async (_label, build) => {
      const victim = address('victim');
      const { attacker } = await attackerAsksFor(victim);
      const { path, fields } = build(ownSecret(attacker));
      const csrf = await attacker.formToken('/login');
      const res = await attacker.post(path, { ...fields, csrf });
      expect(res.status).toBe(400);
      expect(attacker.session()).toBeUndefined();
      expect(await isSignedIn(attacker)).toBe(false);
    });

    it('refuses its cookie as the token of the link page, which names nobody', async () => {
      const { attacker } = await attackerAsksFor(address('victim'));
      const page = await attacker.get(`/login/verify?token=${encodeURIComponent(ownSecret(attacker))}`);
      expect(page.status).toBe(400);
      expect(page.text).not.toContain('victim-');
    });

    it('refuses its cookie together with the code of a sign-in it asked for itself', async () => {
      const victim = address('victim');
      const { attacker } = await attackerAsksFor(victim);
      const ownCode = (await new AppClient(server).startSignIn(address('attacker'))).code;
      const res = await attacker.post('/login/code', { code: ownCode, csrf: await attacker.formToken('/login/check') });
      expect(res.status).toBe(400);
      expect(attacker.session()).toBeUndefined();
    });

    it('refuses the cookie of one sign-in with the code of another, even for the same address', async () => {
      const victim = address('victim');
      const { attacker } = await attackerAsksFor(victim);
      // The victim asks again from their own browser; the attacker somehow learns that code.
      const other = await new AppClient(server).startSignIn(victim);
      const res = await attacker.post('/login/code', { code: other.code, csrf: await attacker.formToken('/login/check') });
      expect(res.status).toBe(400);
      expect(attacker.session()).toBeUndefined();
    });

    it('sends the cookie and the link to different places: the mailbox link is not the cookie', async () => {
      const { attacker, mailbox } = await attackerAsksFor(address('victim'));
      expect(mailbox.token).not.toBe(ownSecret(attacker));
      expect(mailbox.token.split('.')[1]).not.toBe(ownSecret(attacker).split('.')[1]);
    });

    it('lets the mailbox finish it: the link alone, in any browser', async () => {
      const victim = address('victim');
      const { mailbox } = await attackerAsksFor(victim);
      const phone = new AppClient(server);
      const done = await phone.post('/login/verify', { token: mailbox.token, csrf: await phone.formToken(`/login/verify?token=${mailbox.token}`) });
      expect(done.status).toBe(303);
      expect(await isSignedIn(phone)).toBe(true);
    });

    it('lets the browser that asked finish it with the mailbox code', async () => {
      const owner = new AppClient(server);
      const { code } = await owner.startSignIn(address('owner'));
      const done = await owner.post('/login/code', { code: code.replace(/(\d{3})/, '$1 '), csrf: await owner.formToken('/login/check') });
      expect(done.status).toBe(303);
      expect(await isSignedIn(owner)).toBe(true);
    });
  });

  describe('replay of sign-in secrets', () => {
    async function finishByLink(client: AppClient, token: string): Promise<number> {
      return (await client.post('/login/verify', { token, csrf: await client.formToken('/login') })).status;
    }
    async function finishByCode(client: AppClient, code: string): Promise<number> {
      return (await client.post('/login/code', { code, csrf: await client.formToken('/login') })).status;
    }

    it('a link works once', async () => {
      const asker = new AppClient(server);
      const { token } = await asker.startSignIn(address('link-once'));
      expect(await finishByLink(new AppClient(server), token)).toBe(303);
      const replay = new AppClient(server);
      expect(await finishByLink(replay, token)).toBe(400);
      expect((await replay.get(`/login/verify?token=${token}`)).status).toBe(400);
      expect(replay.session()).toBeUndefined();
    });

    it('a code works once, even replayed with the old cookie', async () => {
      const asker = new AppClient(server);
      const { code } = await asker.startSignIn(address('code-once'));
      const stolenCookie = [...asker.cookies];
      expect(await finishByCode(asker, code)).toBe(303);
      const replay = new AppClient(server);
      for (const [name, value] of stolenCookie) replay.cookies.set(name, value);
      expect(await finishByCode(replay, code)).toBe(400);
      expect(replay.session()).toBeUndefined();
    });

    it('the link is spent once the code was used, and the code once the link was', async () => {
      const first = new AppClient(server);
      const one = await first.startSignIn(address('spent'));
      expect(await finishByCode(first, one.code)).toBe(303);
      expect(await finishByLink(new AppClient(server), one.token)).toBe(400);

      const second = new AppClient(server);
      const two = await second.startSignIn(address('spent'));
      expect(await finishByLink(new AppClient(server), two.token)).toBe(303);
      expect(await finishByCode(second, two.code)).toBe(400);
      expect(second.session()).toBeUndefined();
    });

    it('link and code expire after 15 minutes', async () => {
      const asker = new AppClient(server);
      const { token, code } = await asker.startSignIn(address('late'));
      clock += 15 * 60_000 + 1;
      expect(await finishByLink(new AppClient(server), token)).toBe(400);
      expect(await finishByCode(asker, code)).toBe(400);
      expect(asker.session()).toBeUndefined();
    });

    it('five wrong codes lock the sign-in: the right code and the link are refused after', async () => {
      const victim = address('locked');
      const { attacker, mailbox } = await attackerAsksFor(victim);
      const wrong = mailbox.code === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) expect(await finishByCode(attacker, wrong)).toBe(400);
      expect(await finishByCode(attacker, mailbox.code)).toBe(400);
      expect(await finishByLink(new AppClient(server), mailbox.token)).toBe(400);
      expect(attacker.session()).toBeUndefined();
    });

    it('a session cookie is refused after sign-out', async () => {
      const client = new AppClient(server);
      const session = await client.signIn(address('out'));
      expect((await client.post('/logout', { csrf: await client.formToken('/') })).status).toBe(303);
      const replay = new AppClient(server);
      replay.cookies.set(https ? '__Host-plinth_session' : 'plinth_session', session);
      expect((await replay.get('/')).headers.location).toBe('/login');
    });

    it('a session slides for 30 days of use', async () => {
      const client = new AppClient(server);
      await client.signIn(address('slide'));
      clock += 20 * DAY;
      expect((await client.get('/')).status).toBe(200);
      clock += 20 * DAY; // 40 days after sign-in, 20 after last use
      expect((await client.get('/')).status).toBe(200);
      clock += 31 * DAY;
      const expired = await client.get('/tokens');
      expect(expired.status).toBe(303);
      expect(expired.headers.location).toBe('/login?next=%2Ftokens');
    });

    it('a session planted before sign-in is not the one after it (no fixation), and is ended', async () => {
      const attacker = new AppClient(server);
      const planted = await attacker.signIn(address('planter'));
      // The victim asks for a link elsewhere and opens it in the browser holding the planted cookie.
      const victimAddress = address('fixated');
      const { token } = await new AppClient(server).startSignIn(victimAddress);
      const victim = new AppClient(server);
      victim.cookies.set(https ? '__Host-plinth_session' : 'plinth_session', planted);
      const done = await victim.post('/login/verify', { token, csrf: await victim.formToken(`/login/verify?token=${token}`) });
      expect(done.status).toBe(303);
      expect(victim.session()).toMatch(/^ses_/);
      expect(victim.session()).not.toBe(planted);
      expect((await attacker.get('/')).headers.location).toBe('/login');
      const page = await victim.get('/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('fixated-');
    });

    it('says how many code tries are left before the lock', async () => {
      const client = new AppClient(server);
      const { code } = await client.startSignIn(address('tries'));
      const wrong = code === '000000' ? '111111' : '000000';
      for (let attempt = 1; attempt <= 4; attempt++) {
        const res = await client.post('/login/code', { code: wrong, csrf: await client.formToken('/login/check') });
        expect(res.status).toBe(400);
        expect(res.text).toContain(`${5 - attempt} ${5 - attempt === 1 ? 'try' : 'tries'} left`);
      }
      const fifth = await client.post('/login/code', { code: wrong, csrf: await client.formToken('/login') });
      expect(fifth.text).toContain('locked');
    });
  });

  describe('cookies', () => {
    it('every cookie the app sets keeps the prefix rules browsers enforce', async () => {
      const client = new AppClient(server);
      const { code } = await client.startSignIn(address('cookies'));
      await client.get('/login/check');
      await client.post('/login/code', { code, csrf: await client.formToken('/login/check') });
      await client.post('/tokens', { name: 'laptop', csrf: await client.formToken('/tokens') });
      await client.get('/tokens');
      await client.post('/logout', { csrf: await client.formToken('/') });
      await client.get('/login');
      const names = new Set(client.setCookieLines.map((line) => line.split('=')[0]));
      // The sign-in, session, form and flash (new token, notices) cookies were all set here.
      expect([...names].map((name) => name!.replace(/^__Host-/, '')).sort()).toEqual(['plinth_flash', 'plinth_form', 'plinth_session', 'plinth_signin']);
      for (const line of client.setCookieLines) expect(cookieProblems(line, https), line).toEqual([]);
    });
  });
});

/**
 * What a browser would object to in a `Set-Cookie` line of ours (RFC 6265bis cookie prefixes),
 * and what our own rules require: HttpOnly, SameSite=Lax, host-only, and `__Host-` on https.
 */
function cookieProblems(line: string, https: boolean): string[] {
  const [pair, ...attributes] = line.split(';').map((part) => part.trim());
  const name = pair!.slice(0, pair!.indexOf('='));
  const attribute = (key: string): string | undefined => {
    const found = attributes.find((a) => a.toLowerCase() === key.toLowerCase() || a.toLowerCase().startsWith(`${key.toLowerCase()}=`));
    return found === undefined ? undefined : (found.split('=')[1] ?? '');
  };
  const problems: string[] = [];
  if (name.startsWith('__Host-')) {
    if (attribute('Secure') === undefined) problems.push('__Host- without Secure');
    if (attribute('Path') !== '/') problems.push(`__Host- with Path=${attribute('Path')}`);
    if (attribute('Domain') !== undefined) problems.push('__Host- with Domain');
  }
  if (name.startsWith('__Secure-') && attribute('Secure') === undefined) problems.push('__Secure- without Secure');
  if (https && !name.startsWith('__Host-')) problems.push('https cookie without __Host-');
  if (!https && attribute('Secure') !== undefined) problems.push('Secure cookie on http (browsers drop it)');
  if (attribute('HttpOnly') === undefined) problems.push('not HttpOnly');
  if (attribute('SameSite')?.toLowerCase() !== 'lax') problems.push('not SameSite=Lax');
  if (attribute('Domain') !== undefined) problems.push('not host-only');
  return problems;
}

describe('cookieProblems', () => {
  it.each([
    ['__Host-a=1; Path=/; HttpOnly; Secure; SameSite=Lax', true, []],
    ['__Host-a=1; Path=/login; HttpOnly; Secure; SameSite=Lax', true, ['__Host- with Path=/login']],
    ['__Host-a=1; Path=/tokens; HttpOnly; Secure; SameSite=Lax', true, ['__Host- with Path=/tokens']],
    ['__Host-a=1; HttpOnly; Secure; SameSite=Lax', true, ['__Host- with Path=undefined']],
    ['__Host-a=1; Path=/; HttpOnly; SameSite=Lax', true, ['__Host- without Secure']],
    ['__Host-a=1; Path=/; Domain=example.org; HttpOnly; Secure; SameSite=Lax', true, ['__Host- with Domain', 'not host-only']],
    ['__Secure-a=1; Path=/; HttpOnly; SameSite=Lax', true, ['__Secure- without Secure', 'https cookie without __Host-']],
    ['a=1; Path=/; HttpOnly; SameSite=Lax', false, []],
    ['a=1; Path=/; HttpOnly; Secure; SameSite=Lax', false, ['Secure cookie on http (browsers drop it)']],
    ['a=1; Path=/; SameSite=Strict', false, ['not HttpOnly', 'not SameSite=Lax']],
  ])('%s (https %s) → %j', (line, https, expected) => {
    expect(cookieProblems(line, https)).toEqual(expected);
  });
});

describe('e-mail and code caps', () => {
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

  it('caps the codes tried for one address per day; the link still works past the cap', async () => {
    const server = await startAppServer({ PLINTH_SIGNIN_CODES_PER_ADDRESS: '3' });
    try {
      const victim = `capped-${Date.now()}@example.com`;
      const statuses: number[] = [];
      let last: { attacker: AppClient; mailbox: { token: string; code: string } } | undefined;
      for (let i = 0; i < 2; i++) {
        const attacker = new AppClient(server);
        const mailbox = await attacker.startSignIn(victim);
        last = { attacker, mailbox };
        const wrong = mailbox.code === '000000' ? '111111' : '000000';
        for (let k = 0; k < 2; k++) statuses.push((await attacker.post('/login/code', { code: wrong, csrf: await attacker.formToken('/login/check') })).status);
      }
      expect(statuses).toEqual([400, 400, 400, 429]);
      // Past the cap even the right code is not tried.
      const right = await last!.attacker.post('/login/code', { code: last!.mailbox.code, csrf: await last!.attacker.formToken('/login/check') });
      expect(right.status).toBe(429);
      expect(last!.attacker.session()).toBeUndefined();
      const phone = new AppClient(server);
      const byLink = await phone.post('/login/verify', { token: last!.mailbox.token, csrf: await phone.formToken('/login') });
      expect(byLink.status).toBe(303);
    } finally {
      await server.close();
    }
  });
});
