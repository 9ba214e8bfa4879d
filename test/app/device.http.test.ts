import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startAppServer, type AppServer } from './browser.js';
import { askDevice, DEVICE_GRANT, pollDevice, postForm, startDevice, whoAmI, type DeviceStart } from './device-helpers.js';
import { AppClient } from './http-client.js';

/**
 * The device authorization grant (RFC 8628) on the app host, as a device and a person meet it:
 * the metadata, the device authorization endpoint, the device page, and every answer of the
 * token endpoint. A shifted clock stands in for waiting.
 */

let server: AppServer;
let person: AppClient;
let email: string;
const clock = { offsetMs: 0 };

beforeAll(async () => {
  // The caps have a test of their own (test/security/device-login.http.test.ts).
  server = await startAppServer({ PLINTH_DEVICE_AUTHORIZATIONS_PER_HOUR: '0', PLINTH_DEVICE_CODE_TRIES_PER_HOUR: '0' }, () => Date.now() + clock.offsetMs);
  person = new AppClient(server);
  email = `device-${Date.now().toString(36)}@example.com`;
  await person.signIn(email);
});

afterAll(async () => {
  await server?.close();
});

/** The person opens the device page with the code and approves or denies, and lands where that sends them. */
async function decide(client: AppClient, start: DeviceStart, decision: 'approve' | 'deny'): Promise<string> {
  const path = `/device?user_code=${encodeURIComponent(start.user_code)}`;
  const csrf = await client.formToken(path);
  const answer = await client.post('/device', { csrf, user_code: start.user_code, decision });
  expect(answer.status, answer.text.slice(0, 300)).toBe(303);
  expect(answer.headers.location).toBe('/device');
  return (await client.get('/device')).text;
}

describe('authorization server metadata', () => {
  it.each(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'])('%s lists the device endpoint and grant type', async (path) => {
    const res = await request({ port: server.port, host: new URL(server.appUrl).host, path });
    const metadata = JSON.parse(res.text) as Record<string, unknown>;
    expect(metadata.device_authorization_endpoint).toBe(`${server.appUrl}/oauth/device_authorization`);
    expect(metadata.grant_types_supported).toContain(DEVICE_GRANT);
  });
});

