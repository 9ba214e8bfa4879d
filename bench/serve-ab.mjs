// A/B serving bench: this checkout's build against other builds (BENCH_BASE), and optionally the
// bare uWS ceiling (bench/ceiling.mjs) beside them, on a public site's 2 KB page (the prepared hot
// path) and a rotation over its pages. For checking that a change to the site host costs public
// sites nothing, and how far each build is from what its stack allows.
//
// Two ways to measure, both with every arm up side by side for the whole run:
// - `turns` (the default): each round measures every arm alone with wrk, in an order rotated each
//   round (lib/rounds.mjs), and reports req/s. Ratios are taken within each round, then their
//   median and range. Right on a quiet machine; on a shared one a round swings by a factor of 2.
// - `together`: each round loads every arm at once, each by its own wrk, with the servers pinned
//   to one core and the wrk processes to the others, and reads each server's CPU time per request
//   from /proc. All arms share whatever the machine does in that moment, so their ratio holds
//   still on a busy machine (a few per cent where turns swing by a factor of 2). The ratios are
//   CPU of the reference ÷ CPU of the arm, so they read as throughput ratios. The same CPU is
//   also split by thread (`threadSplit`): the thread that serves, and beside it the main thread,
//   V8's helper threads and the rest, each in ms of CPU and timeslices a second.
//
// Env: BENCH_BASE (required: a comma list of folders with a built dist/, each `label=folder` or a
//      folder named by its last path part; e.g. a `git archive` of main, built),
//      BENCH_CEILING=1 (add bench/ceiling.mjs twice: `ceiling`, the same page for every path, and
//      `ceiling-pages`, each of the rotation's pages from its own bytes found by URL, and
//      `ceiling-reads`, the one page after reading the five request fields Plinth reads;
//      BENCH_CEILINGS picks some of them, e.g. `ceiling-pages`: fewer servers sharing the core, or
//      adds `ceiling-ab`, the one page with its header name, block and body as ArrayBuffers),
//      BENCH_SCENARIOS (page2k,rotation), BENCH_PAGES (pages in the rotation, 1000),
//      BENCH_MODE (turns | together), BENCH_ROUNDS (6), BENCH_DURATION (s per round, 3),
//      BENCH_CONNECTIONS (64, split between the arms in `together`), PLINTH_THREADS (1),
//      BENCH_SERVER_CPUS / BENCH_LOADGEN_CPUS (taskset lists; `together` defaults to the last core
//      for the servers and the rest for wrk), BENCH_THIS_ENV (JSON of extra environment for this
//      build's server, e.g. {"PLINTH_METRICS":"0"}), BENCH_BASE_ENV (JSON of extra environment per
//      BENCH_BASE label, e.g. {"off":{"PLINTH_METRICS":"0"}} with BENCH_BASE=main=…,off=.: one build
//      with and without a setting, side by side), BENCH_ACCEPT_ENCODING (unset: no header, the
//      plain bytes; e.g. `gzip, deflate, br` as browsers send it, to measure the negotiated path
//      and the compressed variant), BENCH_SETTLE_S (seconds from the last Plinth arm's deploy to
//      the first round, 30: see `settle`), BENCH_THIS_NODE_ARGS / BENCH_BASE_NODE_ARGS (Node or V8
//      options for this build's server, or JSON of them per BENCH_BASE label, e.g.
//      {"semi":"--min-semi-space-size=4"}: options NODE_OPTIONS does not take, such as V8's heap sizes).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuNsBetween, freePort, httpCall as call, threadCpuNs, threadSlices } from './lib/proc.mjs';
import { benchPage as page, pagePath, writeServePages } from './lib/serve-pages.mjs';
import { adminBuilderToken } from './lib/plinth-node.mjs';
import { runWrk } from './lib/wrk.mjs';
import { formatSummary, pairedRatio, rotate, summarize } from './lib/rounds.mjs';

