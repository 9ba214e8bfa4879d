import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { freePort } from '../helpers/edge.js';
import { request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { startNginx, type TestNginx } from '../helpers/nginx.js';
import { tempDir } from '../helpers/sites.js';

/**
 * deploy/nginx-plinth.conf, the load balancer Plinth ships, run by Debian's nginx as the file is
 * written, with only what docs/operating.md tells an operator to replace (the listening ports,
 * the certificate) put in, in front of three cluster nodes with the guide's names, and
 * deploy/nginx-readyz.sh keeping its list of nodes. Every host is served through it, requests
 * spread over every ready node and never reach an unready one (until it is ready), a visitor's
 * network is the one nginx saw, and a node killed while visitors come costs none of them an error.
 */

const NAMES = {
  PLINTH_SITE_DOMAIN: 'example.site',
  PLINTH_DOCS_HOST: 'docs.example.com',
  PLINTH_API_HOST: 'api.example.com',
  PLINTH_MCP_HOST: 'mcp.example.com',
  PLINTH_APP_HOST: 'app.example.com',
  PLINTH_PUBLIC_SITE_URL: 'https://{name}.example.site',
  PLINTH_PUBLIC_DOCS_URL: 'https://docs.example.com',
  PLINTH_PUBLIC_API_URL: 'https://api.example.com',
  PLINTH_PUBLIC_MCP_URL: 'https://mcp.example.com',
  PLINTH_PUBLIC_APP_URL: 'https://app.example.com',
};
const SHIPPED = readFileSync(new URL('../../deploy/nginx-plinth.conf', import.meta.url), 'utf8');
const READYZ = fileURLToPath(new URL('../../deploy/nginx-readyz.sh', import.meta.url));
/** Node 2 starts unready: it asks for more free space than any disk has. */
const NEVER_READY = { PLINTH_READY_MIN_FREE_MB: String(1024 * 1024) };
const ANON_SITES_PER_HOUR = 2;

let cluster: TestCluster;
let nginx: TestNginx;
let cert: string;
let ports: { http: number; https: number };
/** Each node's public and operator ports, kept across restarts as a machine's would be. */
let nodePorts: number[];
let opsPorts: number[];
let nginxDir: string;
let checker: ChildProcess | undefined;
let checkerOutput = '';

/** The shipped file with the operator's values in place of its examples; each example must be there. */
function configured(): string {
  const replace = (text: string, pattern: RegExp, by: () => string, count: number): string => {
    expect(text.match(pattern), `${pattern} in deploy/nginx-plinth.conf`).toHaveLength(count);
    return text.replace(pattern, by);
  };
  let conf = replace(SHIPPED, /listen 443 /g, () => `listen 127.0.0.1:${ports.https} `, 1);
  conf = replace(conf, /listen 80;/g, () => `listen 127.0.0.1:${ports.http};`, 1);
  conf = replace(conf, /\/etc\/ssl\/plinth\/fullchain\.pem/g, () => join(certDir, 'cert.pem'), 1);
  return replace(conf, /\/etc\/ssl\/plinth\/privkey\.pem/g, () => join(certDir, 'key.pem'), 1);
}
let certDir: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One HTTPS request through nginx, as a visitor from `from` (a loopback address) makes it. */
function through(host: string, path = '/', init: { method?: string; body?: string; headers?: Record<string, string>; from?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: ports.https,
        servername: host,
        ca: cert,
        method: init.method ?? 'GET',
        path,
        headers: { host, connection: 'close', ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
        localAddress: init.from,
        agent: false,
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Which node ports served the requests of the access log for `host`. */
const servedBy = (host: string): Set<number> =>
  new Set(
    nginx
      .accessLog()
      .filter((line) => line.split(' ')[2] === host)
      .flatMap((line) => line.split(' ')[0]!.split(/,\s*/))
      .map((address) => Number(address.split(':').pop())),
  );

beforeAll(async () => {
  certDir = tempDir('plinth-nginx-cert-');
  const names = ['*.example.site', 'docs.example.com', 'api.example.com', 'mcp.example.com', 'app.example.com'];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=example.site',
      '-addext',
      `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`,
      '-keyout',
      join(certDir, 'key.pem'),
      '-out',
      join(certDir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  cert = readFileSync(join(certDir, 'cert.pem'), 'utf8');
  nodePorts = [await freePort(), await freePort(), await freePort()];
  opsPorts = [await freePort(), await freePort(), await freePort()];
  cluster = await startCluster({
    count: 3,
    env: { ...NAMES, PLINTH_TRUST_PROXY: '1', PLINTH_ANON_SITES_PER_HOUR: String(ANON_SITES_PER_HOUR) },
    nodeEnv: (node) => ({ PLINTH_PORT: String(nodePorts[node]), PLINTH_OPS_PORT: String(opsPorts[node]), ...(node === 2 ? NEVER_READY : {}) }),
  });
  ports = { http: await freePort(), https: await freePort() };
  // The operator's list of nodes, and the server lines written from it before nginx starts.
  nginxDir = tempDir('plinth-nginx-');
  const nodes = join(nginxDir, 'nodes');
  writeFileSync(
    nodes,
    ['# visitors            operator listener', ...[0, 1, 2].map((n) => `127.0.0.1:${nodePorts[n]} 127.0.0.1:${opsPorts[n]}`), ''].join('\n'),
  );
  execFileSync('sh', [READYZ, '--once', nodes, join(nginxDir, 'plinth-nodes.conf')], { stdio: 'ignore' });
  nginx = await startNginx({ dir: nginxDir, httpConf: configured(), ports: [ports.http, ports.https] });
  checker = spawn('sh', [READYZ, '--interval', '1', '--reload', `kill -HUP ${nginx.child.pid}`, nodes, join(nginxDir, 'plinth-nodes.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  checker.stderr!.on('data', (chunk: Buffer) => (checkerOutput += chunk.toString()));
}, 180_000);

afterAll(async () => {
  if (checker && checker.exitCode === null) {
    const ended = new Promise((resolve) => checker!.once('exit', resolve));
    checker.kill('SIGTERM');
    await ended;
  }
  await nginx?.stop();
  await cluster?.stop();
});

describe('three nodes behind the shipped nginx configuration', () => {
  let site: string;
  const PAGE = '<h1>Through nginx</h1>\n';

  it('lists the ready nodes for nginx and marks the unready one down', () => {
    expect(readFileSync(join(nginxDir, 'plinth-nodes.conf'), 'utf8')).toBe(
      [0, 1, 2].map((n) => `server 127.0.0.1:${nodePorts[n]} max_fails=1 fail_timeout=10s${n === 2 ? ' down' : ''};\n`).join(''),
    );
  });

  it('takes a deploy and serves the site and every host, spreading requests over the ready nodes only', async () => {
    const { token } = await accountWithToken(cluster.operator, 'builder');
    let deployed: Answer | undefined;
    // The operator's token reaches every node's replica within a second.
    for (let i = 0; i < 50 && deployed?.status !== 201; i++) {
      deployed = await through('api.example.com', '/v1/deploy', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ files: [{ path: 'index.html', content: PAGE }] }),
      });
      if (deployed.status !== 201) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(deployed!.status, deployed!.text).toBe(201);
    const { site: created } = JSON.parse(deployed!.text) as { site: { name: string; url: string } };
    site = created.name;
    expect(created.url).toBe(`https://${site}.example.site`);

    const host = `${site}.example.site`;
    for (let i = 0; i < 30; i++) {
      const visit = await through(host);
      // The node that took the deploy serves it at once; the other within a second.
      if (visit.status === 404) await new Promise((resolve) => setTimeout(resolve, 100));
      else expect(visit).toMatchObject({ status: 200, text: PAGE });
    }
    expect([...servedBy(host)].sort()).toEqual([nodePorts[0], nodePorts[1]].sort());

    expect((await through('docs.example.com', '/')).status).toBe(200);
    expect((await through('app.example.com', '/')).status).toBeLessThan(400);
    expect((await through('api.example.com', '/v1/me', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  }, 60_000);

  it('takes a node back once its /readyz says it can serve', async () => {
    await cluster.kill(2, 'SIGTERM');
    await cluster.start(2, { PLINTH_READY_MIN_FREE_MB: '0' });
    const conf = join(nginxDir, 'plinth-nodes.conf');
    expect(await waitUntil(() => !readFileSync(conf, 'utf8').includes('down'), 20_000, 100), checkerOutput).toBe(true);
    const host = `${site}.example.site`;
    const reached = await waitUntil(
      async () => {
        expect((await through(host)).status).toBe(200);
        return servedBy(host).has(nodePorts[2]!);
      },
      20_000,
      20,
    );
    expect(reached, nginx.output()).toBe(true);
  }, 60_000);

  it('sends plain HTTP to the HTTPS address of the same name', async () => {
    const plain = await request({ port: ports.http, host: 'docs.example.com', path: '/quick-start?x=1' });
    expect(plain.status).toBe(308);
    expect(plain.headers.location).toBe('https://docs.example.com/quick-start?x=1');
  });

  it("counts a visitor's network as nginx saw it, whatever X-Forwarded-For the visitor wrote", async () => {
    const anonymous = (from: string, forged: string) =>
      through('api.example.com', '/v1/deploy', {
        method: 'POST',
        from,
        headers: { 'x-forwarded-for': forged },
        body: JSON.stringify({ files: [{ path: 'index.html', content: `<p>${forged}</p>` }] }),
      });
    // Each try claims another network; the cap is per network, counted across the cluster.
    for (let i = 0; i < ANON_SITES_PER_HOUR; i++) expect((await anonymous('127.0.1.5', `198.51.100.${i + 1}`)).status).toBe(201);
    const capped = await anonymous('127.0.1.5', '203.0.113.77');
    expect(capped.status, capped.text).toBe(429);
    // Another visitor, on another network, is not held by the first one's cap.
    expect((await anonymous('127.0.2.5', '198.51.100.1')).status).toBe(201);
  }, 60_000);

  it('loses no visitor when a node is killed while they come, and takes deploys on the others', async () => {
    const host = `${site}.example.site`;
    const statuses = new Map<number, number>();
    let killed = false;
    let afterKill = 0;
    const visitor = async (): Promise<void> => {
      while (afterKill < 150) {
        const visit = await through(host).catch((err: Error) => ({ status: 0, text: err.message }) as Answer);
        statuses.set(visit.status, (statuses.get(visit.status) ?? 0) + 1);
        if (visit.status !== 200) expect.fail(`a visitor got ${visit.status}: ${visit.text.slice(0, 200)}`);
        if (killed) afterKill++;
      }
    };
    const visitors = Promise.all([visitor(), visitor(), visitor(), visitor()]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const victim = nodePorts[1]!;
    const before = servedBy(host).has(victim);
    await cluster.kill(1);
    killed = true;
    await visitors;
    expect(before).toBe(true);
    expect([...statuses.keys()]).toEqual([200]);
    // The list marks it down too (nginx reloaded while visitors came).
    expect(
      await waitUntil(() => readFileSync(join(nginxDir, 'plinth-nodes.conf'), 'utf8').includes(`${victim} max_fails=1 fail_timeout=10s down;`), 10_000, 100),
    ).toBe(true);

    for (let i = 0; i < 3; i++) {
      const deployed = await through('api.example.com', '/v1/deploy', {
        method: 'POST',
        from: `127.0.${10 + i}.5`,
        body: JSON.stringify({ files: [{ path: 'index.html', content: `<p>after ${i}</p>` }] }),
      });
      expect(deployed.status, deployed.text).toBe(201);
    }
  }, 120_000);
});
