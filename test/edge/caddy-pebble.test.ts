import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { freePort, httpsGet, startCaddy, startPebble, type Caddy, type Pebble } from '../helpers/edge.js';
import { callApi } from '../helpers/http.js';
import { mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Custom domains end to end with no internet (issue 25): the built service with its ask listener,
 * a DNS server on loopback holding the domain's TXT and A records, Pebble as the CA, and Caddy in
 * front with on-demand TLS. A verified domain gets a certificate and the site's bytes over HTTPS;
 * an unknown one gets no certificate. Needs Debian's caddy and pebble (.ci/run installs them).
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
const DOMAIN = 'www.example.org';
/** Visited first with its name in upper case in the TLS handshake. */
const UPPER_CASE_DOMAIN = 'shop.example.org';
const PAGE = '<h1>Served through Caddy</h1>\n';

let dns: TestDns;
let plinth: MainProcess;
let pebble: Pebble;
let caddy: Caddy;
let root: string;
let siteName: string;

beforeAll(async () => {
  const dir = tempDir('plinth-edge-');
  dns = await startTestDns();
  const askPort = await freePort();
  const dataDir = join(dir, 'data');
  const env = mainEnv(dataDir, {
    PLINTH_DNS_SERVERS: dns.address,
    PLINTH_TLS_ASK_PORT: String(askPort),
    PLINTH_TRUST_PROXY: '1',
    PLINTH_PUBLIC_SITE_URL: 'https://{name}.sites.localhost',
  });
  plinth = await startMain(env);

  // An account and a site, as an operator and an agent would make them.
  const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, 'admin', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
  cli('account', 'create', '--email', 'owner@example.com', '--plan', 'builder');
  const token = cli('token', 'create', '--email', 'owner@example.com');
  const deployed = await callApi(plinth.port, {
    method: 'POST',
    path: '/v1/deploy',
    token,
    body: { files: [{ path: 'index.html', content: PAGE, encoding: 'utf8' }] },
  });
  expect(deployed.status, deployed.text).toBe(201);
  siteName = (deployed.json as { site: { name: string } }).site.name;

  // The domains: attached, their TXT records published, verified.
  for (const domain of [DOMAIN, UPPER_CASE_DOMAIN]) {
    const added = await callApi(plinth.port, { method: 'POST', path: `/v1/sites/${siteName}/domains`, token, body: { domain } });
    expect(added.status, added.text).toBe(201);
    const { verification } = added.json as { verification: { name: string; value: string } };
    dns.txt.set(verification.name, [verification.value]);
    dns.a.set(domain, ['127.0.0.1']);
    const verified = await callApi(plinth.port, { method: 'POST', path: `/v1/sites/${siteName}/domains/${domain}/verify`, token });
    expect(verified.json, verified.text).toMatchObject({ status: 'active' });
  }
  dns.a.set('unknown.example.org', ['127.0.0.1']);

  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  pebble = await startPebble({ dir: join(dir, 'pebble'), dns: dns.address, httpPort, tlsPort: httpsPort });
  root = await pebble.root();
  caddy = await startCaddy({ dir: join(dir, 'caddy'), pebble, upstream: `127.0.0.1:${plinth.port}`, ask: `http://127.0.0.1:${askPort}/`, httpPort, httpsPort });
}, 90_000);

afterAll(async () => {
  await caddy?.stop();
  await pebble?.stop();
  if (plinth && plinth.child.exitCode === null) {
    plinth.child.kill('SIGTERM');
    await plinth.exited;
  }
  await dns?.close();
});

describe('custom domains behind Caddy with certificates from Pebble', () => {
  it('obtains a certificate for a verified domain on its first visit and serves the site over HTTPS', async () => {
    const started = performance.now();
    const first = await httpsGet({ port: caddy.httpsPort, servername: DOMAIN, ca: root });
    const ms = Math.round(performance.now() - started);
    console.info(`edge: first HTTPS request to ${DOMAIN}, certificate issued on demand: ${ms} ms`);
    expect(first.status).toBe(200);
    expect(first.text).toBe(PAGE);
    // The second visit uses the certificate Caddy now holds.
    const again = await httpsGet({ port: caddy.httpsPort, servername: DOMAIN, ca: root, path: '/index.html' });
    expect(again).toEqual({ status: 200, text: PAGE });
    expect(dns.asked).toContain(`TXT _plinth-challenge.${DOMAIN}`);
  }, 60_000);

  it('asks for the name as the records hold it, whatever the case of the name the client sent', async () => {
    // The ask says yes only to the lower-case name (another spelling would be another
    // certificate): Caddy folds the name before it asks, so a client's spelling does not matter.
    const first = await httpsGet({ port: caddy.httpsPort, servername: UPPER_CASE_DOMAIN.toUpperCase(), ca: root });
    expect(first).toEqual({ status: 200, text: PAGE });
  }, 60_000);

  it('gets no certificate for a domain no site has verified', async () => {
    // Caddy asks Plinth, hears 404, and ends the handshake with an alert instead of a certificate.
    const refused = await httpsGet({ port: caddy.httpsPort, servername: 'unknown.example.org', ca: root }).then(
      () => undefined,
      (err: { code?: string; message?: string }) => err,
    );
    expect(refused?.code).toBe('EPROTO');
    expect(refused?.message).toMatch(/alert/i);
    expect(caddy.output()).not.toMatch(/"identifier":"unknown\.example\.org"/);
    expect(dns.asked).not.toContain('A unknown.example.org');
  }, 60_000);
});
