import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppServer, type AppServer } from '../app/browser.js';
import { askDevice, pollDevice, postForm, startDevice, whoAmI, type DeviceStart } from '../app/device-helpers.js';
import { AppClient } from '../app/http-client.js';
import { request } from '../helpers/http.js';

/**
 * Attacks on the device sign-in (RFC 8628, `plinth login`), over HTTP against the real server.
 * Whoever approves a user code hands their account to the device that shows it, so:
 *
 * - user codes (about 34.5 bits) must not be guessable by typing them: wrong codes are capped per
 *   account and per network, and past the cap the right code is refused too, so guessing learns
 *   nothing;
 * - device codes are long, random, stored only as hashes, and no other kind of code stands in for one;
 * - approving takes a signed-in person and the page's form token (no cross-site approval);
 * - the page never shows a sign-in to anyone but the one person who decides it.
 *
 * Every network here is this machine's (127.0.0.0/24): the network cap and the account cap are
 * told apart by which one a second account on the same network runs into.
 */

const TRIES = 5;
const STARTS = 6;
let server: AppServer;
let victim: AppClient;
let attacker: AppClient;
let victimEmail: string;
// Rate windows are clock hours: the server's clock starts a minute into one, so that no window
// ends between two cases by the wall clock alone (only `nextHour` moves to the next).
const clock = { offsetMs: Math.ceil(Date.now() / 3600_000) * 3600_000 + 60_000 - Date.now() };
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

beforeAll(async () => {
  server = await startAppServer(
    { PLINTH_DEVICE_CODE_TRIES_PER_HOUR: String(TRIES), PLINTH_DEVICE_AUTHORIZATIONS_PER_HOUR: String(STARTS) },
    () => Date.now() + clock.offsetMs,
  );
  const stamp = Date.now().toString(36);
  victim = new AppClient(server);
  victimEmail = `device-victim-${stamp}@example.com`;
  await victim.signIn(victimEmail);
  attacker = new AppClient(server);
  await attacker.signIn(`device-attacker-${stamp}@example.com`);
});

afterAll(async () => {
  await server?.close();
});

/** Rate windows are fixed hours: a new one starts with every cap empty. */
const nextHour = (): void => {
  clock.offsetMs += 3600_000;
};

/** A code that is not `except`, in the user code's alphabet. */
function guess(except: string): string {
  for (;;) {
    const code = Array.from({ length: 8 }, () => ALPHABET[Math.floor(Math.random() * ALPHABET.length)]).join('');
    const shown = `${code.slice(0, 4)}-${code.slice(4)}`;
    if (shown !== except) return shown;
  }
}

async function stillPending(start: DeviceStart): Promise<void> {
  clock.offsetMs += 30_000;
  expect((await pollDevice(server, start.device_code)).body.error).toBe('authorization_pending');
}

async function approve(client: AppClient, start: DeviceStart): Promise<number> {
  const csrf = await client.formToken(`/device?user_code=${start.user_code}`);
  return (await client.post('/device', { csrf, user_code: start.user_code, decision: 'approve' })).status;
}

