// Memory of MCP deploys: Plinth's RSS while 38 MB deploy_site calls are in flight, one at a time
// and several at once, against the same server idle. Run with `npm run bench:mcp` (builds first).
// Plinth runs as a child process with one HTTP thread and one ingest worker; the bench talks
// JSON-RPC over loopback to the MCP host (set to 127.0.0.1) with an API token.
//
// What is compared, and how: MCP against REST deploys of the same files, on memory (RSS growth
// over idle), which the machine's load does not move the way it moves timings. So this bench does
// not interleave rounds (lib/rounds.mjs): each transport gets a fresh server, since the figure
// is growth from a known idle state and a second round on the same server would start from
// another heap. The times it prints are for information and are not compared.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, readMemory, sampleMemory, startChild, stopChild, waitReady } from './lib/proc.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = 1024 * 1024;
const FILES = 4;
const FILE_BYTES = Math.floor(7 * MB);
const CONCURRENT = 4;

/** One deploy_site call of about 38 MB (four 7 MB binary files as base64, and an index page). */
function body(seed) {
  const files = [{ path: 'index.html', content: `<h1>bench ${seed}</h1>` }];
  for (let i = 0; i < FILES; i++)
    files.push({ path: `data/${i}.bin`, content: Buffer.alloc(FILE_BYTES, (seed * 7 + i) % 251).toString('base64'), encoding: 'base64' });
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: seed, method: 'tools/call', params: { name: 'deploy_site', arguments: { files } } }));
}

/** The same files as a REST JSON deploy (SPEC 4.2), for comparison. */
function restBody(seed) {
  const files = [{ path: 'index.html', content: `<h1>bench ${seed}</h1>` }];
  for (let i = 0; i < FILES; i++)
    files.push({ path: `data/${i}.bin`, content: Buffer.alloc(FILE_BYTES, (seed * 7 + i) % 251).toString('base64'), encoding: 'base64' });
  return Buffer.from(JSON.stringify({ files }));
}

function post(port, token, payload, rest = false) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const target = rest ? { host: 'api.localhost', path: '/v1/deploy' } : { host: '127.0.0.1', path: '/mcp' };
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: target.path,
        agent: false,
        headers: {
          host: target.host,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': payload.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString());
          if (res.statusCode >= 300 || answer.result?.isError) reject(new Error(`deploy failed: ${res.statusCode} ${JSON.stringify(answer).slice(0, 300)}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const mib = (bytes) => `${(bytes / MB).toFixed(0)} MiB`;

/** A fresh server; warm-up deploy, then one deploy in flight, then CONCURRENT at once. */
async function measure(kind) {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-bench-mcp-'));
  const port = await freePort();
  const env = {
    PLINTH_DATA_DIR: dataDir,
    PLINTH_PORT: String(port),
    PLINTH_THREADS: '1',
    PLINTH_INGEST_THREADS: '1',
    PLINTH_MCP_HOST: '127.0.0.1',
    PLINTH_LOG_LEVEL: 'warn',
    PLINTH_UPLOAD_PACE_MB_S: '0',
    PLINTH_API_RATE_PER_CREDENTIAL: '0',
    PLINTH_API_RATE_PER_NETWORK: '0',
  };
  const cli = (...args) => execFileSync(process.execPath, [join(ROOT, 'dist/cli/plinth.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  cli('admin', 'account', 'create', '--email', 'bench@example.com', '--plan', 'company');
  const token = /pl_[A-Za-z0-9_-]+/.exec(cli('admin', 'token', 'create', '--email', 'bench@example.com'))[0];
  const send = (seed) => post(port, token, kind === 'rest' ? restBody(seed) : body(seed), kind === 'rest');
  const child = startChild(process.execPath, [join(ROOT, 'dist/main.js')], { env, cwd: ROOT, logPath: join(dataDir, 'plinth.log') });
  try {
    await waitReady(child, port, '127.0.0.1', '/.well-known/oauth-protected-resource');
    await send(1);
    await new Promise((r) => setTimeout(r, 1000));
    const idle = readMemory(child.pid).rss;
    const one = sampleMemory(child.pid, 10);
    const oneMs = await send(2);
    const single = one.stop();
    const many = sampleMemory(child.pid, 10);
    const manyMs = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => send(3 + i)));
    const several = many.stop();
    return { idle, single, oneMs, several, manyMs };
  } finally {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const size = body(1).length;
const lines = [
  `deploy_site bodies of ${mib(size)} (${FILES} files of ${mib(FILE_BYTES)} as base64), each run on a fresh server with 1 HTTP thread and 1 ingest worker, Node ${process.version}.`,
];
for (const kind of ['mcp', 'rest']) {
  const r = await measure(kind);
  const label = kind === 'mcp' ? 'MCP deploy_site' : 'REST POST /v1/deploy (JSON, same files)';
  lines.push(
    `${label}: idle after a warm-up deploy ${mib(r.idle)}; one in flight: highest ${mib(r.single.maxRss)} (+${mib(r.single.maxRss - r.idle)}), ${r.oneMs.toFixed(0)} ms; ` +
      `${CONCURRENT} at once: highest ${mib(r.several.maxRss)} (+${mib(r.several.maxRss - r.idle)}, ${mib((r.several.maxRss - r.idle) / CONCURRENT)} per deploy), ${r.manyMs.map((ms) => ms.toFixed(0)).join('/')} ms; peak VmHWM ${mib(r.several.hwm)}.`,
  );
}
console.log(lines.join('\n'));