const env = process.env;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const benchDir = join(here, 'bench');
if (!env.BENCH_BASE) throw new Error('set BENCH_BASE to a folder with a built dist/ to compare against');
const bases = env.BENCH_BASE.split(',').map((item) => {
  const [label, folder] = item.includes('=') ? item.split('=') : [basename(resolve(item)), item];
  return { label, root: resolve(folder) };
});
const mode = env.BENCH_MODE ?? 'turns';
const rounds = Number(env.BENCH_ROUNDS ?? 6);
const seconds = Number(env.BENCH_DURATION ?? 3);
const connections = Number(env.BENCH_CONNECTIONS ?? 64);
const threads = env.PLINTH_THREADS ?? '1';
const pageCount = Number(env.BENCH_PAGES ?? 1000);
const scenarioIds = (env.BENCH_SCENARIOS ?? 'page2k,rotation').split(',').map((s) => s.trim());
const cores = os.availableParallelism();
const serverCpus = env.BENCH_SERVER_CPUS ?? (mode === 'together' && cores > 1 ? String(cores - 1) : undefined);
const loadgenCpus = env.BENCH_LOADGEN_CPUS ?? (mode === 'together' && cores > 1 ? `0-${cores - 2}` : undefined);
const thisEnv = env.BENCH_THIS_ENV ? JSON.parse(env.BENCH_THIS_ENV) : {};
const baseEnv = env.BENCH_BASE_ENV ? JSON.parse(env.BENCH_BASE_ENV) : {};
const nodeArgsOf = (text) => (text ?? '').split(' ').filter(Boolean);
const thisNodeArgs = nodeArgsOf(env.BENCH_THIS_NODE_ARGS);
const baseNodeArgs = env.BENCH_BASE_NODE_ARGS ? JSON.parse(env.BENCH_BASE_NODE_ARGS) : {};
const acceptEncoding = env.BENCH_ACCEPT_ENCODING ? { 'Accept-Encoding': env.BENCH_ACCEPT_ENCODING } : {};
const log = (msg) => process.stdout.write(`[serve-ab ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const work = mkdtempSync(join(tmpdir(), 'plinth-ab-'));
// 2,048-byte pages, as bench:serve's; the ceiling answers the index page's bytes for every path.
const { indexFile, pagesDir } = writeServePages(work, pageCount);

function spawnServer(file, args, serverEnv) {
  const [cmd, argv] = serverCpus ? ['taskset', ['-c', serverCpus, file, ...args]] : [file, args];
  return spawn(cmd, argv, { env: serverEnv, stdio: 'ignore' });
}

async function startPlinth(label, root, extraEnv = {}, nodeArgs = []) {
  const dataDir = mkdtempSync(join(work, `${label}-`));
  const port = await freePort();
  const serverEnv = {
    ...env,
    PLINTH_PORT: String(port),
    PLINTH_DATA_DIR: dataDir,
    PLINTH_THREADS: threads,
    PLINTH_LOG_LEVEL: 'silent',
    PLINTH_LISTEN_HOST: '127.0.0.1',
    ...extraEnv,
  };
  const token = adminBuilderToken(root, dataDir);
  const child = spawnServer(process.execPath, [...nodeArgs, join(root, 'dist/main.js')], serverEnv);
  try {
    for (let i = 0; ; i++) {
      const me = await call(port, 'api.localhost', 'GET', '/v1/me', token).catch(() => undefined);
      if (me?.status === 200) break;
      if (i > 300) throw new Error(`${label} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const files = [{ path: 'index.html', content: page('Bench') }];
    for (let i = 0; i < pageCount; i++) files.push({ path: pagePath(i), content: page(`Page ${i}`) });
    const answer = await call(port, 'api.localhost', 'POST', '/v1/deploy', token, JSON.stringify({ files }));
    if (answer.status !== 201) throw new Error(`${label}: deploy answered ${answer.status} ${answer.text}`);
    const host = `${JSON.parse(answer.text).site.name}.sites.localhost`;
    // The compression that follows a deploy runs in this process: let it finish first (the last
    // page has its brotli variant), or its CPU would count as serving's.
    for (let i = 0; i < 600; i++) {
      const last = await call(port, host, 'GET', `/${pagePath(pageCount - 1)}`, undefined, undefined, { 'accept-encoding': 'br' });
      if (last.headers['content-encoding'] === 'br') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Every page asked for once, as the rotation will: the HTTP thread resolves and keeps each
    // URL's answer now (ceiling-pages holds its pages from its start), and the full collections
    // that follow, once those objects are promoted, fall in the settling time, not in the rounds.
    for (let i = 0; i < pageCount; i++) await call(port, host, 'GET', `/${pagePath(i)}`);
    return { label, kind: 'plinth', port, child, host, nodeArgs, readyAt: Date.now() };
  } catch (err) {
    child.kill('SIGTERM');
    throw err;
  }
}