describe('POST /oauth/device_authorization', () => {
  it('answers the RFC 8628 fields: a long device code, an 8-letter user code, the page, 10 minutes, 5 seconds', async () => {
    const answer = await askDevice(server, { device_name: 'laptop' });
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(answer.headers['set-cookie']).toBeUndefined();
    const body = answer.body as unknown as DeviceStart;
    expect(body.device_code).toMatch(/^pld_[A-Za-z0-9_-]{43}$/);
    expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(body.verification_uri).toBe(`${server.appUrl}/device`);
    expect(body.verification_uri_complete).toBe(`${server.appUrl}/device?user_code=${body.user_code}`);
    expect(body.expires_in).toBe(600);
    expect(body.interval).toBe(5);
  });

  it('answers a CORS preflight like the token endpoint', async () => {
    const res = await request({ port: server.port, host: new URL(server.appUrl).host, method: 'OPTIONS', path: '/oauth/device_authorization' });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it.each([
    ['no client_id', { client_id: '' }, 401, 'invalid_client'],
    ['an unknown client_id', { client_id: 'not-a-client' }, 401, 'invalid_client'],
    ['an unknown registered-looking client_id', { client_id: 'mcp_unknown' }, 401, 'invalid_client'],
    ['another scope', { scope: 'admin' }, 400, 'invalid_scope'],
    ['a device name of 81 characters', { device_name: 'x'.repeat(81) }, 400, 'invalid_request'],
    ['a device name of two lines', { device_name: 'laptop\nApproved by your administrator' }, 400, 'invalid_request'],
  ])('refuses %s', async (_label, fields, status, error) => {
    const answer = await askDevice(server, fields);
    expect(answer.status).toBe(status);
    expect(answer.body.error).toBe(error);
    expect(answer.body.error_description).toEqual(expect.any(String));
  });

  it('takes the one scope, and a registered client by its id', async () => {
    expect((await askDevice(server, { scope: 'sites' })).status).toBe(200);
    const registered = await request({
      port: server.port,
      host: new URL(server.appUrl).host,
      method: 'POST',
      path: '/oauth/register',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Build Bot', redirect_uris: ['http://127.0.0.1/callback'] }),
    });
    const clientId = (JSON.parse(registered.text) as { client_id: string }).client_id;
    const start = await startDevice(server, { client_id: clientId });
    const page = await person.get(`/device?user_code=${start.user_code}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Build Bot');
    expect(page.text).toContain('name given by the app');
  });
});

describe('the device page', () => {
  it('sends a signed-out person to sign in, and back to the code', async () => {
    const start = await startDevice(server);
    const stranger = new AppClient(server);
    const answer = await stranger.get(`/device?user_code=${start.user_code}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`/login?next=${encodeURIComponent(`/device?user_code=${start.user_code}`)}`);
  });

  it('shows the device, the program, the network, the time and what approving gives', async () => {
    const start = await startDevice(server, { device_name: 'Ada’s laptop <b>' });
    const page = await person.get(`/device?user_code=${start.user_code.toLowerCase().replace('-', '')}`);
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('Ada’s laptop &lt;b&gt;');
    expect(page.text).not.toContain('<b>');
    expect(page.text).toContain('Plinth CLI');
    expect(page.text).toContain('127.0.0.0/24 (the network you are on now)');
    expect(page.text).toContain(start.user_code);
    expect(page.text).toContain('API token of your account');
    expect(page.text).toContain('Approve Ada’s laptop &lt;b&gt;');
  });

  it('takes a typed code and says when none is waiting for it', async () => {
    const form = await person.get('/device');
    expect(form.text).toContain('Code shown by the device');
    const unknown = await person.get('/device?user_code=BBBB-BBBB');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('No sign-in is waiting for this code');
    const malformed = await person.get('/device?user_code=1234');
    expect(malformed.status).toBe(400);
    expect(malformed.text).toContain('A code is 8 letters');
  });
});

describe('the token endpoint', () => {
  it('answers authorization_pending until the person decides, then slow_down for polls that come too soon', async () => {
    const start = await startDevice(server);
    const first = await pollDevice(server, start.device_code);
    expect(first.status).toBe(400);
    expect(first.body.error).toBe('authorization_pending');
    expect(first.headers['cache-control']).toBe('no-store');
    // At once again: too soon, and the interval grows by 5 seconds.
    const hurried = await pollDevice(server, start.device_code);
    expect(hurried.status).toBe(400);
    expect(hurried.body.error).toBe('slow_down');
    expect(hurried.body.error_description).toContain('10 seconds');
    // The old interval is too soon now, and the interval grows again.
    clock.offsetMs += 5_000;
    const again = await pollDevice(server, start.device_code);
    expect(again.body.error).toBe('slow_down');
    expect(again.body.error_description).toContain('15 seconds');
    clock.offsetMs += 15_000;
    expect((await pollDevice(server, start.device_code)).body.error).toBe('authorization_pending');
  });

  it('answers access_denied after Deny, and the code leads nowhere any more', async () => {
    const start = await startDevice(server, { device_name: 'unwanted' });
    expect(await decide(person, start, 'deny')).toContain('Denied: “unwanted” gets no access');
    const answer = await pollDevice(server, start.device_code);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('access_denied');
    expect((await person.get(`/device?user_code=${start.user_code}`)).status).toBe(404);
  });

  it('answers expired_token once the sign-in expired, and the page no longer takes the code', async () => {
    const start = await startDevice(server);
    clock.offsetMs += 10 * 60_000 + 1000;
    const answer = await pollDevice(server, start.device_code);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('expired_token');
    expect((await person.get(`/device?user_code=${start.user_code}`)).status).toBe(404);
  });

  it('answers invalid_grant for unknown codes, and for a code of another client without using it up', async () => {
    expect((await pollDevice(server, 'pld_unknown')).body.error).toBe('invalid_grant');
    expect((await postForm(server, '/oauth/token', { grant_type: DEVICE_GRANT, client_id: 'plinth-cli' })).body.error).toBe('invalid_request');
    const start = await startDevice(server);
    await decide(person, start, 'approve');
    const wrong = await pollDevice(server, start.device_code, 'mcp_someone-else');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect((await pollDevice(server, start.device_code)).status).toBe(200);
  });

  it('gives an approved device an API token of the account once, named after the device and listed on the tokens page', async () => {
    const start = await startDevice(server, { device_name: 'build server 7' });
    expect(await decide(person, start, 'approve')).toContain('Approved: “build server 7”');
    const answer = await pollDevice(server, start.device_code);
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body).toEqual({ access_token: expect.stringMatching(/^pl_[A-Za-z0-9_-]{43}$/), token_type: 'Bearer', scope: 'sites' });
    expect(await whoAmI(server, answer.body.access_token!)).toEqual({ status: 200, email });
    const tokens = await person.get('/tokens');
    expect(tokens.text).toContain('<th scope="row">build server 7</th>');
    // Once: the same device code again is refused, and makes no second token.
    const again = await pollDevice(server, start.device_code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await person.get('/tokens')).text.split('<th scope="row">build server 7</th>')).toHaveLength(2);
  });

  it('names the token after the program when the device gave no name', async () => {
    const start = await startDevice(server);
    await decide(person, start, 'approve');
    expect((await pollDevice(server, start.device_code)).status).toBe(200);
    expect((await person.get('/tokens')).text).toContain('<th scope="row">Plinth CLI</th>');
  });
});

