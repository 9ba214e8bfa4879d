import { createServer, type Server } from 'node:http';
import { auth, extractWWWAuthenticateParams, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectPage, openPage, signIn } from '../app/browser.js';
import { signInOverHttp } from '../app/http-client.js';
import { loopbackFetch } from './loopback-fetch.js';
import { rpc, structured } from './mcp-helpers.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * The MCP SDK client's own OAuth flow against our authorization server, end to end: discovery from
 * the 401, dynamic registration, the consent page approved by a person in real Chromium, the code
 * exchange, tool calls with the access token, a refresh when the hour is up, and disconnecting the
 * app on the tokens page.
 */

let callback: Server;
let callbackPort: number;
let lastCallback: URLSearchParams | undefined;
const clock = { offsetMs: 0 };
const HOUR_MS = 3600_000;
/** Chromium on a busy 2-core machine can take a few seconds per page. */
const POLL = { timeout: 15_000 };

const server = useAppServer({}, { now: () => Date.now() + clock.offsetMs });

const browser = useBrowser();

beforeAll(async () => {
  // The app's loopback redirect URI (RFC 8252): where the browser lands with the code.
  callback = createServer((req, res) => {
    // Only the redirect itself counts: the browser's later /favicon.ico request to the same
    // origin must not replace the parameters the test reads.
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') lastCallback = url.searchParams;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>Done</title></head><body><p>You can close this window.</p></body></html>');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackPort = (callback.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
});

/** An MCP app's storage of its registration, tokens and PKCE verifier, as the SDK expects. */
class TestProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  readonly stateValue = `st-${Math.random().toString(36).slice(2)}`;

  get redirectUrl(): string {
    return `http://127.0.0.1:${callbackPort}/callback`;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP App',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return this.stateValue;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

const email = `oauth-${Date.now().toString(36)}@example.com`;

describe('the MCP SDK client connects with OAuth', () => {
  const provider = new TestProvider();
  let mcpUrl: URL;

  it('discovers the authorization server from the 401, registers, and is sent to the consent page', async () => {
    mcpUrl = new URL(`http://mcp.localhost:${server.port}/mcp`);
    const unauthorized = await loopbackFetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(unauthorized.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
    expect(resourceMetadataUrl?.href).toBe(`http://mcp.localhost:${server.port}/.well-known/oauth-protected-resource/mcp`);

    const outcome = await auth(provider, { serverUrl: mcpUrl, resourceMetadataUrl, fetchFn: loopbackFetch });
    expect(outcome).toBe('REDIRECT');
    expect(provider.information?.client_id).toMatch(/^mcp_/);
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${server.appUrl}/oauth/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`http://mcp.localhost:${server.port}/mcp`);
  });

  it('a person signs in and allows the app in Chromium; the app gets its code back', async () => {
    const { context, page, errors } = await openPage(browser);
    await page.goto(provider.authorizationUrl!.href);
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, server, email);
    await expect.poll(() => page.getByRole('heading', { name: 'Connect Test MCP App to Plinth?' }).count(), POLL).toBe(1);
    expect(await page.getByText('127.0.0.1 (this computer)').count()).toBe(1);
    await inspectPage(page, 'oauth-consent');
    lastCallback = undefined;
    await page.getByRole('button', { name: 'Allow Test MCP App' }).click();
    await expect.poll(() => lastCallback?.get('code') ?? null, POLL).toMatch(/^plc_/);
    expect(lastCallback!.get('state')).toBe(provider.stateValue);
    expect(lastCallback!.get('iss')).toBe(server.appUrl);
    expect(errors).toEqual([]);
    await context.close();

    const outcome = await auth(provider, { serverUrl: mcpUrl, authorizationCode: lastCallback!.get('code')!, fetchFn: loopbackFetch });
    expect(outcome).toBe('AUTHORIZED');
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'sites' });
    expect(provider.saved!.access_token).toMatch(/^pla_/);
  });

  it('calls tools with the access token; REST refuses it', async () => {
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: loopbackFetch }));
    expect(structured(await client.callTool({ name: 'get_account', arguments: {} }))).toMatchObject({ email, plan: 'free' });
    await client.close();

    const rest = await loopbackFetch(`${server.apiUrl}/v1/me`, { headers: { authorization: `Bearer ${provider.saved!.access_token}` } });
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('renews itself when the hour is up: the SDK refreshes and the refresh token rotates', async () => {
    const before = { ...provider.saved! };
    clock.offsetMs += HOUR_MS + 60_000;
    const expired = await rpc(server, { token: before.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(expired.status).toBe(401);
    expect(expired.headers['www-authenticate']).toContain('error="invalid_token"');

    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: loopbackFetch }));
    expect(structured(await client.callTool({ name: 'list_sites', arguments: {} }))).toMatchObject({ sites: [] });
    await client.close();
    expect(provider.saved!.access_token).not.toBe(before.access_token);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
  });

  it('lists the app on the tokens page; disconnecting it stops its tokens at once', async () => {
    const { context, page, errors } = await openPage(browser);
    await signInOverHttp(context, server, email);
    await page.goto(`${server.appUrl}/tokens`);
    const row = page.getByRole('row', { name: /Test MCP App/ });
    await expect.poll(() => row.count(), POLL).toBe(1);
    await inspectPage(page, 'tokens-connected-apps');
    await page.getByRole('button', { name: 'Disconnect Test MCP App' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), POLL).toContain('The app was disconnected');
    expect(await page.getByRole('row', { name: /Test MCP App/ }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();

    const refused = await rpc(server, { token: provider.saved!.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(refused.status).toBe(401);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: provider.saved!.refresh_token!,
      client_id: String(provider.information!.client_id),
    });
    const refresh = await loopbackFetch(`${server.appUrl}/oauth/token`, { method: 'POST', body: form });
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a person who denies sends the app an access_denied error', async () => {
    const denied = new TestProvider();
    expect(await auth(denied, { serverUrl: mcpUrl, fetchFn: loopbackFetch })).toBe('REDIRECT');
    const { context, page } = await openPage(browser);
    await signInOverHttp(context, server, email);
    await page.goto(denied.authorizationUrl!.href);
    lastCallback = undefined;
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => lastCallback?.get('error') ?? null, POLL).toBe('access_denied');
    expect(lastCallback!.get('state')).toBe(denied.stateValue);
    expect(lastCallback!.get('code')).toBeNull();
    await context.close();
  });
});