async function startCeiling(label, extraEnv = {}) {
  const port = await freePort();
  const child = spawnServer(process.execPath, [join(benchDir, 'ceiling.mjs')], { ...env, CEILING_PORT: String(port), CEILING_BODY: indexFile, ...extraEnv });
  for (let i = 0; ; i++) {
    const res = await call(port, 'x.sites.localhost', 'GET', '/').catch(() => undefined);
    if (res?.status === 200) break;
    if (i > 100) throw new Error('the ceiling did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { label, kind: 'ceiling', port, child, host: 'bench.sites.localhost' };
}

const scenarios = {
  page2k: (arm) => ({ path: '/', headers: { Host: arm.host, ...acceptEncoding } }),
  rotation: (arm) => ({ path: '/', headers: { Host: arm.host }, wrkScript: { file: 'pages.lua', args: [arm.host, String(pageCount)] } }),
};
for (const id of scenarioIds) if (!scenarios[id]) throw new Error(`unknown scenario ${id}; known: ${Object.keys(scenarios).join(', ')}`);

async function checkBodies(arms) {
  for (const arm of arms) {
    for (const path of ['/', `/${pagePath(0)}`, `/${pagePath(pageCount - 1)}`]) {
      const res = await call(arm.port, arm.host, 'GET', path);
      if (res.status !== 200 || res.text.length !== 2048) throw new Error(`${arm.label} ${path}: ${res.status}, ${res.text.length} bytes`);
      // Plinth and the rotating ceiling answer each page with its own bytes.
      const ownPages = arm.kind !== 'ceiling' || arm.label === 'ceiling-pages';
      if (ownPages && path !== '/' && res.text !== page(`Page ${path === `/${pagePath(0)}` ? 0 : pageCount - 1}`))
        throw new Error(`${arm.label} ${path}: not the page's own bytes`);
    }
  }
}

const wrk = (arm, scenario, conns, cpus) => runWrk({ port: arm.port, seconds, connections: conns, scenario: scenarios[scenario](arm), benchDir, cpus });

function check(arm, result, scenario) {
  if (result.errors > 0 || result.badStatus > 0) throw new Error(`${scenario}/${arm.label}: ${result.errors} errors, ${result.badStatus} bad statuses`);
}

/** Every arm alone, in turn; req/s per arm and round. */
async function turns(arms, scenario) {
  const rps = arms.map(() => []);
  for (const arm of arms) await wrk(arm, scenario, connections, loadgenCpus); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const arm of rotate(arms, round)) {
      const result = await wrk(arm, scenario, connections, loadgenCpus);
      check(arm, result, scenario);
      rps[arms.indexOf(arm)][round] = result.rps;
      log(`${scenario} round ${round + 1} ${arm.label}: ${Math.round(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
    }
  }
  // A throughput ratio: this arm ÷ that one.
  return { values: rps, ratio: (a, b) => pairedRatio(rps[a], rps[b]), perRound: (a, b) => rps[a].map((x, i) => x / rps[b][i]), unit: 'req/s' };
}

/** Every arm at once; CPU µs per request per arm and round. */
async function together(arms, scenario) {
  const each = Math.max(1, Math.floor(connections / arms.length));
  const once = async () => {
    const before = arms.map((arm) => threadSlices(arm.child.pid));
    const startedAt = performance.now();
    const results = await Promise.all(arms.map((arm) => wrk(arm, scenario, each, loadgenCpus)));
    const elapsedS = (performance.now() - startedAt) / 1000;
    return results.map((result, i) => {
      check(arms[i], result, scenario);
      const split = threadSplit(arms[i], before[i], threadSlices(arms[i].child.pid), elapsedS);
      return { us: split.totalNs / 1000 / result.requests, rps: result.rps, split: { ...split, servingUs: split.servingNs / 1000 / result.requests } };
    });
  };
  await once(); // warm-up
  const us = arms.map(() => []);
  const rps = arms.map(() => []);
  const splits = arms.map(() => []);
  for (let round = 0; round < rounds; round++) {
    const got = await once();
    got.forEach((r, i) => {
      us[i][round] = r.us;
      rps[i][round] = r.rps;
      splits[i][round] = r.split;
    });
    log(`${scenario} together round ${round + 1}: ${got.map((r, i) => `${arms[i].label} ${r.us.toFixed(2)} µs (${Math.round(r.rps)} req/s)`).join(', ')}`);
  }
  // CPU of b ÷ CPU of a reads as a's throughput ÷ b's.
  return { values: us, rps, splits, ratio: (a, b) => pairedRatio(us[b], us[a]), perRound: (a, b) => us[b].map((x, i) => x / us[a][i]), unit: 'µs CPU/request' };
}

/**
 * Where a server's CPU went in a round, by thread: the thread that served (the one with the most
 * CPU: Plinth's HTTP thread, a ceiling's main thread), the main thread beside it, V8's helper
 * threads (parallel and concurrent GC, concurrent compilation) and the rest (libuv's pool, other
 * Worker threads), each in ms of CPU and timeslices (wake-ups and preemptions) a second. Node
 * starts its threads in one order: the main thread, the platform's delayed-task scheduler, then
 * V8's helpers (--v8-pool-size, 4), then the others; thread ids follow that order.
 */
function threadSplit(arm, before, after, elapsedS) {
  const tids = [...after.keys()].sort((a, b) => a - b);
  const pool = Number(/--v8-pool-size=(\d+)/.exec(arm.nodeArgs?.join(' ') ?? '')?.[1] ?? 4);
  const delta = (tid) => {
    const was = before.get(tid) ?? { ns: 0, slices: 0 };
    const now = after.get(tid);
    return { ns: now.ns - was.ns, slices: now.slices - was.slices };
  };
  const deltas = tids.map(delta);
  const serving = deltas.reduce((best, d, i) => (d.ns > deltas[best].ns ? i : best), 0);
  const groups = { main: { ns: 0, slices: 0 }, v8: { ns: 0, slices: 0 }, other: { ns: 0, slices: 0 } };
  let totalNs = 0;
  deltas.forEach((d, i) => {
    totalNs += d.ns;
    if (i === serving) return;
    const group = i === 0 ? groups.main : i >= 2 && i < 2 + pool ? groups.v8 : groups.other;
    group.ns += d.ns;
    group.slices += d.slices;
  });
  const perS = (g) => ({ msPerS: g.ns / 1e6 / elapsedS, wakesPerS: g.slices / elapsedS });
  return { totalNs, servingNs: deltas[serving].ns, main: perS(groups.main), v8: perS(groups.v8), other: perS(groups.other) };
}

/**
 * Waits until BENCH_SETTLE_S (30) seconds have passed since the last Plinth arm was ready. After
 * a deploy a process still runs V8's memory reducer (`--trace-gc`: "Mark-Compact (reduce)", two
 * or three on the main thread's heap and on the HTTP thread's in the half minute after the deploy
 * answered, 8–45 ms of CPU each), which would land in the first rounds of whichever arm deployed
 * last.
 */
async function settle(arms) {
  const lastReady = Math.max(...arms.map((arm) => arm.readyAt ?? 0));
  const wait = lastReady + Number(env.BENCH_SETTLE_S ?? 30) * 1000 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

const arms = [];
try {
  arms.push(await startPlinth('this', here, thisEnv, thisNodeArgs));
  for (const base of bases) arms.push(await startPlinth(base.label, base.root, baseEnv[base.label] ?? {}, nodeArgsOf(baseNodeArgs[base.label])));
  if (env.BENCH_CEILING === '1') {
    const ceilings = { ceiling: {}, 'ceiling-pages': { CEILING_PAGES_DIR: pagesDir }, 'ceiling-reads': { CEILING_READS: '1' } };
    // Only when asked for (BENCH_CEILINGS): the one-page ceiling handing uWS ArrayBuffers, as Plinth does.
    const optional = { 'ceiling-ab': { CEILING_ARRAY_BUFFERS: '1' } };
    for (const label of (env.BENCH_CEILINGS ?? Object.keys(ceilings).join(',')).split(',')) {
      ceilings[label] ??= optional[label];
      if (!ceilings[label]) throw new Error(`unknown ceiling ${label}; known: ${Object.keys(ceilings).join(', ')}`);
      arms.push(await startCeiling(label, ceilings[label]));
    }
  }
  await checkBodies(arms);
  await settle(arms);
  // What each server spends doing nothing (timers, sweeps), which `together` counts per request too.
  const idleBefore = arms.map((arm) => threadCpuNs(arm.child.pid));
  await new Promise((r) => setTimeout(r, 2000));
  log(`idle CPU: ${arms.map((arm, i) => `${arm.label} ${(cpuNsBetween(idleBefore[i], threadCpuNs(arm.child.pid)) / 2e6).toFixed(2)} ms/s`).join(', ')}`);
  // For a profiler to attach to (e.g. `perf record -g -p <pid>` during a scenario's rounds).
  log(`pids: ${arms.map((arm) => `${arm.label} ${arm.child.pid}`).join(', ')}`);
  log(
    `${mode}: ${arms.map((a) => a.label).join(', ')}; ${rounds} rounds of ${seconds} s, wrk -t1 -c${connections}${mode === 'together' ? ` split ${arms.length} ways` : ''}; PLINTH_THREADS=${threads}${serverCpus ? `; servers on CPU ${serverCpus}, wrk on ${loadgenCpus}` : ''}; load ${os.loadavg()[0].toFixed(2)}`,
  );
  const x = (n) => `${n.toFixed(3)}×`;
  const f = (n) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
  const report = [];
  for (const scenario of scenarioIds) {
    const measured = mode === 'together' ? await together(arms, scenario) : await turns(arms, scenario);
    report.push(`${scenario} (${measured.unit}${measured.rps ? ', and req/s' : ''}, median of ${rounds} rounds, range):`);
    // Together, CPU per request next to what each arm served: an arm that got less of the core
    // serves fewer requests per wake-up, which moves its CPU per request as well.
    arms.forEach((arm, i) =>
      report.push(
        `  ${arm.label.padEnd(13)} ${formatSummary(summarize(measured.values[i]), f)}${measured.rps ? `; ${formatSummary(summarize(measured.rps[i]), f)} req/s` : ''}`,
      ),
    );
    for (let i = 1; i <= bases.length; i++) report.push(`  this ÷ ${arms[i].label}: ${formatSummary(measured.ratio(0, i), x)}`);
    if (measured.splits) {
      // The same CPU by thread, medians of the rounds: what a process spends beside the thread that serves.
      const med = (i, pick) => summarize(measured.splits[i].map(pick)).median;
      report.push('  by thread (median of rounds): CPU µs/request on the serving thread; beside it ms of CPU and timeslices a second');
      arms.forEach((arm, i) => {
        const group = (name) => `${name} ${med(i, (s) => s[name].msPerS).toFixed(2)} ms/s (${med(i, (s) => s[name].wakesPerS).toFixed(1)}/s)`;
        report.push(`    ${arm.label.padEnd(13)} serving ${med(i, (s) => s.servingUs).toFixed(2)} µs; ${group('main')}, ${group('v8')}, ${group('other')}`);
      });
      // The serving threads alone, as throughput ratios: how much of a ratio is the request's own work.
      const servingUs = (i) => measured.splits[i].map((s) => s.servingUs);
      for (const c of arms.flatMap((arm, c) => (arm.kind === 'ceiling' ? [c] : [])))
        for (let i = 0; i <= bases.length; i++)
          report.push(`  serving thread only, ${arms[i].label} ÷ ${arms[c].label}: ${formatSummary(pairedRatio(servingUs(c), servingUs(i)), x)}`);
    }
    const rounded = (list) => list.map((n) => n.toFixed(3)).join(' ');
    const ceilings = arms.flatMap((arm, c) => (arm.kind === 'ceiling' ? [c] : []));
    for (const c of ceilings) {
      // Each round's ratio too: the ceilings themselves swing between rounds and runs.
      for (let i = 0; i <= bases.length; i++)
        report.push(`  ${arms[i].label} ÷ ${arms[c].label}: ${formatSummary(measured.ratio(i, c), x)}; by round ${rounded(measured.perRound(i, c))}`);
    }
    // How the ceilings stand to the first one, round by round: what a ratio to a ceiling moves with.
    for (const c of ceilings.slice(1))
      report.push(
        `  ${arms[c].label} ÷ ${arms[ceilings[0]].label}: ${formatSummary(measured.ratio(c, ceilings[0]), x)}; by round ${rounded(measured.perRound(c, ceilings[0]))}`,
      );
  }
  log(`load ${os.loadavg()[0].toFixed(2)} at the end`);
  console.log(report.join('\n'));
} finally {
  for (const arm of arms) arm.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(work, { recursive: true, force: true });
}
