import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { startAppServer, type AppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { loopbackFetch } from './loopback-fetch.js';
import { rpc } from './mcp-helpers.js';

/**
 * The authorization server checked by an independent OAuth client library (oauth4webapi): RFC 8414
 * and 9728 discovery, RFC 7591 registration, the code flow with PKCE and the RFC 9207 `iss`
 * check, refresh rotation, RFC 7009 revocation, and every refusal that guards a token.
 */

let server: AppServer;
let person: AppClient;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let mcp: string;
const clock = { offsetMs: 0 };
const redirectUri = 'http://127.0.0.1:7777/callback';
const options = { [oauth.customFetch]: loopbackFetch as never, [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  server = await startAppServer({}, () => Date.now() + clock.offsetMs);
  mcp = `http://mcp.localhost:${server.port}`;
  person = new AppClient(server);
  await person.signIn(`as-${Date.now().toString(36)}@example.com`);
  const issuer = new URL(server.appUrl);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }));
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [redirectUri], client_name: 'oauth4webapi', token_endpoint_auth_method: 'none' },
      options,
    ),
  );
  client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
});

afterAll(() => server?.close());

/** A person approves an authorization request on the consent page; returns where the browser goes. */
async function approve(params: Record<string, string>, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const query = new URLSearchParams(params).toString();
  const csrf = await person.formToken(`/oauth/authorize?${query}`);
  const answer = await person.post('/oauth/authorize', { ...params, csrf, decision });
  expect(answer.status, answer.text.slice(0, 300)).toBe(303);
  return new URL(String(answer.headers.location));
}

async function authorize(extra: Record<string, string> = {}): Promise<{ code: URLSearchParams; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const back = await approve({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    resource: `${mcp}/mcp`,
    ...extra,
  });
  // Checks `iss` (RFC 9207) and `state` as a careful client does.
  return { code: oauth.validateAuthResponse(as, client, back, state), verifier };
}

async function exchange(code: URLSearchParams, verifier: string, resource = `${mcp}/mcp`) {
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), code, redirectUri, verifier, {
    ...options,
    additionalParameters: { resource },
  });
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

async function refresh(token: string) {
  return oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, options));
}

async function refusal(promise: Promise<unknown>): Promise<{ error: string; status: number }> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e as oauth.ResponseBodyError,
  );
  expect(err, 'expected the server to refuse').toBeInstanceOf(oauth.ResponseBodyError);
  return { error: err!.error, status: err!.status };
}

