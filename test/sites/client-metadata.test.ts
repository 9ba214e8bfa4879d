import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClientMetadataFetcher, type ClientMetadataFetcher } from '../../src/sites/index.js';
import { startAppServer, type AppServer } from '../app/browser.js';
import { AppClient } from '../app/http-client.js';
import { tempDir } from '../helpers/sites.js';
import { loopbackFetch } from '../mcp/loopback-fetch.js';

/**
 * Client ID Metadata Documents: a real https server on loopback (with a certificate made for the
 * test) serves the documents; the fetcher's fences are checked, then a whole authorization with a
 * URL as client_id.
 */

let dir: string;
let cert: Buffer;
let https: Server;
let base: string;
let fetcher: ClientMetadataFetcher;
const redirectUri = 'http://127.0.0.1:7777/callback';

beforeAll(async () => {
  dir = tempDir('plinth-cimd-');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  cert = readFileSync(join(dir, 'cert.pem'));
  https = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
    const path = req.url ?? '/';
    if (path === '/client.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: `${base}/client.json`, client_name: 'Metadata App', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }));
    } else if (path === '/other-id.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: 'https://elsewhere.example/client.json', redirect_uris: [redirectUri] }));
    } else if (path === '/redirect.json') {
      res.writeHead(302, { location: '/client.json' });
      res.end();
    } else if (path === '/big.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ padding: 'x'.repeat(100 * 1024) }));
    } else if (path === '/slow.json') {
      // Never answers.
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<h1>not json</h1>');
    }
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  base = `https://localhost:${(https.address() as { port: number }).port}`;
  fetcher = createClientMetadataFetcher({ allowLoopback: true, ca: cert, timeoutMs: 500 });
});

afterAll(async () => {
  https?.closeAllConnections();
  await new Promise((resolve) => https?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('fetching a client metadata document', () => {
  it('fetches and parses the document', async () => {
    expect(await fetcher(`${base}/client.json`)).toMatchObject({ client_name: 'Metadata App', redirect_uris: [redirectUri] });
  });

  it.each([
    ['a redirect', '/redirect.json', /302/],
    ['a body over the size limit', '/big.json', /larger than/],
    ['a server that does not answer in time', '/slow.json', /did not answer/],
    ['a body that is not JSON', '/page', /not JSON/],
  ])('refuses %s', async (_name, path, message) => {
    await expect(fetcher(`${base}${path}`)).rejects.toThrow(message);
  });

  it('refuses loopback addresses unless the server itself runs on localhost', async () => {
    const strict = createClientMetadataFetcher({ allowLoopback: false, ca: cert, timeoutMs: 500 });
    await expect(strict(`${base}/client.json`)).rejects.toThrow(/not a public address/);
  });

  it('refuses anything but https', async () => {
    await expect(fetcher(`http://localhost:1/client.json`)).rejects.toThrow(/https/);
  });
});

describe('an authorization with a URL as client_id', () => {
  let server: AppServer;
  let person: AppClient;

  beforeAll(async () => {
    server = await startAppServer({}, undefined, { fetchClientMetadata: fetcher });
    person = new AppClient(server);
    await person.signIn(`cimd-${Date.now().toString(36)}@example.com`);
  });
  afterAll(() => server?.close());

  it('names the app from its document, and the code flow works with the URL as client_id', async () => {
    const clientId = `${base}/client.json`;
    const verifier = oauth.generateRandomCodeVerifier();
    const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'cimd', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
    const consent = await person.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Connect Metadata App to Plinth?');
    expect(consent.text).toContain(`described by ${new URL(base).host}`);
    const answer = await person.post('/oauth/authorize', { ...params, decision: 'allow', csrf: await person.formToken(`/oauth/authorize?${new URLSearchParams(params)}`) });
    const code = new URL(String(answer.headers.location)).searchParams.get('code')!;
    const token = await loopbackFetch(`${server.appUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId }),
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ access_token: expect.stringMatching(/^pla_/) });
  });

  it('refuses a document that names another client_id, without redirecting', async () => {
    const params = { response_type: 'code', client_id: `${base}/other-id.json`, redirect_uri: redirectUri, code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' };
    const refused = await person.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(refused.status).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(refused.text).toContain('must name its own URL');
  });
});