describe('guessing user codes', () => {
  it('caps wrong codes per account; past the cap the right code is refused too and the sign-in stays pending', async () => {
    nextHour();
    const start = await startDevice(server, { device_name: 'victim-laptop' });
    for (let i = 0; i < TRIES; i++) expect((await attacker.get(`/device?user_code=${guess(start.user_code)}`)).status).toBe(404);
    const capped = await attacker.get(`/device?user_code=${guess(start.user_code)}`);
    expect(capped.status).toBe(429);
    expect(Number(capped.headers['retry-after'])).toBeGreaterThan(0);
    // The right code now: the same refusal, nothing of the device shown.
    const right = await attacker.get(`/device?user_code=${start.user_code}`);
    expect(right.status).toBe(429);
    expect(right.text).not.toContain('victim-laptop');
    const csrf = await attacker.formToken('/device');
    const posted = await attacker.post('/device', { csrf, user_code: start.user_code, decision: 'approve' });
    expect(posted.status).toBe(429);
    await stillPending(start);
  });

  it('caps them per network too: another account on the same network is refused as well', async () => {
    const other = new AppClient(server);
    await other.signIn(`device-second-${Date.now().toString(36)}@example.com`);
    expect((await other.get(`/device?user_code=${guess('')}`)).status).toBe(429);
  });

  it('counts guesses sent straight to the approve form', async () => {
    nextHour();
    const start = await startDevice(server);
    const csrf = await attacker.formToken('/device');
    for (let i = 0; i < TRIES; i++) {
      expect((await attacker.post('/device', { csrf, user_code: guess(start.user_code), decision: 'approve' })).status).toBe(404);
    }
    expect((await attacker.post('/device', { csrf, user_code: start.user_code, decision: 'approve' })).status).toBe(429);
    await stillPending(start);
  });

  it('lets the person with the right code look at it as often as they like', async () => {
    nextHour();
    const start = await startDevice(server);
    for (let i = 0; i < TRIES * 2; i++) expect((await victim.get(`/device?user_code=${start.user_code}`)).status).toBe(200);
    expect(await approve(victim, start)).toBe(303);
  });

  it('caps device sign-ins started per network', async () => {
    nextHour();
    for (let i = 0; i < STARTS; i++) expect((await askDevice(server)).status).toBe(200);
    const refused = await askDevice(server);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('device codes', () => {
  it('are 256 random bits, all different, and stored only as hashes, as are user codes', async () => {
    nextHour();
    const starts = await Promise.all(Array.from({ length: STARTS }, () => startDevice(server)));
    const codes = new Set(starts.map((start) => start.device_code));
    expect(codes.size).toBe(STARTS);
    for (const code of codes) expect(Buffer.from(code.slice(4), 'base64url')).toHaveLength(32);
    const records = readFileSync(join(server.dataDir, 'meta', 'data.mdb'));
    for (const start of starts) {
      expect(records.includes(start.device_code)).toBe(false);
      expect(records.includes(start.device_code.slice(4))).toBe(false);
      expect(records.includes(start.user_code)).toBe(false);
      expect(records.includes(start.user_code.replace('-', ''))).toBe(false);
    }
  });

  it('cannot be stood in for by a near miss, a user code or an authorization code, and such tries use nothing up', async () => {
    nextHour();
    const start = await startDevice(server);
    const last = start.device_code.at(-1) === 'A' ? 'B' : 'A';
    for (const code of [
      `${start.device_code.slice(0, -1)}${last}`,
      start.device_code.toUpperCase(),
      start.user_code,
      start.user_code.replace('-', ''),
      start.device_code.slice(4),
    ]) {
      const answer = await pollDevice(server, code);
      expect(answer.status, code).toBe(400);
      expect(answer.body.error, code).toBe('invalid_grant');
    }
    // Sent as an authorization code by a registered client, the device code is no code at all.
    const registered = await request({
      port: server.port,
      host: new URL(server.appUrl).host,
      method: 'POST',
      path: '/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Swapper', redirect_uris: ['http://127.0.0.1/cb'] }),
    });
    const clientId = (JSON.parse(registered.text) as { client_id: string }).client_id;
    const swapped = await postForm(server, '/oauth/token', {
      grant_type: 'authorization_code',
      code: start.device_code,
      code_verifier: 'v'.repeat(43),
      redirect_uri: 'http://127.0.0.1/cb',
      client_id: clientId,
    });
    expect(swapped.status).toBe(400);
    expect(swapped.body.error).toBe('invalid_grant');
    await stillPending(start);
    expect(await approve(victim, start)).toBe(303);
    expect((await pollDevice(server, start.device_code)).status).toBe(200);
  });
});

describe('approving across sites (CSRF)', () => {
  it.each([
    [
      "signed out, with a signed-out browser's own form token",
      async (start: DeviceStart) => {
        const stranger = new AppClient(server);
        return stranger.post('/device', { csrf: await stranger.formToken('/login'), user_code: start.user_code, decision: 'approve' });
      },
      303,
    ],
    [
      'signed out, with no cookies',
      async (start: DeviceStart) => new AppClient(server).post('/device', { user_code: start.user_code, decision: 'approve' }),
      403,
    ],
    ['without the form token', async (start: DeviceStart) => victim.post('/device', { user_code: start.user_code, decision: 'approve' }), 403],
    [
      'with a wrong form token',
      async (start: DeviceStart) => victim.post('/device', { csrf: 'x'.repeat(43), user_code: start.user_code, decision: 'approve' }),
      403,
    ],
    [
      "with the attacker's own form token",
      async (start: DeviceStart) => victim.post('/device', { csrf: await attacker.formToken('/device'), user_code: start.user_code, decision: 'approve' }),
      403,
    ],
    [
      'from another site, with the right form token',
      async (start: DeviceStart) =>
        victim.post('/device', { csrf: await victim.formToken('/device'), user_code: start.user_code, decision: 'approve' }, { origin: 'http://evil.example' }),
      403,
    ],
    [
      'from a published site, with the right form token',
      async (start: DeviceStart) =>
        victim.post(
          '/device',
          { csrf: await victim.formToken('/device'), user_code: start.user_code, decision: 'approve' },
          { origin: server.siteUrl('some-site') },
        ),
      403,
    ],
    ['by a GET with the form fields', async (start: DeviceStart) => victim.get(`/device?user_code=${start.user_code}&decision=approve`), 200],
  ])('%s: nothing is approved', async (_label, send, status) => {
    nextHour();
    const start = await startDevice(server);
    const answer = await send(start);
    expect(answer.status).toBe(status);
    if (status === 303) expect(answer.headers.location).toMatch(/^\/login\?next=/);
    await stillPending(start);
  });
});

describe("another person's sign-in", () => {
  it('is not shown on the code form, nor to a signed-out visitor', async () => {
    nextHour();
    const start = await startDevice(server, { device_name: 'private-device-name' });
    const form = await attacker.get('/device');
    expect(form.status).toBe(200);
    expect(form.text).not.toContain('private-device-name');
    const signedOut = await new AppClient(server).get(`/device?user_code=${start.user_code}`);
    expect(signedOut.status).toBe(303);
    expect(signedOut.text).not.toContain('private-device-name');
  });

  it('is not shown nor decided by anyone once its person decided it, and the token is for that person', async () => {
    nextHour();
    const start = await startDevice(server, { device_name: 'victims-device' });
    expect(await approve(victim, start)).toBe(303);
    const look = await attacker.get(`/device?user_code=${start.user_code}`);
    expect(look.status).toBe(404);
    expect(look.text).not.toContain('victims-device');
    const csrf = await attacker.formToken('/device');
    const deny = await attacker.post('/device', { csrf, user_code: start.user_code, decision: 'deny' });
    expect(deny.status).toBe(404);
    expect(deny.text).not.toContain('victims-device');
    const answer = await pollDevice(server, start.device_code);
    expect(answer.status).toBe(200);
    expect(await whoAmI(server, answer.body.access_token!)).toEqual({ status: 200, email: victimEmail });
  });

  it('is decided once: a second decision, even by the same person, changes nothing', async () => {
    nextHour();
    const start = await startDevice(server);
    const csrf = await victim.formToken(`/device?user_code=${start.user_code}`);
    expect((await victim.post('/device', { csrf, user_code: start.user_code, decision: 'deny' })).status).toBe(303);
    expect((await victim.post('/device', { csrf, user_code: start.user_code, decision: 'approve' })).status).toBe(404);
    expect((await pollDevice(server, start.device_code)).body.error).toBe('access_denied');
  });
});
