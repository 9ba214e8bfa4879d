import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { accountWithToken } from '../api/api-helpers.js';
import { freePort } from '../helpers/edge.js';
import { callApi, request } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { waitUntil } from '../helpers/wait.js';
import { publishSite, tempDir } from '../helpers/sites.js';
import { slowUpload } from '../helpers/slow-client.js';

/**
 * The operator listener of the built service (issue 31, "Health that tells the truth"): health,
 * readiness and Prometheus metrics on a port of its own, summed over two HTTP threads; the TLS
 * ask on the same listener; the access log; stdout carrying JSON lines only.
 */

const SITE = 'ops-watched';
let main: MainProcess;
let opsPort: number;
let token: string;

const ops = (path: string) => request({ port: opsPort, host: '127.0.0.1', path });
/** The value of one sample line of the exposition, or undefined when it is absent. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

beforeAll(async () => {
  const dataDir = tempDir('plinth-ops-');
  const store = openStore({ dir: dataDir });
  await publishSite(store, SITE, { 'index.html': '<h1>watched</h1>' }, { plan: 'builder' });
  token = (await accountWithToken(store, 'builder')).token;
  await store.close();
  opsPort = await freePort();
  main = await startMain(
    mainEnv(dataDir, {
      PLINTH_THREADS: '2',
      PLINTH_OPS_PORT: String(opsPort),
      PLINTH_ACCESS_LOG: '1',
      PLINTH_API_RATE_PER_CREDENTIAL: '3',
    }),
    { timeoutMs: 60_000 },
  );
}, 90_000);

afterAll(async () => {
  await killMain(main, 'SIGTERM');
});

describe('the operator listener', () => {
  it('answers /healthz while the process runs', async () => {
    const res = await ops('/healthz');
    expect(res.status).toBe(200);
    expect(res.text).toBe('ok\n');
  });

  it.each(['/healthz', '/readyz', '/metrics'])('answers 405 with Allow to a POST of %s', async (path) => {
    const res = await request({ port: opsPort, host: '127.0.0.1', path, method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('answers /readyz 200 with the checks it made', async () => {
    const res = await ops('/readyz');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toEqual({
      ready: true,
      checks: {
        process: { ok: true },
        store: { ok: true },
        disk: { ok: true, free_bytes: expect.any(Number), min_free_bytes: 64 * 1024 * 1024 },
      },
    });
  });

  it('counts requests of both HTTP threads, by host kind and status, with durations and bytes', async () => {
    const before = (await ops('/metrics')).text;
    const served = (line: string) => sample(before, line) ?? 0;
    const ok = served('plinth_http_requests_total{host_kind="site",status="2xx"}');
    const missing = served('plinth_http_requests_total{host_kind="site",status="4xx"}');
    // Connections without keep-alive: the kernel spreads them over both threads.
    const pages = await Promise.all(Array.from({ length: 20 }, () => request({ port: main.port, host: `${SITE}.sites.localhost` })));
    expect(pages.every((page) => page.status === 200)).toBe(true);
    expect((await request({ port: main.port, host: 'no-such-site.sites.localhost' })).status).toBe(404);

    const res = await ops('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.text;
    expect(sample(text, 'plinth_http_requests_total{host_kind="site",status="2xx"}')).toBe(ok + 20);
    expect(sample(text, 'plinth_http_requests_total{host_kind="site",status="4xx"}')).toBe(missing + 1);
    expect(sample(text, 'plinth_http_request_duration_seconds_count{host_kind="site"}')).toBeGreaterThanOrEqual(ok + missing + 21);
    expect(sample(text, 'plinth_http_request_duration_seconds_bucket{host_kind="site",le="+Inf"}')).toBe(
      sample(text, 'plinth_http_request_duration_seconds_count{host_kind="site"}'),
    );
    expect(sample(text, 'plinth_http_response_bytes_total{host_kind="site"}')).toBeGreaterThanOrEqual(20 * '<h1>watched</h1>'.length);
    expect(sample(text, 'plinth_serve_site_cache_lookups_total{cache="site",result="hit"}')).toBeGreaterThan(0);
    // The process defaults, through prom-client.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    expect(sample(text, 'plinth_ready')).toBe(1);
  });

  it('counts deploys by result with their duration, and rate-limit refusals by cap', async () => {
    const deployed = await callApi(main.port, {
      method: 'POST',
      path: '/v1/deploy',
      token,
      body: { files: [{ path: 'index.html', content: '<h1>new</h1>' }] },
    });
    expect(deployed.status).toBe(201);
    const stale = await callApi(main.port, {
      method: 'POST',
      path: '/v1/deploy',
      token,
      body: { site: deployed.json.site.name, base_revision: 'rev_stale', files: [{ path: 'index.html', content: '<h1>late</h1>' }] },
    });
    expect(stale.status).toBe(409);
    // PLINTH_API_RATE_PER_CREDENTIAL=3 per minute: of 8 calls, some are refused even if a minute's window ends among them.
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push((await callApi(main.port, { path: '/v1/me', token })).status);
    expect(answers).toContain(429);

    const text = (await ops('/metrics')).text;
    expect(sample(text, 'plinth_deploys_total{result="published"}')).toBe(1);
    expect(sample(text, 'plinth_deploys_total{result="conflict"}')).toBe(1);
    expect(sample(text, 'plinth_deploy_duration_seconds_count{result="published"}')).toBe(1);
    expect(sample(text, 'plinth_rate_limited_total{cap="api-credential"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'plinth_ingest_capacity_tasks')).toBeGreaterThan(0);
    expect(sample(text, 'plinth_http_requests_total{host_kind="api",status="4xx"}')).toBeGreaterThanOrEqual(2);
  });

  it('answers the TLS ask at / as the ask listener did', async () => {
    expect((await ops(`/?domain=${SITE}.sites.localhost`)).status).toBe(200);
    expect((await ops('/?domain=nobody.example.org')).status).toBe(404);
    expect((await ops('/anything-else')).status).toBe(404);
  });

  it('is not reachable through a public host: the metrics and health stay off the public port', async () => {
    for (const path of ['/metrics', '/readyz', '/healthz']) {
      for (const host of ['localhost', `${SITE}.sites.localhost`, 'api.localhost']) {
        const res = await request({ port: main.port, host, path });
        expect(res.text, `${host}${path}`).not.toMatch(/plinth_http_requests_total|"checks"/);
      }
    }
  });
});

describe('stdout', () => {
  it('carries JSON lines only, with one access-log line per request that never holds a query or a credential', async () => {
    const claim = `/claim/ct_${'x'.repeat(40)}`;
    await request({ port: main.port, host: 'app.localhost', path: `${claim}?code=supersecretcode` });
    let lines: Array<Record<string, unknown>> = [];
    await waitUntil(() => {
      lines = main
        .stdout()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return lines.some((line) => line.event === 'http.request' && line.host === 'app.localhost');
    }, 10_000);
    const access = lines.filter((line) => line.event === 'http.request');
    expect(access.length).toBeGreaterThan(20);
    expect(access.find((line) => line.host === 'app.localhost')).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'info',
      event: 'http.request',
      thread: expect.any(Number),
      host: 'app.localhost',
      method: 'GET',
      path: '/claim/ct_…',
      network: '127.0.0.0/24',
      status: expect.any(Number),
      bytes: expect.any(Number),
      ms: expect.any(Number),
    });
    expect(main.stdout()).not.toContain('supersecretcode');
    expect(main.stdout()).not.toContain('x'.repeat(40));
    expect(main.stdout()).not.toContain(token);
    // The banner is for the person at the terminal: on stderr.
    expect(main.stdout()).not.toContain('running on port');
  });
});

describe('with the former ask settings and PLINTH_METRICS=0', () => {
  let other: MainProcess | undefined;
  let port: number;
  const dataDir = tempDir('plinth-ops-off-');

  beforeAll(async () => {
    port = await freePort();
    // Bodies spooled, so that a spool file shows an upload has arrived.
    other = await startMain(
      mainEnv(dataDir, { PLINTH_TLS_ASK_PORT: String(port), PLINTH_METRICS: '0', PLINTH_MEMORY_BODY_MB: '0', PLINTH_LOG_LEVEL: 'info' }),
      {
        timeoutMs: 60_000,
      },
    );
  }, 90_000);

  afterAll(async () => {
    await killMain(other, 'SIGTERM');
  });

  it('listens on PLINTH_TLS_ASK_PORT, answers health and readiness, and says metrics are off', async () => {
    expect((await request({ port, host: '127.0.0.1', path: '/healthz' })).status).toBe(200);
    expect((await request({ port, host: '127.0.0.1', path: '/readyz' })).status).toBe(200);
    const metrics = await request({ port, host: '127.0.0.1', path: '/metrics' });
    expect(metrics.status).toBe(404);
    expect(metrics.text).toContain('PLINTH_METRICS=0');
    // No access log unless asked for.
    expect(other!.stdout()).not.toContain('http.request');
  });

  it('answers /readyz 503 while a stop waits for a deploy in flight, so load balancers move on first', async () => {
    const body = Buffer.from(JSON.stringify({ files: [{ path: 'index.html', content: '<h1>during the stop</h1>' }] }));
    const upload = slowUpload({
      port: other!.port,
      host: 'api.localhost',
      path: '/v1/deploy',
      headers: { 'content-type': 'application/json' },
      contentLength: body.byteLength,
    });
    upload.write(body.subarray(0, 20));
    expect(await waitUntil(() => readdirSync(join(dataDir, 'tmp', 'uploads')).length > 0, 10_000, 20)).toBe(true);
    other!.child.kill('SIGTERM');
    expect(await waitUntil(() => other!.output().includes('server.stopping'), 10_000, 20)).toBe(true);
    let answer = await request({ port, host: '127.0.0.1', path: '/readyz' });
    await waitUntil(async () => (answer = await request({ port, host: '127.0.0.1', path: '/readyz' })).status === 503, 5000, 20);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text)).toMatchObject({ ready: false, reason: expect.stringContaining('the node is stopping') });
    upload.end(body.subarray(20));
    expect(await upload.outcome).toMatchObject({ status: 201 });
    expect(await other!.exited).toEqual({ code: 0, signal: null });
  });
});