const mcpStatus = async (token: string): Promise<number> => (await rpc(server, { token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status;

describe('discovery', () => {
  it('publishes RFC 8414 metadata whose issuer is the app URL, byte for byte', () => {
    expect(as.issuer).toBe(server.appUrl);
    expect(as).toMatchObject({
      authorization_endpoint: `${server.appUrl}/oauth/authorize`,
      token_endpoint: `${server.appUrl}/oauth/token`,
      registration_endpoint: `${server.appUrl}/oauth/register`,
      revocation_endpoint: `${server.appUrl}/oauth/revoke`,
      device_authorization_endpoint: `${server.appUrl}/oauth/device_authorization`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      scopes_supported: ['sites'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(as.token_endpoint_auth_methods_supported).toContain('none');
  });

  it('answers the OpenID configuration alias with the same document', async () => {
    const alias = await loopbackFetch(`${server.appUrl}/.well-known/openid-configuration`);
    expect(await alias.json()).toEqual(JSON.parse(JSON.stringify(as)));
  });

  it.each(['/', '/mcp'])('publishes protected resource metadata for %s', async (path) => {
    const resource = new URL(`${mcp}${path}`);
    const metadata = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, options));
    expect(metadata.resource).toBe(`${mcp}${path}`);
    expect(metadata.authorization_servers).toEqual([server.appUrl]);
    expect(metadata.scopes_supported).toEqual(['sites']);
  });
});

describe('cross-origin programs', () => {
  it('answers CORS preflights and sets no cookie on the endpoints programs call', async () => {
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke', '/.well-known/oauth-authorization-server']) {
      const preflight = await loopbackFetch(`${server.appUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    }
    const metadata = await loopbackFetch(`${server.appUrl}/.well-known/oauth-authorization-server`);
    expect(metadata.headers.get('set-cookie')).toBeNull();
    const token = await loopbackFetch(`${server.appUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password' }) });
    expect(token.status).toBe(401);
    expect(await token.json()).toMatchObject({ error: 'invalid_client' });
    expect(token.headers.get('set-cookie')).toBeNull();
  });
});

describe('registration', () => {
  it('registers public clients only, and only https or loopback redirect URIs', async () => {
    const plain = await loopbackFetch(`${server.appUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://example.com/cb'] }),
    });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    const secretAsked = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' },
        options,
      ),
    );
    expect(secretAsked.token_endpoint_auth_method).toBe('none');
    expect(secretAsked.client_secret).toBeUndefined();
  });
});

describe('the code flow', () => {
  it('issues a one-hour pla_ access token and a refresh token bound to the MCP resource', async () => {
    const { code, verifier } = await authorize();
    const tokens = await exchange(code, verifier);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'sites' });
    expect(tokens.access_token).toMatch(/^pla_/);
    expect(tokens.refresh_token).toMatch(/^plr_/);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    const rest = await loopbackFetch(`${server.apiUrl}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(rest.status).toBe(401);
  });

  it('refuses a wrong PKCE verifier, and the code is spent after it', async () => {
    const { code, verifier } = await authorize();
    expect(await refusal(exchange(code, oauth.generateRandomCodeVerifier()))).toEqual({ error: 'invalid_grant', status: 400 });
    expect((await refusal(exchange(code, verifier))).error).toBe('invalid_grant');
  });

  it('refuses a reused code and revokes the tokens it gave', async () => {
    const { code, verifier } = await authorize();
    const tokens = await exchange(code, verifier);
    expect((await refusal(exchange(code, verifier))).error).toBe('invalid_grant');
    expect(await mcpStatus(tokens.access_token)).toBe(401);
    expect((await refusal(refresh(tokens.refresh_token!))).error).toBe('invalid_grant');
  });

  it('refuses a code after its 60 seconds', async () => {
    const { code, verifier } = await authorize();
    clock.offsetMs += 61_000;
    expect((await refusal(exchange(code, verifier))).error).toBe('invalid_grant');
  });

  it('refuses a resource the server does not serve, at authorization and at the token endpoint', async () => {
    // Refused before any consent page: the request itself is sent back to the app with the error.
    const verifier = oauth.generateRandomCodeVerifier();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state: 's1',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: 'https://evil.example/mcp',
    });
    const answer = await person.get(`/oauth/authorize?${query}`);
    expect(answer.status).toBe(303);
    const back = new URL(String(answer.headers.location));
    expect(back.searchParams.get('error')).toBe('invalid_target');
    expect(back.searchParams.get('state')).toBe('s1');
    expect(back.searchParams.get('iss')).toBe(server.appUrl);

    const { code, verifier: good } = await authorize();
    expect((await refusal(exchange(code, good, 'https://evil.example/mcp'))).error).toBe('invalid_target');
  });

  it('accepts the root and /mcp as the same server, but no token for another audience', async () => {
    const { code, verifier } = await authorize({ resource: mcp });
    const tokens = await exchange(code, verifier, mcp);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    expect((await rpc(server, { path: '/', token: tokens.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).status).toBe(200);

    // A code bound (by the store, as no request can) to another resource gives a token MCP refuses.
    const other = oauth.generateRandomCodeVerifier();
    await server.store.createAuthorizationCode(hashToken('plc_other'), {
      clientId: client.client_id,
      accountId: server.store.getSession(hashToken(person.session()!))!.accountId,
      redirectUri,
      codeChallenge: await oauth.calculatePKCECodeChallenge(other),
      resource: 'https://other.example/mcp',
      scope: 'sites',
      expiresAt: Date.now() + clock.offsetMs + 60_000,
    });
    const back = new URL(`${redirectUri}?${new URLSearchParams({ code: 'plc_other', iss: server.appUrl })}`);
    const foreign = await exchange(oauth.validateAuthResponse(as, client, back, oauth.skipStateCheck), other, 'https://other.example/mcp');
    expect(await mcpStatus(foreign.access_token)).toBe(401);
  });

  it('shows the person an error, not a redirect, for an unregistered redirect URI; loopback ports may differ', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const base = {
      response_type: 'code',
      client_id: client.client_id,
      state: 's',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const foreign = await person.get(`/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: 'https://evil.example/cb' })}`);
    expect(foreign.status).toBe(400);
    expect(foreign.headers.location).toBeUndefined();
    expect(foreign.text).toContain('did not register');
    const otherPort = await person.get(`/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: 'http://127.0.0.1:9999/callback' })}`);
    expect(otherPort.status).toBe(200);
    expect(otherPort.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:9999");
    const noPkce = await person.get(`/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: redirectUri, code_challenge_method: 'plain' })}`);
    expect(noPkce.status).toBe(303);
    expect(new URL(String(noPkce.headers.location)).searchParams.get('error')).toBe('invalid_request');
  });
});

describe('tokens over time', () => {
  it('a token past its hour gets 401 on the MCP server; the refresh gives a new one', async () => {
    const { code, verifier } = await authorize();
    const tokens = await exchange(code, verifier);
    clock.offsetMs += 3600_000 + 1000;
    const expired = await rpc(server, { token: tokens.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toMatch(
      /^Bearer error="invalid_token".*resource_metadata="http:\/\/mcp\.localhost:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const renewed = await refresh(tokens.refresh_token!);
    expect(await mcpStatus(renewed.access_token)).toBe(200);
  });

  it('rotates refresh tokens; replaying an old one revokes the whole grant', async () => {
    const { code, verifier } = await authorize();
    const first = await exchange(code, verifier);
    const second = await refresh(first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await mcpStatus(second.access_token)).toBe(200);

    expect((await refusal(refresh(first.refresh_token!))).error).toBe('invalid_grant');
    // Everyone holding tokens of this grant is out, the legitimate app included.
    expect(await mcpStatus(second.access_token)).toBe(401);
    expect((await refusal(refresh(second.refresh_token!))).error).toBe('invalid_grant');
  });

  it('refuses a refresh token presented by another client', async () => {
    const { code, verifier } = await authorize();
    const tokens = await exchange(code, verifier);
    const stranger: oauth.Client = { client_id: 'mcp_someone_else', token_endpoint_auth_method: 'none' };
    const response = await oauth.refreshTokenGrantRequest(as, stranger, oauth.None(), tokens.refresh_token!, options);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await mcpStatus((await refresh(tokens.refresh_token!)).access_token)).toBe(200);
  });

  it('revokes a refresh token (RFC 7009), which disconnects the app', async () => {
    const { code, verifier } = await authorize();
    const tokens = await exchange(code, verifier);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, options));
    expect(await mcpStatus(tokens.access_token)).toBe(401);
    expect((await refusal(refresh(tokens.refresh_token!))).error).toBe('invalid_grant');
  });
});
