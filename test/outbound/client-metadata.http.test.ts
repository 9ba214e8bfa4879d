import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import {
  CLIENT_METADATA_UNAVAILABLE,
  createClientMetadataFetcher,
  type ClientMetadataFetcher,
  type ClientMetadataFetchOptions,
} from '../../src/outbound/index.js';
import { AppClient } from '../app/http-client.js';
import { useAppServer } from '../helpers/fixtures.js';
import { METADATA_REDIRECT_URI as redirectUri, startMetadataServer, type MetadataServer } from '../helpers/metadata-server.js';
import { tempDir } from '../helpers/sites.js';
import { loopbackFetch } from '../mcp/loopback-fetch.js';

/**
 * Client ID Metadata Documents: a real https server on loopback (with a certificate made for the
 * test) serves the documents; the fetcher's fences are checked, then a whole authorization with a
 * URL as client_id. DNS is the one thing stood in for (`lookup`), and only with loopback answers.
 */

let dir: string;
let metadata: MetadataServer;
let base: string;
let closedPort: number;
let fetcher: ClientMetadataFetcher;
const logged: { event: string; reason?: string; client_id?: string }[] = [];
const log = createLogger({ level: 'debug', write: (line) => logged.push(JSON.parse(line)) });

const fetcherWith = (options: Partial<ClientMetadataFetchOptions> = {}): ClientMetadataFetcher =>
  createClientMetadataFetcher({ allowLoopback: true, ca: metadata.cert, timeoutMs: 500, log, ...options });

/** A port nothing listens on (taken, then let go). */
async function freedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  dir = tempDir('plinth-cimd-');
  metadata = await startMetadataServer(dir);
  base = `https://localhost:${metadata.port}`;
  closedPort = await freedPort();
  fetcher = fetcherWith();
});

