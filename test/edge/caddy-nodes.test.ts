import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { freePort, httpsGet, startCaddyfile, startPebble, type Caddy, type Pebble } from '../helpers/edge.js';
import { request, type TestResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { tempDir } from '../helpers/sites.js';

/**
 * The several-node Caddy set-up that Plinth ships (deploy/Caddyfile, shown in docs/operating.md), run
 * as it is written (issue 31: "the documented Caddy set-up asks any healthy node, not one fixed node"). Its three nodes become
 * 127.0.0.2, 127.0.0.3 and 127.0.0.4, each with the same public and operator ports, as three
 * machines would have: two cluster nodes run, the first of them alive but unready (its free-space
 * bound is past any disk), and the third never starts. Caddy must ask the one ready node whether
 * it may certify a custom domain, and send that domain's visitors to it alone. Needs Debian's
 * caddy, pebble and postgresql.
 */

const DOMAIN = 'www.example.org';
const PAGE = '<h1>Served by a ready node</h1>\n';
const NODE_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

let dns: TestDns;
let cluster: TestCluster;
let pebble: Pebble;
let caddy: Caddy;
let root: string;
let ports: { site: number; ops: number; ask: number };

/** deploy/Caddyfile, which the guide shows, with the test's addresses and ports in place of its examples. */
function shippedCaddyfile(): string {
  const shipped = readFileSync(new URL('../../deploy/Caddyfile', import.meta.url), 'utf8');
  const replace = (text: string, pattern: RegExp, by: (match: string, ...groups: string[]) => string, count: number): string => {
    expect(text.match(pattern), `${pattern} in deploy/Caddyfile`).toHaveLength(count);
    return text.replace(pattern, by);
  };
  let caddyfile = replace(shipped, /10\.0\.0\.1([123]):8000/g, (_m, n) => `${NODE_ADDRESSES[Number(n) - 1]}:${ports.site}`, 3);
  caddyfile = replace(caddyfile, /10\.0\.0\.1([123]):9100/g, (_m, n) => `${NODE_ADDRESSES[Number(n) - 1]}:${ports.ops}`, 3);
  caddyfile = replace(caddyfile, /health_port 9100/g, () => `health_port ${ports.ops}`, 1);
  return replace(caddyfile, /127\.0\.0\.1:9180/g, () => `127.0.0.1:${ports.ask}`, 2);
}

const onNode = (node: number, path: string, init: { method?: string; token?: string; body?: unknown; host?: string } = {}): Promise<TestResponse> =>
  request({
    address: NODE_ADDRESSES[node],
    port: ports.site,
    host: init.host ?? 'api.localhost',
    path,
    method: init.method ?? 'GET',
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
/** How many times a node answered the ask for `name` (its debug log). */
const asked = (node: number, name: string): number =>
  cluster
    .process(node)!
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"tls_ask.answered"') && line.includes(`"domain":"${name}"`)).length;

beforeAll(async () => {
  dns = await startTestDns();
  ports = { site: await freePort(), ops: await freePort(), ask: await freePort() };
  cluster = await startCluster({
    count: 2,
    env: {
      PLINTH_PORT: String(ports.site),
      PLINTH_OPS_PORT: String(ports.ops),
      PLINTH_DNS_SERVERS: dns.address,
      PLINTH_TRUST_PROXY: '1',
      PLINTH_PUBLIC_SITE_URL: 'https://{name}.sites.localhost',
      PLINTH_LOG_LEVEL: 'debug',
      PLINTH_ACCESS_LOG: '1',
    },
    nodeEnv: (index) => ({
      PLINTH_LISTEN_HOST: NODE_ADDRESSES[index]!,
      PLINTH_OPS_HOST: NODE_ADDRESSES[index]!,
      // Node 0 runs and answers, but asks for more free space than any disk has: never ready.
      ...(index === 0 ? { PLINTH_READY_MIN_FREE_MB: String(1024 * 1024) } : {}),
    }),
  });

  const token = (await accountWithToken(cluster.operator, 'builder')).token;
  expect(await waitUntil(async () => (await onNode(0, '/v1/me', { token })).status === 200, 5000, 50)).toBe(true);
  const deployed = await onNode(0, '/v1/deploy', { method: 'POST', token, body: { files: [{ path: 'index.html', content: PAGE }] } });
  expect(deployed.status, deployed.text).toBe(201);
  const site = (JSON.parse(deployed.text) as { site: { name: string } }).site.name;
  const added = await onNode(0, `/v1/sites/${site}/domains`, { method: 'POST', token, body: { domain: DOMAIN } });
  expect(added.status, added.text).toBe(201);
  const { verification } = JSON.parse(added.text) as { verification: { name: string; value: string } };
  dns.txt.set(verification.name, [verification.value]);
  for (const name of [DOMAIN, 'docs.example.com', 'api.example.com', 'mcp.example.com', 'app.example.com']) dns.a.set(name, ['127.0.0.1']);
  const verified = await onNode(0, `/v1/sites/${site}/domains/${DOMAIN}/verify`, { method: 'POST', token });
  expect(JSON.parse(verified.text), verified.text).toMatchObject({ status: 'active' });

  const dir = tempDir('plinth-edge-nodes-');
  const [httpPort, httpsPort] = [await freePort(), await freePort()];
  pebble = await startPebble({ dir: join(dir, 'pebble'), dns: dns.address, httpPort, tlsPort: httpsPort });
  root = await pebble.root();
  // Debian's Caddy (2.6) registers one ACME account per certificate when it starts without one,
  // and can keep one account's key with another's address; the guide has it register first, with
  // the global options and one service name, as done here.
  const shipped = shippedCaddyfile();
  const globalOptions = shipped.slice(0, shipped.indexOf('\n}\n') + 3);
  const registering = await startCaddyfile({
    dir: join(dir, 'caddy'),
    pebble,
    caddyfile: `${globalOptions}\ndocs.example.com {\n\trespond 204\n}\n`,
    httpPort,
    httpsPort,
  });
  const registered = await waitUntil(() => registering.output().includes('"certificate obtained successfully"'), 30_000, 100);
  await registering.stop();
  expect(registered, registering.output().slice(-4000)).toBe(true);
  caddy = await startCaddyfile({ dir: join(dir, 'caddy'), pebble, caddyfile: shipped, httpPort, httpsPort });
}, 240_000);

afterAll(async () => {
  await caddy?.stop();
  await pebble?.stop();
  await cluster?.stop();
  await dns?.close();
});

describe('custom domains behind the shipped Caddyfile for several nodes', () => {
  it('passes the ask only to a ready node: a stopped node and an unready one are left out', async () => {
    const ask = () => request({ port: ports.ask, host: '127.0.0.1', path: '/?domain=probe.example.org' });
    // Caddy's first health checks: once they ran, twenty asks in a row reach node 1 alone.
    const settled = await waitUntil(
      async () => {
        const before = [asked(0, 'probe.example.org'), asked(1, 'probe.example.org')];
        for (let i = 0; i < 20; i++) expect((await ask()).status).toBe(404);
        return asked(0, 'probe.example.org') === before[0] && asked(1, 'probe.example.org') === before[1]! + 20;
      },
      30_000,
      500,
    );
    expect(settled, caddy.output().slice(-2000)).toBe(true);
    // Nothing but the ask goes through Caddy's ask site.
    expect((await request({ port: ports.ask, host: '127.0.0.1', path: '/metrics' })).status).toBe(404);
  }, 60_000);

  it('obtains a certificate for a verified domain on its first visit, asking the ready node, which serves the site', async () => {
    const first = await httpsGet({ port: caddy.httpsPort, servername: DOMAIN, ca: root }).catch((error: Error) => {
      const lines = caddy
        .output()
        .split('\n')
        .filter((line) => !line.includes('health_checker'));
      throw new Error(`${error.message}; Caddy said:\n${lines.slice(-40).join('\n')}`);
    });
    expect(first).toEqual({ status: 200, text: PAGE });
    expect(asked(1, DOMAIN)).toBeGreaterThan(0);
    expect(asked(0, DOMAIN)).toBe(0);
    // Visitors too went to node 1 only (its access log), never to the unready node 0.
    const visits = (node: number) =>
      cluster
        .process(node)!
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"http.request"') && line.includes(`"host":"${DOMAIN}"`));
    // Access-log lines leave a thread in batches, within 100 ms.
    expect(await waitUntil(() => visits(1).length > 0, 5000, 50)).toBe(true);
    expect(visits(0)).toEqual([]);
  }, 60_000);
});
