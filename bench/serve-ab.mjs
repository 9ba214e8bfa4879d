// A/B serving bench: this checkout's build against another build (BENCH_BASE, a folder with its
// own dist/), side by side in the same run, on a public site's 2 KB page (the prepared hot path).
// Rounds alternate the order (A,B then B,A …) so machine drift lands on both alike; medians of
// the rounds are reported. For checking that a change to the site host costs public sites nothing.
//
// Env: BENCH_BASE (required: e.g. a `git archive` of main, built), BENCH_ROUNDS (6),
//      BENCH_DURATION (s per round, 3), BENCH_CONNECTIONS (64), PLINTH_THREADS (1),
//      BENCH_ACCEPT_ENCODING (unset: no header, the plain bytes; e.g. `gzip, deflate, br` as
//      browsers send it, to measure the negotiated path and the compressed variant).
import { execFileSync, spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './lib/proc.mjs';
import { parseWrk } from './lib/wrk.mjs';

const env = process.env;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const base = env.BENCH_BASE ? resolve(env.BENCH_BASE) : undefined;
if (!base) throw new Error('set BENCH_BASE to a folder with a built dist/ to compare against');
const rounds = Number(env.BENCH_ROUNDS ?? 6);
const seconds = Number(env.BENCH_DURATION ?? 3);
const connections = Number(env.BENCH_CONNECTIONS ?? 64);
const threads = env.PLINTH_THREADS ?? '1';
const acceptEncoding = env.BENCH_ACCEPT_ENCODING ? ['-H', `Accept-Encoding: ${env.BENCH_ACCEPT_ENCODING}`] : [];
const page = `<!doctype html><html><head><title>Bench</title></head><body>${'<p>bench text for a small page</p>'.repeat(55)}</body></html>`;

async function start(label, root) {
  const dataDir = mkdtempSync(join(tmpdir(), `plinth-ab-${label}-`));
  const port = await freePort();
  const serverEnv = {
    ...env,
    PLINTH_PORT: String(port),
    PLINTH_DATA_DIR: dataDir,
    PLINTH_THREADS: threads,
    PLINTH_LOG_LEVEL: 'silent',
    PLINTH_LISTEN_HOST: '127.0.0.1',
  };
  const cli = join(root, 'dist/cli/plinth.js');
  execFileSync(process.execPath, [cli, 'admin', 'account', 'create', '--email', 'bench@example.com', '--plan', 'builder'], { env: serverEnv, stdio: 'ignore' });
  const token = execFileSync(process.execPath, [cli, 'admin', 'token', 'create', '--email', 'bench@example.com'], {
    env: serverEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  const child = spawn(process.execPath, [join(root, 'dist/main.js')], { env: serverEnv, stdio: 'ignore' });
  try {
    for (let i = 0; ; i++) {
      const me = await call(port, 'GET', '/v1/me', token).catch(() => undefined);
      if (me?.status === 200) break;
      if (i > 200) throw new Error(`${label} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    child.kill('SIGTERM');
    throw err;
  }
  const deployed = JSON.parse((await call(port, 'POST', '/v1/deploy', token, JSON.stringify({ files: [{ path: 'index.html', content: page }] }))).text);
  return { label, port, child, dataDir, site: deployed.site.name };
}

/** One call to the API host over loopback (fetch would drop the Host header). */
function call(port, method, path, token, body) {
  return new Promise((resolvePromise, reject) => {
    const headers = { host: 'api.localhost', authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) };
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolvePromise({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function measure(server) {
  const out = execFileSync(
    'wrk',
    [
      '-t1',
      `-c${connections}`,
      `-d${seconds}s`,
      '--latency',
      '-H',
      `Host: ${server.site}.sites.localhost`,
      ...acceptEncoding,
      `http://127.0.0.1:${server.port}/`,
    ],
    {
      encoding: 'utf8',
    },
  );
  return parseWrk(out);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const servers = [await start('base', base), await start('this', here)];
try {
  for (const server of servers) measure({ ...server }); // warm-up
  const results = new Map(servers.map((s) => [s.label, []]));
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    const got = {};
    for (const server of order) {
      got[server.label] = measure(server);
      results.get(server.label).push(got[server.label]);
    }
    ratios.push(got.this.rps / got.base.rps);
  }
  for (const [label, list] of results) {
    console.log(
      `${label.padEnd(5)} req/s median ${Math.round(median(list.map((r) => r.rps)))} (range ${Math.round(Math.min(...list.map((r) => r.rps)))}–${Math.round(Math.max(...list.map((r) => r.rps)))}), p50 ${median(list.map((r) => r.p50))} ms, p99 ${median(list.map((r) => r.p99))} ms, non-2xx ${list.reduce((a, r) => a + r.badStatus, 0)}, errors ${list.reduce((a, r) => a + r.errors, 0)}`,
    );
  }
  console.log(
    `this ÷ base, median of per-round ratios: ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`,
  );
} finally {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}