afterAll(async () => {
  await metadata?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fetching a client metadata document', () => {
  it('fetches and parses the document', async () => {
    expect(await fetcher(`${base}/client.json`)).toMatchObject({ client_name: 'Metadata App', redirect_uris: [redirectUri] });
  });

  it('fetches from an IP literal, checking the certificate against that address', async () => {
    expect(await fetcher(`https://127.0.0.1:${metadata.port}/client.json`)).toMatchObject({ client_id: `https://127.0.0.1:${metadata.port}/client.json` });
    expect(metadata.requests.at(-1)).toMatchObject({ host: `127.0.0.1:${metadata.port}`, servername: false });
  });

  it('connects to the address it checked, with no second lookup of the name', async () => {
    // DNS rebinding: the name answers 127.0.0.1 first, then something else. The server listens on
    // 127.0.0.1 only, so a connection made after a second lookup would fail.
    const answers = ['127.0.0.1', '127.0.0.2'];
    let lookups = 0;
    const pinned = fetcherWith({ lookup: async () => [{ address: answers[Math.min(lookups++, 1)]!, family: 4 }] });
    const before = metadata.connections();
    expect(await pinned(`https://localhost:${metadata.port}/client.json`)).toMatchObject({ client_name: 'Metadata App' });
    expect(lookups).toBe(1);
    expect(metadata.connections()).toBe(before + 1);
    // The name still travels, for the certificate and the virtual host.
    expect(metadata.requests.at(-1)).toMatchObject({ host: `localhost:${metadata.port}`, servername: 'localhost', localAddress: '127.0.0.1' });
  });

  it('connects to the name’s address, not to what the system resolver says for it', async () => {
    // The stand-in DNS says localhost is 127.0.0.2, where nothing listens; /etc/hosts says
    // 127.0.0.1, where the document is. Refused means the connection went where it was checked.
    const before = metadata.connections();
    const elsewhere = fetcherWith({ lookup: async () => [{ address: '127.0.0.2', family: 4 }] });
    await expect(elsewhere(`${base}/client.json`)).rejects.toThrow(CLIENT_METADATA_UNAVAILABLE);
    expect(metadata.connections()).toBe(before);
    expect(logged.at(-1)?.reason).toMatch(/connection to 127\.0\.0\.2 failed/);
  });

  // Every failure gets the same message, so the answer cannot tell an open port from a closed one
  // or a refused address from a slow one; the reason is only in the debug log.
  it.each<[string, () => string, Partial<ClientMetadataFetchOptions>, RegExp]>([
    ['a redirect', () => `${base}/redirect.json`, {}, /answered 302/],
    ['a 404', () => `${base}/missing.json`, {}, /answered 404/],
    ['a body over the size limit', () => `${base}/big.json`, {}, /larger than 65536 bytes/],
    ['a server that does not answer in time', () => `${base}/slow.json`, {}, /no answer within 500 ms/],
    ['a body that is not JSON', () => `${base}/page`, {}, /not JSON/],
    ['a JSON array', () => `${base}/array.json`, {}, /not a JSON object/],
    ['a closed port', () => `https://127.0.0.1:${closedPort}/client.json`, {}, /connection to 127\.0\.0\.1 failed \(connect ECONNREFUSED/],
    ['plain http', () => `http://localhost:${metadata.port}/client.json`, {}, /not https/],
    ['not a URL', () => 'https://', {}, /Invalid URL/],
    ['loopback on an install that is not on localhost', () => `${base}/client.json`, { allowLoopback: false }, /address 127\.0\.0\.1 is not fetchable/],
    [
      'a mapped loopback address on such an install',
      () => `https://[::ffff:127.0.0.1]:${metadata.port}/client.json`,
      { allowLoopback: false },
      /address ::ffff:7f00:1 is not fetchable/,
    ],
    // The stand-in DNS fails for a name /etc/hosts knows, so no query leaves the machine whatever happens.
    [
      'a name that does not resolve',
      () => `${base}/client.json`,
      { lookup: () => Promise.reject(new Error('getaddrinfo ENOTFOUND localhost')) },
      /lookup failed \(getaddrinfo ENOTFOUND/,
    ],
    ['a name with no addresses', () => `${base}/client.json`, { lookup: async () => [] }, /no addresses/],
    // A name whose DNS server never answers: the system resolver would keep the request for
    // half a minute and more, well past the few seconds a fetch is allowed.
    ['a name whose lookup never finishes', () => `${base}/client.json`, { lookup: () => new Promise(() => {}) }, /name not resolved within 500 ms/],
    [
      'a name with one internal address among fetchable ones',
      () => `${base}/client.json`,
      {
        lookup: async () => [
          { address: '127.0.0.1', family: 4 },
          { address: '10.0.0.1', family: 4 },
        ],
      },
      /address 10\.0\.0\.1 is not fetchable/,
    ],
  ])('refuses %s with the one generic message', async (_name, url, options, reason) => {
    const before = logged.length;
    const err = await fetcherWith(options)(url()).then(
      () => undefined,
      (e: unknown) => e as { code: string; message: string; details: unknown },
    );
    expect(err).toMatchObject({ code: 'bad_request', message: CLIENT_METADATA_UNAVAILABLE, details: { oauth_error: 'invalid_client' } });
    const entry = logged.slice(before).find((line) => line.event === 'oauth.client_metadata_unavailable');
    expect(entry, 'the reason is logged').toMatchObject({ level: 'debug', client_id: url() });
    expect(entry?.reason).toMatch(reason);
  });

  it('counts the lookup against the deadline: the fetch as a whole has it', async () => {
    // 400 ms to find the name, then a server that does not answer: the fetch ends at 500 ms,
    // where it ended at 900 ms when the deadline started after the lookup.
    const slowName = fetcherWith({ lookup: () => new Promise((resolve) => setTimeout(() => resolve([{ address: '127.0.0.1', family: 4 }]), 400)) });
    const start = performance.now();
    await expect(slowName(`${base}/slow.json`)).rejects.toThrow(CLIENT_METADATA_UNAVAILABLE);
    expect(performance.now() - start).toBeLessThan(800);
  });

  it('makes no connection for an address it refuses', async () => {
    const before = metadata.connections();
    const strict = fetcherWith({ allowLoopback: false });
    for (const host of ['localhost', '127.0.0.1', '127.1', '2130706433', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
      await expect(strict(`https://${host}:${metadata.port}/client.json`)).rejects.toThrow(CLIENT_METADATA_UNAVAILABLE);
    }
    expect(metadata.connections()).toBe(before);
  });
});

describe('an authorization with a URL as client_id', () => {
  // The fetcher is made in the file's beforeAll, which runs before this server starts.
  const server = useAppServer({}, { fetchClientMetadata: (...args: Parameters<ClientMetadataFetcher>) => fetcher(...args) });
  let person: AppClient;

  beforeAll(async () => {
    person = new AppClient(server);
    await person.signIn(`cimd-${Date.now().toString(36)}@example.com`);
  });

  it('names the app from its document, and the code flow works with the URL as client_id', async () => {
    const clientId = `${base}/client.json`;
    const verifier = oauth.generateRandomCodeVerifier();
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      state: 'cimd',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const consent = await person.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Connect Metadata App to Plinth?');
    expect(consent.text).toContain(`described by ${new URL(base).host}`);
    const answer = await person.post('/oauth/authorize', {
      ...params,
      decision: 'allow',
      csrf: await person.formToken(`/oauth/authorize?${new URLSearchParams(params)}`),
    });
    const code = new URL(String(answer.headers.location)).searchParams.get('code')!;
    const token = await loopbackFetch(`${server.appUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId }),
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ access_token: expect.stringMatching(/^pla_/) });
  });

  it('refuses a document that names another client_id, without redirecting', async () => {
    const params = {
      response_type: 'code',
      client_id: `${base}/other-id.json`,
      redirect_uri: redirectUri,
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'S256',
    };
    const refused = await person.get(`/oauth/authorize?${new URLSearchParams(params)}`);
    expect(refused.status).toBe(400);
    expect(refused.headers.location).toBeUndefined();
    expect(refused.text).toContain('must name its own URL');
  });
});
