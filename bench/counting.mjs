// What counting costs a request, alone: bare uWS servers that answer as `ceiling-pages` does (each
// of 1,000 pages from its own bytes and header block, found by its URL) after the four reads a
// Plinth answer makes (Host, URL, Accept-Encoding, If-None-Match), each adding one part of what
// Plinth does per request when metrics and analytics are on, built from Plinth's own modules
// (dist/, so `npm run build` first):
//   bare    the reads and the answer
//   ua      + reading User-Agent, which analytics needs to tell a crawler's view from a browser's
//   meter   + the response meter around the answer (begin, its own end, handled) counting into the
//           thread's metrics, as the prepared path does with PLINTH_METRICS=1
//   visits  + User-Agent and the visit counter's count of the view (a crawler's: wrk sends none)
//   both    + all three: what PLINTH_METRICS=1 and PLINTH_ANALYTICS=1 add to a request
// Every arm is a process of its own, loaded together (servers pinned to one core, each by its own
// wrk on the others); CPU per request from /proc, each arm's ratio to `bare` taken within a round,
// so it reads as a throughput ratio. What this leaves out is what a Plinth process does beside its
// requests (timers, analytics' writes every 10 s): serve-ab's arms with the settings off show it.
// Env: BENCH_ROUNDS (10), BENCH_DURATION (s per round, 3), BENCH_CONNECTIONS (64, split between
// the arms), BENCH_SCENARIOS (page2k,rotation), BENCH_ARMS (bare,ua,meter,visits,both).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const env = process.env;
const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGES = 1000;

/** 2,048 bytes each, as serve-ab's pages. */
const page = (title) => {
  const head = `<!doctype html><html><head><title>${title}</title></head><body>`;
  const tail = '</body></html>\n';
  return head + '<p>bench text for a small page</p>'.repeat(60).slice(0, 2048 - head.length - tail.length) + tail;
};

if (env.COUNTING_ARM) await serve(env.COUNTING_ARM, Number(env.COUNTING_PORT));
else await measure();

/** One arm's server (a child process). */
async function serve(arm, port) {
  const uws = createRequire(import.meta.url)('uWebSockets.js');
  const dist = (path) => import(pathToFileURL(join(here, 'dist', path)).href);
  const { HEADER_NAMES: N, createResponseMeter } = await dist('http/index.js');
  const { createThreadMetrics } = await dist('runtime/thread-metrics.js');
  const { createVisitCounter } = await dist('serve/visits.js');
  const readsUserAgent = arm === 'ua' || arm === 'visits' || arm === 'both';
  const metrics = arm === 'meter' || arm === 'both' ? createThreadMetrics() : undefined;
  const meter = metrics ? createResponseMeter(() => undefined, { timeEveryAnswer: false, answered: metrics.answered }) : undefined;
  const visits = arm === 'visits' || arm === 'both' ? createVisitCounter({ now: Date.now, readForwarded: false, maxEntries: 10_000 }) : undefined;
  // As Plinth's threads take their batch every 10 s (here without writing it anywhere).
  if (visits) setInterval(() => visits.take(), 10_000).unref();
  const site = { id: 'site-1', name: 'bench' };
  const answerOf = (bytes) => ({
    body: bytes,
    block: Buffer.from(
      'text/html; charset=utf-8\r\nCache-Control: public, max-age=60\r\nETag: "x"\r\nX-Content-Type-Options: nosniff\r\nVary: Accept-Encoding',
      'latin1',
    ),
    etag: '"x"',
  });
  const pages = new Map();
  for (let i = 0; i < PAGES; i++) pages.set(`/pages/p${String(i).padStart(4, '0')}.html`, answerOf(Buffer.from(page(`Page ${i}`))));
  const index = answerOf(Buffer.from(page('Bench')));
  let read = 0;
  const handle = (res, req) => {
    meter?.begin(res, 0, undefined);
    read += req.getHeader(N.host).length;
    const url = req.getUrl();
    const answer = pages.get(url) ?? index;
    read += req.getHeader(N.acceptEncoding).length;
    if (req.getHeader(N.ifNoneMatch) === answer.etag) read++;
    const userAgent = readsUserAgent ? req.getHeader(N.userAgent) : '';
    res.writeHeader(N.contentType, answer.block);
    if (meter) meter.end(res, 200, answer.body, answer.body.byteLength);
    else res.end(answer.body);
    visits?.page(site.id, site.name, '', url, userAgent, req, answer.body.byteLength);
  };
  uws
    .App()
    .get('/*', meter ? (res, req) => (handle(res, req), meter.handled(res)) : handle)
    .listen('127.0.0.1', port, (token) => {
      if (!token) process.exit(1);
      process.send?.('listening');
    });
  process.on('SIGTERM', () => process.exit(read < 0 ? 1 : 0));
}

