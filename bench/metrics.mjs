// Metrics and access-log bench (issue 31): what counting for /metrics, and writing the access log,
// cost serving. Three Plinth processes of this build, side by side, each with its own copy of the
// same site: metrics on (the default), metrics off (PLINTH_METRICS=0), and metrics with the access
// log (PLINTH_ACCESS_LOG=1, its lines to a file as a supervisor would keep them). Each is
// measured with wrk once per round in an order rotated every round (lib/rounds.mjs); the ratios
// "on ÷ off" and "access log ÷ off" are taken within each round, then their median and range
// reported. The goal: metrics on ≥ 0.97× metrics off. Scenarios: one 2 KB page over and over
// (the prepared hot path, where a fixed cost per request shows most), a rotation over 200 pages,
// and 304 revalidations of the page.
//
// Besides requests per second (wrk, as fast as the server answers), each cell offers a fixed
// rate with autocannon (BENCH_RATE req/s, well below what a server takes) and reads the server
// process's CPU time (all its threads, /proc/<pid>/stat) before and after: CPU per request at
// the same rate for every arm. On a machine whose other tenants take the cores in turn,
// throughput swings by several times between rounds, and CPU per request at full speed moves
// with it (fewer requests per wake-up); at a fixed rate it stays put. "off ÷ on" of it reads as
// the throughput ratio the server would reach with the cores to itself.
//
// Then on and off loaded at the same time, each by its own wrk, CPU per request of each process
// from /proc: both share whatever the machine does in that moment, so the ratio of the two moves
// far less from round to round than any figure taken one arm after the other (on this machine, a
// 2 KB page's rounds swing ±20 % one after the other and ±3 % together). This is the figure the
// goal is judged by.
//
// Last, the cost of counting alone, in this process: the response meter and the thread's counters
// (dist/http/response-meter.js, dist/runtime/thread-metrics.js) around a response object whose
// methods do nothing, ended as the prepared path ends a 2 KB page (the meter's own `end`), against
// the same loop unmetered, in nanoseconds per request; set beside
// the CPU a request costs the server with metrics off, it says what share counting takes when the
// A/B figures are too noisy to tell 3 % apart.
//
// Env: BENCH_DURATION (s per cell and round, default 3), BENCH_ROUNDS (8), BENCH_CONNECTIONS (64),
// BENCH_SCENARIOS (page2k,rotation,revalidate), BENCH_RATE (req/s of the fixed-rate pass, 2000;
// BENCH_RATE_DURATION s, 4), BENCH_TOGETHER_ROUNDS (rounds of the pass that loads on and off at
// once, 12), PLINTH_THREADS (unset: Plinth's default), BENCH_NO_WRITE=1 to print only. About 10 min.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuTimeMs, ensureTools, httpGet } from './lib/proc.mjs';
import { adminBuilderToken, startPlinthNode } from './lib/plinth-node.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { formatSummary, median, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { stopChild } from './lib/proc.mjs';
import { runWrk } from './lib/wrk.mjs';
import { runAutocannon } from './lib/autocannon.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const benchDir = join(root, 'bench');
const work = join(benchDir, '.work', 'metrics');
const seconds = Number(process.env.BENCH_DURATION ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const rate = Number(process.env.BENCH_RATE ?? 2000);
const rateSeconds = Number(process.env.BENCH_RATE_DURATION ?? 4);
const togetherRounds = Number(process.env.BENCH_TOGETHER_ROUNDS ?? 12);
const threads = process.env.PLINTH_THREADS;
const PAGES = 200;
const log = (msg) => process.stdout.write(`[metrics-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const ARMS = [
  { id: 'on', label: 'metrics on (default)', env: {} },
  { id: 'off', label: 'metrics off', env: { PLINTH_METRICS: '0' } },
  { id: 'access', label: 'metrics on + access log', env: { PLINTH_ACCESS_LOG: '1' } },
];

const page = (title) => `<!doctype html><html><head><title>${title}</title></head><body>${'<p>bench text for a small page</p>'.repeat(55)}</body></html>`;

function deploy(port, token) {
  const files = [{ path: 'index.html', content: page('Bench') }];
  for (let i = 0; i < PAGES; i++) files.push({ path: `pages/p${String(i).padStart(4, '0')}.html`, content: page(`Page ${i}`) });
  const body = JSON.stringify({ files });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/deploy',
        method: 'POST',
        headers: { host: 'api.localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text).site.name) : reject(new Error(`deploy: ${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
await ensureTools({ wrk: 'wrk' });
const machine = await machineInfo(root);
const loadStart = os.loadavg()[0];

const nodes = [];
try {
  for (const arm of ARMS) {
    const dataDir = join(work, arm.id);
    const env = { PLINTH_LOG_LEVEL: 'warn', PLINTH_SWEEP_INTERVAL_S: '0', ...(threads ? { PLINTH_THREADS: threads } : {}), ...arm.env };
    const node = await startPlinthNode({ root, dataDir, env, logPath: join(work, `${arm.id}.log`) });
    const token = adminBuilderToken(root, dataDir);
    const host = `${await deploy(node.port, token)}.sites.localhost`;
    const etag = (await httpGet(node.port, host, '/')).headers.etag;
    nodes.push({ ...arm, ...node, host, etag });
    log(`${arm.label}: port ${node.port}, site ${host}`);
  }

  const pagePaths = Array.from({ length: PAGES }, (_, i) => `/pages/p${String(i).padStart(4, '0')}.html`);
  const scenarios = {
    page2k: (node) => ({ path: '/', headers: { Host: node.host } }),
    rotation: (node) => ({
      wrkScript: { file: 'pages.lua', args: [node.host, String(PAGES)] },
      headers: { Host: node.host },
      requests: () => pagePaths.map((path) => ({ method: 'GET', path })),
    }),
    revalidate: (node) => ({ path: '/', headers: { Host: node.host, 'If-None-Match': node.etag }, expectStatus: 304 }),
  };
  const only = process.env.BENCH_SCENARIOS?.split(',').map((id) => id.trim());
  const results = {};
  for (const [name, scenario] of Object.entries(scenarios).filter(([id]) => !only || only.includes(id))) {
    const measure = async (node) => {
      const result = await runWrk({ port: node.port, seconds, connections, scenario: scenario(node), benchDir });
      const cpuBefore = cpuTimeMs(node.child.pid);
      const paced = await runAutocannon({ port: node.port, seconds: rateSeconds, connections: 16, scenario: scenario(node), overallRate: rate });
      const cpuUsPerRequest = ((cpuTimeMs(node.child.pid) - cpuBefore) * 1000) / paced.requests;
      if (paced.errors > 0 || paced.badStatus > 0)
        throw new Error(`${name}/${node.id} at ${rate} req/s: ${paced.errors} errors, ${paced.badStatus} bad statuses`);
      return { ...result, cpuUsPerRequest, pacedRps: paced.requests / paced.seconds };
    };
    const byArm = await runRounds(
      nodes,
      rounds,
      async (node, round) => {
        const result = await measure(node);
        if (result.errors > 0 || result.badStatus > (name === 'revalidate' ? result.requests : 0)) {
          throw new Error(`${name}/${node.id}: ${result.errors} errors, ${result.badStatus} bad statuses`);
        }
        log(
          `${name} round ${round + 1} ${node.label}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms; at ${Math.round(result.pacedRps)} req/s ${result.cpuUsPerRequest.toFixed(1)} µs CPU/request`,
        );
        return result;
      },
      { warmup: (node) => runWrk({ port: node.port, seconds: 1, connections, scenario: scenario(node), benchDir }) },
    );
    const [on, off, access] = byArm;
    const rps = (list) => list.map((r) => r.rps);
    const cpu = (list) => list.map((r) => r.cpuUsPerRequest);
    results[name] = {
      cpu: { on: summarize(cpu(on)), off: summarize(cpu(off)), access: summarize(cpu(access)) },
      // off ÷ on of CPU per request: the throughput ratio with the cores to itself.
      cpuRatio: pairedRatio(cpu(off), cpu(on)),
      cpuAccessRatio: pairedRatio(cpu(off), cpu(access)),
      on: summarize(rps(on)),
      off: summarize(rps(off)),
      access: summarize(rps(access)),
      onRatio: pairedRatio(rps(on), rps(off)),
      accessRatio: pairedRatio(rps(access), rps(off)),
      p99: { on: summarize(on.map((r) => r.p99)), off: summarize(off.map((r) => r.p99)), access: summarize(access.map((r) => r.p99)) },
      together: await loadedTogether(
        name,
        nodes.find((node) => node.id === 'on'),
        nodes.find((node) => node.id === 'off'),
        scenario,
      ),
    };
  }

  const meter = await meterCostNs();
  log(`counting alone: ${meter.toFixed(0)} ns per request`);

  const f0 = (n) => Math.round(n).toLocaleString('en-US');
  const x = (n) => `${n.toFixed(3)}×`;
  const ms = (n) => `${n.toFixed(2)} ms`;
  const titles = { page2k: '2 KB page `/`', rotation: `${PAGES}-page rotation`, revalidate: '304 revalidation of `/`' };
  const us = (n) => `${n.toFixed(1)} µs`;
  const cpuRows = Object.entries(results).map(
    ([name, r]) =>
      `| ${titles[name]} | ${formatSummary(r.cpu.off, us)} | ${formatSummary(r.cpu.on, us)} | ${formatSummary(r.cpuRatio, x)} | ${formatSummary(r.cpu.access, us)} | ${formatSummary(r.cpuAccessRatio, x)} |`,
  );
  const togetherRows = Object.entries(results).map(
    ([name, r]) =>
      `| ${titles[name]} | ${formatSummary(r.together.off, us)} | ${formatSummary(r.together.on, us)} | **${formatSummary(r.together.ratio, x)}** ${r.together.ratio.median >= 0.97 ? 'PASS' : 'MISS'} |`,
  );
  const rows = Object.entries(results).map(
    ([name, r]) =>
      `| ${titles[name]} | ${formatSummary(r.off, f0)} | ${formatSummary(r.on, f0)} | ${formatSummary(r.onRatio, x)} | ${formatSummary(r.access, f0)} | ${formatSummary(r.accessRatio, x)} | ${formatSummary(r.p99.off, ms)} / ${formatSummary(r.p99.on, ms)} / ${formatSummary(r.p99.access, ms)} |`,
  );
  const section = [
    '## Metrics and the access log: what counting costs serving (`npm run bench:serve`, metrics part)',
    '',
    `${machine.date.slice(0, 10)}, commit ${machine.commit}, ${machine.cpu} (${machine.cores} cores), ${machine.memoryGiB} GiB, ${machine.kernel}, Node ${machine.node}, ${machine.wrk}.`,
    '',
    `Three Plinth processes of the same build side by side, each serving its own copy of one site (a 2 KB \`index.html\` and ${PAGES} pages of 2 KB, plan Builder, no badge), ${threads ? `PLINTH_THREADS=${threads}` : "Plinth's default thread count"}: metrics on (the default), metrics off (\`PLINTH_METRICS=0\`: nothing counted, no response hook) and metrics with the access log (\`PLINTH_ACCESS_LOG=1\`, stdout to a file). wrk, 1 thread, ${connections} keep-alive connections, a 1 s warm-up per cell, then ${rounds} rounds of ${seconds} s, each round measuring the three in an order rotated every round. Ratios are taken within each round (median, and range over the rounds). Goal: metrics on ≥ 0.97× metrics off.`,
    '',
    `Metrics on and off loaded at the same time (${togetherRounds} rounds of ${seconds} s after one discarded, each by its own wrk with ${connections / 2} connections; both servers pinned to one core, both wrk to the other): server CPU time per request of each process (every thread, from /proc). Both share whatever the machine does in that moment, so their ratio holds still where figures taken one arm after the other swing by a fifth between rounds. The ratio is off ÷ on, so it reads as a throughput ratio. This is the figure the goal is judged by:`,
    '',
    '| Scenario | Off | On | Off ÷ on |',
    '|---|---|---|---|',
    ...togetherRows,
    '',
    `Server CPU time per request at a fixed ${rate.toLocaleString('en-US')} req/s (autocannon, 16 connections, ${rateSeconds} s per cell, right after each wrk cell; the whole process, every thread, from /proc), one arm after the other; off ÷ on:`,
    '',
    '| Scenario | Off | On | Off ÷ on | Access log | Off ÷ access log |',
    '|---|---|---|---|---|---|',
    ...cpuRows,
    '',
    'Requests per second as wrk saw them, with the machine shared:',
    '',
    '| Scenario | Off, req/s | On, req/s | On ÷ off | Access log, req/s | Access log ÷ off | p99 off / on / access log |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Counting alone (the response meter and a thread's counters around a response object whose methods do nothing, ended as the prepared path ends a 2 KB page, against the same loop unmetered, best of 7 runs of 1,000,000 in this process): **${meter.toFixed(0)} ns per request**, ${((100 * meter) / 1000 / median(Object.values(results).map((r) => r.cpu.off.median))).toFixed(1)} % of the ${median(Object.values(results).map((r) => r.cpu.off.median)).toFixed(1)} µs of CPU a request costs the server with metrics off (median of the scenarios above); an answer given within its handler is not timed (two clock reads cost more than the rest of the counting).`,
    '',
    `1-minute load average ${loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end${loadStart > 0.5 ? ': other processes shared the cores, so single rounds are noisy; the per-round ratios and their range carry the comparison' : ''}.`,
    '',
    '```sh',
    `BENCH_DURATION=${seconds} BENCH_ROUNDS=${rounds} BENCH_CONNECTIONS=${connections}${threads ? ` PLINTH_THREADS=${threads}` : ''} node bench/metrics.mjs`,
    '```',
  ].join('\n');
  publishSection(section, 'metrics');
} finally {
  for (const node of nodes) await stopChild(node.child);
}

/**
 * On and off under load at once, each from its own wrk with half the connections: per round, the
 * CPU each process spent per request it answered, and their ratio off ÷ on.
 */
async function loadedTogether(name, on, off, scenario) {
  const pair = [on, off];
  // Both servers on the last core and both wrk on the others, so neither arm's threads wander
  // onto a core the other does not share.
  const cores = os.availableParallelism();
  const pin = (list) => {
    if (cores < 2) return;
    for (const node of pair) execFileSync('taskset', ['-a', '-p', '-c', list, String(node.child.pid)], { stdio: 'ignore' });
  };
  const serverCore = String(cores - 1);
  const wrkCores = cores < 2 ? undefined : `0-${cores - 2}`;
  const once = async () => {
    const before = pair.map((node) => cpuTimeMs(node.child.pid));
    const runs = await Promise.all(
      pair.map((node) => runWrk({ port: node.port, seconds, connections: connections / 2, scenario: scenario(node), benchDir, cpus: wrkCores })),
    );
    return runs.map((run, i) => ((cpuTimeMs(pair[i].child.pid) - before[i]) * 1000) / run.requests);
  };
  pin(serverCore);
  try {
    return await measureTogether(name, once);
  } finally {
    pin(`0-${cores - 1}`);
  }
}

async function measureTogether(name, once) {
  await once();
  const onCpu = [];
  const offCpu = [];
  for (let round = 0; round < togetherRounds; round++) {
    const [onUs, offUs] = await once();
    onCpu.push(onUs);
    offCpu.push(offUs);
    log(`${name} together round ${round + 1}: on ${onUs.toFixed(2)} µs, off ${offUs.toFixed(2)} µs CPU/request, off ÷ on ${(offUs / onUs).toFixed(3)}`);
  }
  return { on: summarize(onCpu), off: summarize(offCpu), ratio: pairedRatio(offCpu, onCpu) };
}

/** Nanoseconds per request that metering adds: best of 7 runs of a million, metered against plain. */
async function meterCostNs() {
  const { createResponseMeter } = await import(new URL('../dist/http/response-meter.js', import.meta.url).href);
  const { createThreadMetrics } = await import(new URL('../dist/runtime/thread-metrics.js', import.meta.url).href);
  const methods = {
    writeStatus() {
      return this;
    },
    writeHeader() {
      return this;
    },
    end() {
      return this;
    },
    endWithoutBody() {
      return this;
    },
    tryEnd() {
      return [true, true];
    },
    write() {
      return true;
    },
    close() {
      return this;
    },
    onAborted() {
      return this;
    },
  };
  // Two prototypes alike: the hook wraps the first one only.
  const Metered = function () {};
  Object.assign(Metered.prototype, methods);
  const Plain = function () {};
  Object.assign(Plain.prototype, methods);
  const metrics = createThreadMetrics();
  const meter = createResponseMeter((kind, status, bytes, ms, aborted) => metrics.request(kind, status, bytes, ms, aborted), { timeEveryAnswer: false });
  const body = Buffer.alloc(2048);
  const n = 1_000_000;
  const best = (metered) => {
    let fastest = Infinity;
    for (let run = 0; run < 7; run++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const res = metered ? new Metered() : new Plain();
        if (metered) meter.begin(res, 0, undefined);
        res.writeHeader('Content-Type', 'text/html');
        // As the prepared path ends its answers (src/serve/site-server.ts): through the meter.
        if (metered) {
          meter.end(res, 200, body);
          meter.handled(res);
        } else res.end(body);
      }
      fastest = Math.min(fastest, Number(process.hrtime.bigint() - started) / n);
    }
    return fastest;
  };
  best(true);
  best(false);
  return Math.max(0, best(true) - best(false));
}
