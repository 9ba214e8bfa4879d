import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_METADATA_UNAVAILABLE } from '../../src/outbound/index.js';
import { hashToken } from '../../src/store/index.js';
import { startAppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { useAppServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { METADATA_REDIRECT_URI as redirectUri, startMetadataServer, type MetadataServer } from '../helpers/metadata-server.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';
import { loopbackFetch } from '../mcp/loopback-fetch.js';
import { rpc } from '../mcp/mcp-helpers.js';

/**
 * Attacks on the OAuth authorization server, from outside, over HTTP, against the real server
 * installed as a public service: its app URL is not on localhost, so it must not fetch from
 * loopback (or any internal address) on anyone's say-so.
 *
 * - A `client_id` may be the https URL of a metadata document, which the server fetches before
 *   anyone signs in. Each row spells this machine's loopback differently; an https server on
 *   127.0.0.1 and ::1, serving a valid document, counts the connections it gets: there must be
 *   none, and the answer must be the one message every failed fetch gets.
 * - Codes and tokens are replayed, swapped between clients and taken to the wrong place.
 *
 * Only loopback is ever contacted: rows are spellings of this machine's own addresses or names
 * /etc/hosts resolves, never a name that needs outside DNS. Other internal ranges (private,
 * link-local, NAT64, 6to4, …) are checked as a table in test/rules/oauth.test.ts, where
 * nothing connects.
 */

let dir: string;
let metadata: MetadataServer;
let person: AppClient;
let clientId: string;
let otherClientId: string;
let mcp: string;
const clock = { offsetMs: 0 };

beforeAll(async () => {
  dir = tempDir('plinth-sec-oauth-');
  metadata = await startMetadataServer(dir, ['127.0.0.1', '::1']);
  // A public install: the app host is not a localhost name, so its public URL is not either.
});

const server = useAppServer({ PLINTH_APP_HOST: 'app.plinth.example' }, { now: () => Date.now() + clock.offsetMs });

beforeAll(async () => {
  Object.assign(server, { appUrl: server.config.publicUrls.app });
  expect(new URL(server.appUrl).hostname).toBe('app.plinth.example');
  mcp = `http://mcp.localhost:${server.port}`;
  person = new AppClient(server);
  await person.signIn(`sec-oauth-${Date.now().toString(36)}@example.com`);
  clientId = await register('Legitimate App');
  otherClientId = await register('Other App');
});

afterAll(async () => {
  await metadata?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function register(name: string): Promise<string> {
  const res = await loopbackFetch(`${server.appUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

const authorizeQuery = async (client_id: string, verifier: string, extra: Record<string, string> = {}): Promise<Record<string, string>> => ({
  response_type: 'code',
  client_id,
  redirect_uri: redirectUri,
  state: 'st',
  code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  resource: `${mcp}/mcp`,
  ...extra,
});

/** The person allows the legitimate app: a fresh code and the verifier that goes with it. */
async function issueCode(): Promise<{ code: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const params = await authorizeQuery(clientId, verifier);
  const csrf = await person.formToken(`/oauth/authorize?${new URLSearchParams(params)}`);
  const answer = await person.post('/oauth/authorize', { ...params, csrf, decision: 'allow' });
  expect(answer.status, answer.text.slice(0, 300)).toBe(303);
  const code = new URL(String(answer.headers.location)).searchParams.get('code');
  expect(code).toMatch(/^plc_/);
  return { code: code!, verifier };
}

async function token(fields: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await loopbackFetch(`${server.appUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams(fields) });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, resource: `${mcp}/mcp`, ...extra });

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra });

async function tokensFor(): Promise<{ access: string; refresh: string }> {
  const { code, verifier } = await issueCode();
  const answer = await exchange(code, verifier);
  expect(answer.status).toBe(200);
  return { access: answer.body.access_token!, refresh: answer.body.refresh_token! };
}

const mcpStatus = async (access: string): Promise<number> =>
  (await rpc(server, { token: access, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status;

/** Polls until the metadata server has counted `count` connections (its counter runs on accept). */
async function connectionsReach(count: number): Promise<void> {
  await waitUntil(() => metadata.connections() >= count, 2000, 10);
  expect(metadata.connections()).toBe(count);
}

describe('a client_id URL that points at this machine', () => {
  it('counts connections to the loopback https server on both addresses (the control)', async () => {
    const before = metadata.connections();
    for (const host of ['127.0.0.1', '::1']) {
      const socket = connect(metadata.port, host);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.destroy();
    }
    await connectionsReach(before + 2);
  });

  // Each row: the host of the client_id URL. The URL parser rewrites the IPv4 spellings to
  // 127.0.0.1 and the mapped ones to ::ffff:7f00:1, which the old check took for public.
  it.each([
    ['IPv4-mapped loopback, as the URL parser writes it', '[::ffff:7f00:1]'],
    ['IPv4-mapped loopback, dotted', '[::ffff:127.0.0.1]'],
    ['IPv4-mapped loopback, written out', '[0:0:0:0:0:ffff:7f00:1]'],
    ['IPv4-mapped loopback, zero-padded', '[0000:0000:0000:0000:0000:ffff:7f00:0001]'],
    ['IPv4-mapped loopback, upper case', '[::FFFF:7F00:1]'],
    ['IPv4-mapped loopback, another address in 127/8', '[::ffff:127.0.0.2]'],
    ['IPv4 loopback', '127.0.0.1'],
    ['IPv4 loopback, short', '127.1'],
    ['IPv4 loopback, decimal', '2130706433'],
    ['IPv4 loopback, hex', '0x7f000001'],
    ['IPv4 loopback, dotted hex', '0x7f.0.0.1'],
    ['IPv4 loopback, hex and short', '0x7f.1'],
    ['IPv4 loopback, octal', '0177.0.0.1'],
    ['IPv4 loopback, with a trailing dot', '127.0.0.1.'],
    ['IPv4 loopback, leading zeros', '127.000.000.001'],
    ['another IPv4 loopback address', '127.0.0.2'],
    ['IPv6 loopback', '[::1]'],
    ['IPv6 loopback, written out', '[0:0:0:0:0:0:0:1]'],
    ['localhost', 'localhost'],
    ['localhost, upper case', 'LOCALHOST'],
    ['the unspecified IPv4 address', '0.0.0.0'],
    ['the unspecified IPv4 address, as one number', '0'],
    ['the unspecified IPv6 address', '[::]'],
    ['IPv4-mapped unspecified', '[::ffff:0.0.0.0]'],
  ])('refuses %s (%s) with the one message and no connection, before anyone signs in', async (_label, host) => {
    const before = metadata.connections();
    const stranger = new AppClient(server);
    const verifier = oauth.generateRandomCodeVerifier();
    const params = await authorizeQuery(`https://${host}:${metadata.port}/client.json`, verifier);
    const answer = await stranger.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(metadata.connections(), 'connections to this machine').toBe(before);
    expect(metadata.requests).toEqual([]);
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.text).toContain(CLIENT_METADATA_UNAVAILABLE);
  });

  it('answers an open port and a closed port alike', async () => {
    const pages: string[] = [];
    for (const port of [metadata.port, 1]) {
      const params = await authorizeQuery(`https://127.0.0.1:${port}/client.json`, oauth.generateRandomCodeVerifier());
      const answer = await new AppClient(server).get(`/oauth/authorize?${new URLSearchParams(params)}`);
      expect(answer.status).toBe(400);
      pages.push(/<div class="message">([\s\S]*?)<\/div>/.exec(answer.text)?.[1] ?? '');
    }
    expect(pages[0]).toContain(CLIENT_METADATA_UNAVAILABLE);
    expect(pages[1]).toBe(pages[0]);
  });

  it('refuses it on the consent form too, for a signed-in person', async () => {
    const before = metadata.connections();
    const params = await authorizeQuery(`https://[::ffff:7f00:1]:${metadata.port}/client.json`, oauth.generateRandomCodeVerifier());
    const csrf = await person.formToken(`/oauth/authorize?${new URLSearchParams(await authorizeQuery(clientId, oauth.generateRandomCodeVerifier()))}`);
    const answer = await person.post('/oauth/authorize', { ...params, csrf, decision: 'allow' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(CLIENT_METADATA_UNAVAILABLE);
    expect(metadata.connections()).toBe(before);
  });
});

describe('codes replayed or taken elsewhere', () => {
  // Each row changes one thing in an otherwise good code exchange: the answer is the error the
  // token endpoint must give (RFC 6749 §5.2), and whether the code is spent afterwards (a code
  // that reached the check is; a request refused before it names a code is not).
  it.each<[string, (verifier: string) => Promise<Record<string, string>> | Record<string, string>, number, string, boolean]>([
    ['a wrong PKCE verifier', () => ({ code_verifier: oauth.generateRandomCodeVerifier() }), 400, 'invalid_grant', true],
    [
      'the PKCE challenge as the verifier',
      async (verifier) => ({ code_verifier: await oauth.calculatePKCECodeChallenge(verifier) }),
      400,
      'invalid_grant',
      true,
    ],
    ['no PKCE verifier', () => ({ code_verifier: '' }), 400, 'invalid_request', false],
    ['another registered client_id', () => ({ client_id: otherClientId }), 400, 'invalid_grant', true],
    ['an unknown client_id', () => ({ client_id: 'mcp_nobody' }), 401, 'invalid_client', false],
    ['no client_id', () => ({ client_id: '' }), 401, 'invalid_client', false],
    ['another redirect_uri on another loopback port', () => ({ redirect_uri: 'http://127.0.0.1:9999/callback' }), 400, 'invalid_grant', true],
    ['another redirect_uri host', () => ({ redirect_uri: 'https://evil.example/callback' }), 400, 'invalid_grant', true],
    ['no redirect_uri', () => ({ redirect_uri: '' }), 400, 'invalid_grant', true],
    ['a redirect_uri that is not a URL', () => ({ redirect_uri: 'not a url' }), 400, 'invalid_grant', true],
    ['another resource', () => ({ resource: 'https://evil.example/mcp' }), 400, 'invalid_target', true],
  ])('refuses a code with %s', async (_label, change, status, error, spent) => {
    const { code, verifier } = await issueCode();
    const answer = await exchange(code, verifier, await change(verifier));
    expect(answer.status).toBe(status);
    expect(answer.body.error).toBe(error);
    expect(answer.body.access_token).toBeUndefined();
    const retry = await exchange(code, verifier);
    if (spent) expect(retry).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    else expect(retry.status).toBe(200);
  });

  it.each([
    ['a made-up code', 'plc_madeup', 'invalid_grant'],
    ['an empty code', '', 'invalid_request'],
  ])('refuses %s', async (_label, code, error) => {
    expect(await exchange(code, oauth.generateRandomCodeVerifier())).toMatchObject({ status: 400, body: { error } });
  });

  it('refuses a code used twice, and revokes the tokens its first use gave (RFC 6749 §4.1.2)', async () => {
    const { code, verifier } = await issueCode();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect(await mcpStatus(first.body.access_token!)).toBe(200);
    const second = await exchange(code, verifier);
    expect(second).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(second.body.access_token).toBeUndefined();
    expect(await mcpStatus(first.body.access_token!)).toBe(401);
    expect(await refresh(first.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses a code after its 60 seconds', async () => {
    const { code, verifier } = await issueCode();
    clock.offsetMs += 61_000;
    expect(await exchange(code, verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

describe('refresh tokens replayed or taken elsewhere', () => {
  it('refuses a refresh token used again after rotation, and revokes the whole grant', async () => {
    const first = await tokensFor();
    const rotated = await refresh(first.refresh);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(first.refresh);
    expect(await refresh(first.refresh)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // Whoever held the newer tokens, the app included, is out: the replay means one was stolen.
    expect(await mcpStatus(rotated.body.access_token!)).toBe(401);
    expect(await refresh(rotated.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it.each<[string, (tokens: { access: string; refresh: string }) => Record<string, string>, string]>([
    ['presented by another client', (t) => ({ refresh_token: t.refresh, client_id: otherClientId }), 'invalid_grant'],
    ['for another resource', (t) => ({ refresh_token: t.refresh, resource: 'https://evil.example/mcp' }), 'invalid_target'],
    ['replaced by the access token', (t) => ({ refresh_token: t.access }), 'invalid_grant'],
    ['made up', () => ({ refresh_token: 'plr_madeup' }), 'invalid_grant'],
  ])('refuses a refresh token %s, and the app keeps its connection', async (_label, change, error) => {
    const tokens = await tokensFor();
    const answer = await refresh(tokens.refresh, change(tokens));
    expect(answer).toMatchObject({ status: 400, body: { error } });
    expect(await mcpStatus(tokens.access)).toBe(200);
    expect((await refresh(tokens.refresh)).status).toBe(200);
  });
});

describe('a client name that makes the consent page say something else', () => {
  // The consent page shows the name an app gave itself, tagged "name given by the app". A bidi
  // override turns the rest of its line around (the tag with it), zero-width and line separators
  // hide or break it; the device page refuses such names, and registration drops them.
  it.each([
    ['a right-to-left override', 'Plinth\u202eppa yb nevig eman'],
    ['a bidi isolate and a zero-width space', 'Plinth\u2067\u200bHelper\u2069'],
    ['a line separator and a C1 next-line', 'Plinth\u2028Official\u0085Helper'],
  ])('keeps %s out of the registration and the consent page', async (_case, name) => {
    const res = await loopbackFetch(`${server.appUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    });
    expect(res.status).toBe(201);
    const registered = (await res.json()) as { client_id: string; client_name: string };
    const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
    expect(registered.client_name).not.toMatch(hidden);
    expect(registered.client_name).toMatch(/^Plinth/);
    const consent = await person.get(`/oauth/authorize?${new URLSearchParams(await authorizeQuery(registered.client_id, oauth.generateRandomCodeVerifier()))}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('name given by the app');
    expect(consent.text.replace(/[\n\r\t]/g, '')).not.toMatch(hidden);
  });

  it('cleans a name stored before registration dropped such characters', async () => {
    const id = `mcp_stored${Date.now().toString(36)}`;
    await server.store.putOAuthClient({ id, kind: 'registered', name: 'Plinth\u202eppa yb nevig eman', redirectUris: [redirectUri], createdAt: Date.now() });
    const consent = await person.get(`/oauth/authorize?${new URLSearchParams(await authorizeQuery(id, oauth.generateRandomCodeVerifier()))}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Connect Plinthppa yb nevig eman to Plinth?');
    expect(consent.text).not.toContain('\u202e');
  });
});

describe('tokens taken to the wrong place', () => {
  it.each(['/v1/me', '/v1/sites'])('answers an OAuth access token on the REST API %s with 401 (SPEC 5)', async (path) => {
    const { access } = await tokensFor();
    const res = await request({ port: server.port, host: `api.localhost:${server.port}`, path, headers: { authorization: `Bearer ${access}` } });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('answers a refresh token on the MCP server with 401', async () => {
    const { refresh: refreshToken } = await tokensFor();
    expect(await mcpStatus(refreshToken)).toBe(401);
  });

  it('refuses, at authorization, a resource that is not this MCP server', async () => {
    const params = await authorizeQuery(clientId, oauth.generateRandomCodeVerifier(), { resource: 'https://evil.example/mcp' });
    const answer = await person.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(answer.status).toBe(303);
    expect(new URL(String(answer.headers.location)).searchParams.get('error')).toBe('invalid_target');
  });

  it('answers a token issued for another resource with 401 on the MCP server', async () => {
    // No request can get such a code (authorization refuses the resource), so the store makes one.
    const verifier = oauth.generateRandomCodeVerifier();
    await server.store.createAuthorizationCode(hashToken('plc_foreign'), {
      clientId,
      accountId: server.store.getSession(hashToken(person.session()!))!.accountId,
      redirectUri,
      codeChallenge: await oauth.calculatePKCECodeChallenge(verifier),
      resource: 'https://other.example/mcp',
      scope: 'sites',
      expiresAt: Date.now() + clock.offsetMs + 60_000,
    });
    const answer = await exchange('plc_foreign', verifier, { resource: 'https://other.example/mcp' });
    expect(answer.status).toBe(200);
    expect(await mcpStatus(answer.body.access_token!)).toBe(401);
  });

  it('answers an access token past its hour with 401', async () => {
    const { access } = await tokensFor();
    clock.offsetMs += 3600_000 + 1000;
    expect(await mcpStatus(access)).toBe(401);
  });
});

describe('making the server fetch for you', () => {
  it('caps the metadata documents one network may make the server fetch per hour', async () => {
    const fetched: string[] = [];
    // Stands in for the network fetch (it is outside the process); the cap sits before it.
    const capped = await startAppServer({ PLINTH_OAUTH_METADATA_FETCHES_PER_NETWORK: '2' }, undefined, {
      fetchClientMetadata: async (url) => {
        fetched.push(url);
        return { client_id: url, client_name: 'Fetched', redirect_uris: [redirectUri] };
      },
    });
    try {
      const visitor = new AppClient(capped);
      const statuses: number[] = [];
      for (const path of ['/a.json', '/b.json', '/c.json', '/a.json']) {
        const query = new URLSearchParams({
          response_type: 'code',
          client_id: `https://apps.example${path}`,
          redirect_uri: redirectUri,
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
        });
        statuses.push((await visitor.get(`/oauth/authorize?${query}`)).status);
      }
      // Two fetches, then 429; a document already fetched is used from the cache without a fetch.
      expect(statuses).toEqual([303, 303, 429, 303]);
      expect(fetched).toEqual(['https://apps.example/a.json', 'https://apps.example/b.json']);
    } finally {
      await capped.close();
    }
  });
});