async function measure() {
  const { cpuNsBetween, freePort, threadCpuNs } = await import('./lib/proc.mjs');
  const { runWrk } = await import('./lib/wrk.mjs');
  const { formatSummary, pairedRatio, summarize } = await import('./lib/rounds.mjs');
  const rounds = Number(env.BENCH_ROUNDS ?? 10);
  const seconds = Number(env.BENCH_DURATION ?? 3);
  const armNames = (env.BENCH_ARMS ?? 'bare,ua,meter,visits,both').split(',');
  const scenarioIds = (env.BENCH_SCENARIOS ?? 'page2k,rotation').split(',');
  const cores = os.availableParallelism();
  const serverCpus = String(cores - 1);
  const loadgenCpus = cores > 1 ? `0-${cores - 2}` : '0';
  const each = Math.max(1, Math.floor(Number(env.BENCH_CONNECTIONS ?? 64) / armNames.length));
  const log = (msg) => process.stdout.write(`[counting ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const benchDir = join(here, 'bench');
  const scenarios = {
    page2k: { path: '/', headers: { Host: 'bench.sites.localhost' } },
    rotation: { path: '/', headers: { Host: 'bench.sites.localhost' }, wrkScript: { file: 'pages.lua', args: ['bench.sites.localhost', String(PAGES)] } },
  };
  const arms = [];
  try {
    for (const name of armNames) {
      const port = await freePort();
      const child = spawn('taskset', ['-c', serverCpus, process.execPath, fileURLToPath(import.meta.url)], {
        env: { ...env, COUNTING_ARM: name, COUNTING_PORT: String(port) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      await new Promise((ok, fail) => {
        child.once('message', ok);
        child.once('exit', (code) => fail(new Error(`${name} exited ${code}`)));
      });
      arms.push({ name, port, child });
    }
    log(
      `${arms.map((a) => a.name).join(', ')}; ${rounds} rounds of ${seconds} s, each by wrk -t1 -c${each}; servers on CPU ${serverCpus}, wrk on ${loadgenCpus}; load ${os.loadavg()[0].toFixed(2)}`,
    );
    const report = [];
    for (const id of scenarioIds) {
      const once = async () => {
        const before = arms.map((arm) => threadCpuNs(arm.child.pid));
        const results = await Promise.all(
          arms.map((arm) => runWrk({ port: arm.port, seconds, connections: each, scenario: scenarios[id], benchDir, cpus: loadgenCpus })),
        );
        return results.map((result, i) => {
          if (result.errors > 0 || result.badStatus > 0) throw new Error(`${arms[i].name}: ${result.errors} errors, ${result.badStatus} bad statuses`);
          return { us: cpuNsBetween(before[i], threadCpuNs(arms[i].child.pid)) / 1000 / result.requests, rps: result.rps };
        });
      };
      await once(); // warm-up
      const us = arms.map(() => []);
      for (let round = 0; round < rounds; round++) {
        const got = await once();
        got.forEach((r, i) => (us[i][round] = r.us));
        log(`${id} round ${round + 1}: ${got.map((r, i) => `${arms[i].name} ${r.us.toFixed(2)} µs (${Math.round(r.rps)} req/s)`).join(', ')}`);
      }
      report.push(`${id} (µs CPU/request, median of ${rounds} rounds, range; ratio to bare within each round, as throughput):`);
      arms.forEach((arm, i) =>
        report.push(
          `  ${arm.name.padEnd(7)} ${formatSummary(summarize(us[i]), (n) => n.toFixed(2))}${i === 0 ? '' : `; ${formatSummary(pairedRatio(us[0], us[i]), (n) => `${n.toFixed(3)}×`)}`}`,
        ),
      );
    }
    log(`load ${os.loadavg()[0].toFixed(2)} at the end`);
    console.log(report.join('\n'));
  } finally {
    for (const arm of arms) arm.child.kill('SIGTERM');
  }
}