describe('POST /oauth/revoke with a device token', () => {
  async function deviceToken(name?: string): Promise<string> {
    const start = await startDevice(server, name === undefined ? {} : { device_name: name });
    await decide(person, start, 'approve');
    return (await pollDevice(server, start.device_code)).body.access_token!;
  }

  it('revokes it, with the client_id it was issued to or none', async () => {
    for (const fields of [{ client_id: 'plinth-cli' }, {}] as Array<Record<string, string>>) {
      const token = await deviceToken();
      const answer = await postForm(server, '/oauth/revoke', { token, ...fields });
      expect(answer.status).toBe(200);
      expect((await whoAmI(server, token)).status).toBe(401);
    }
  });

  it("records the device's token in the account's log when it is issued and when it is revoked", async () => {
    type Event = { kind: string; actor: string; details: Record<string, unknown> };
    const accountLog = async (token: string): Promise<Event[]> => {
      const res = await request({ port: server.port, host: new URL(server.apiUrl).host, path: '/v1/me/events', headers: { authorization: `Bearer ${token}` } });
      expect(res.status, res.text).toBe(200);
      return (JSON.parse(res.text) as { events: Event[] }).events;
    };
    const token = await deviceToken('ci runner 3');
    const issued = await accountLog(token);
    expect(issued.slice(0, 2).map((event) => event.kind)).toEqual(['token.created', 'device.approved']);
    expect(issued[0]).toMatchObject({ actor: email, details: { name: 'ci runner 3', token: expect.stringMatching(/^tok_/) } });

    // Read with another token of the account: the revoked one reads nothing any more.
    const reader = await deviceToken('reader');
    expect((await postForm(server, '/oauth/revoke', { token, client_id: 'plinth-cli' })).status).toBe(200);
    expect((await accountLog(reader))[0]).toMatchObject({ kind: 'token.revoked', actor: email, details: { token: issued[0]!.details.token } });
  });

  it('leaves it alone when another client asks, and leaves tokens made on the tokens page alone', async () => {
    const token = await deviceToken();
    expect((await postForm(server, '/oauth/revoke', { token, client_id: 'mcp_other' })).status).toBe(200);
    expect((await whoAmI(server, token)).status).toBe(200);

    const made = await person.post('/tokens', { name: 'page token', csrf: await person.formToken('/tokens') });
    expect(made.status).toBe(303);
    const shown = await person.get('/tokens');
    const pageToken = /id="new-token">(pl_[A-Za-z0-9_-]+)</.exec(shown.text)![1]!;
    expect((await postForm(server, '/oauth/revoke', { token: pageToken })).status).toBe(200);
    expect((await whoAmI(server, pageToken)).status).toBe(200);
  });
});
