// Instructions per request: Plinth builds and the bare uWS ceilings, each under valgrind's
// callgrind, counted over a fixed load. Unlike req/s or CPU time, the count of instructions a
// process executes per request is the same whatever else the machine does, so two builds can be
// told apart to a fraction of a per cent on a busy machine (the serving A/B, bench/serve-ab.mjs,
// resolves a few per cent at best). It counts user space only: the kernel's share of a request
// (over half its time on this machine) is not in it, and neither are cache misses; what it shows
// is the work Plinth's own code, V8, node and uWS do per request.
//
// For each arm, one at a time (no side-by-side needed: the count does not move with the load):
// 1. Plinth: started natively on a fresh data folder, the same Builder site as serve-ab (a
//    2,048-byte index.html and 1,000 pages of 2,048 bytes) deployed through the API and renamed
//    to one fixed name, its compressed variants waited for, then stopped. The ceilings need no setup.
// 2. The server started again under `valgrind --tool=callgrind --instr-atstart=no` (fast until
//    instrumented), every page asked for once, then wrk for INSTR_WARMUP_S so V8 has optimized
//    the request path (optimization follows call counts, not time, so a slowed process gets
//    there too).
// 3. Per scenario: instrumentation on (`callgrind_control -i on`), a short wrk pass, counters
//    zeroed (`-z`), wrk for INSTR_SECONDS (its request count is the divisor), a dump (`-d`);
//    then the same interval without load (zeroed, a sleep as long as the run, a dump): what the
//    process does at rest in that time (timers) is subtracted, but not the collector's work,
//    which collects what the requests left. Callgrind takes commands only while the process
//    runs, so requests are sent while a command waits (a few, against thousands).
// 4. From the dump (one file per thread, `--separate-threads=yes`): instructions per request,
//    the same without the collector's (a major collection comes every so often and may fall in a
//    run or not), the busiest thread's, and the split by where they ran: JIT code (V8's compiled
//    JavaScript, no object file), V8 builtins (`Builtins_*`, in the node binary), the collector,
//    the rest of node and V8, uWS, libc and others; then each arm's top functions. Two runs of
//    one build agree to about half a per cent.
//
// With INSTR_CACHE_SIM=1, callgrind also simulates the CPU's caches (`--cache-sim=yes`): each
// arm's reads and writes of data (Dr, Dw) and its misses in the first-level data cache (D1mr,
// D1mw), the first-level instruction cache (I1mr) and the last level (ILmr, DLmr, DLmw) per
// request, by where the code is and by function (the JIT's functions named through
// `--perf-basic-prof`'s /tmp/perf-<pid>.map when that option is in INSTR_NODE_ARGS; the ceilings
// get it too). The simulated caches are this machine's by default (INSTR_CACHE_ARGS: I1 32 KB
// 8-way, D1 48 KB 12-way, and as the last level the core's own 1 MB 16-way L2, since the shared
// 32 MB L3 holds every arm's whole working set); one process alone, no other process's lines
// evicting its own, so a miss here is a line the request itself has not touched lately.
//
// Usage: node bench/serve-instructions.mjs
// Env: INSTR_BUILDS (comma list of `label=folder` with a built dist/; default `this=.`),
//      INSTR_CEILINGS (ceiling,ceiling-reads,ceiling-pages, and each with `-ab`: its names, header
//      block and body as ArrayBuffers; empty for none), INSTR_SCENARIOS
//      (page2k,rotation), INSTR_SECONDS (8), INSTR_WARMUP_S (8), INSTR_CONNECTIONS (4),
//      INSTR_PAGES (1000), INSTR_NODE_ARGS (Node options for the Plinth arms, e.g.
//      --perf-basic-prof to name JIT code), INSTR_KEEP=1 (keep the callgrind files in
//      INSTR_OUT, default a temporary folder, for callgrind_annotate), INSTR_ENV (JSON of extra
//      environment for the Plinth arms, e.g. {"PLINTH_METRICS":"0"}), INSTR_CACHE_SIM=1 (simulate
//      the caches, above), INSTR_CACHE_ARGS (valgrind's --I1/--D1/--LL for it), INSTR_TOP (25).
// Needs valgrind (callgrind_control) and wrk. Optional, not part of CI; takes a few minutes an arm.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort, httpCall as call } from './lib/proc.mjs';
import { benchPage as page, pagePath, writeServePages } from './lib/serve-pages.mjs';
import { adminBuilderToken } from './lib/plinth-node.mjs';
import { runWrk } from './lib/wrk.mjs';

const env = process.env;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const benchDir = join(here, 'bench');
const builds = (env.INSTR_BUILDS ?? 'this=.')
  .split(',')
  .filter(Boolean)
  .map((item) => {
    const [label, folder] = item.split('=');
    return { label, root: resolve(folder ?? label) };
  });
const ceilingLabels = (env.INSTR_CEILINGS ?? 'ceiling,ceiling-reads,ceiling-pages').split(',').filter(Boolean);
const scenarioIds = (env.INSTR_SCENARIOS ?? 'page2k,rotation').split(',');
const seconds = Number(env.INSTR_SECONDS ?? 8);
const warmupSeconds = Number(env.INSTR_WARMUP_S ?? 8);
const connections = Number(env.INSTR_CONNECTIONS ?? 4);
const pageCount = Number(env.INSTR_PAGES ?? 1000);
const nodeArgs = (env.INSTR_NODE_ARGS ?? '').split(' ').filter(Boolean);
const extraEnv = env.INSTR_ENV ? JSON.parse(env.INSTR_ENV) : {};
const cacheSim = env.INSTR_CACHE_SIM === '1';
// This machine (AMD EPYC, family 26): L1i 32 KB 8-way, L1d 48 KB 12-way, L2 1 MB 16-way per core; 64-byte lines.
const cacheArgs = (env.INSTR_CACHE_ARGS ?? '--I1=32768,8,64 --D1=49152,12,64 --LL=1048576,16,64').split(' ').filter(Boolean);
const work = mkdtempSync(join(tmpdir(), 'plinth-instr-'));
const out = env.INSTR_OUT ?? join(work, 'callgrind');
mkdirSync(out, { recursive: true });
const log = (msg) => process.stdout.write(`[instr ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// The pages of bench/serve-ab.mjs, byte for byte.
const { indexFile, pagesDir } = writeServePages(work, pageCount);

async function until(what, ready, tries = 600) {
  for (let i = 0; i < tries; i++) {
    if (await ready().catch(() => false)) return;
    await sleep(200);
  }
  throw new Error(`${what}: not ready`);
}

/** A data folder with the site deployed (by the build itself, run natively), and its host. */
async function preparePlinth(build) {
  const dataDir = mkdtempSync(join(work, `${build.label}-`));
  const port = await freePort();
  const serverEnv = {
    ...env,
    PLINTH_PORT: String(port),
    PLINTH_DATA_DIR: dataDir,
    PLINTH_THREADS: '1',
    PLINTH_LOG_LEVEL: 'silent',
    PLINTH_LISTEN_HOST: '127.0.0.1',
    ...extraEnv,
  };
  const token = adminBuilderToken(build.root, dataDir);
  const child = spawn(process.execPath, [join(build.root, 'dist/main.js')], { env: serverEnv, stdio: 'ignore' });
  let host;
  try {
    await until(`${build.label} start`, async () => (await call(port, 'api.localhost', 'GET', '/v1/me', token)).status === 200);
    const files = [{ path: 'index.html', content: page('Bench') }];
    for (let i = 0; i < pageCount; i++) files.push({ path: pagePath(i), content: page(`Page ${i}`) });
    const answer = await call(port, 'api.localhost', 'POST', '/v1/deploy', token, JSON.stringify({ files }));
    if (answer.status !== 201) throw new Error(`${build.label}: deploy answered ${answer.status} ${answer.text}`);
    // One name for every run: the site's name is hashed and compared per request, so a random one
    // would move the count by a few dozen instructions from run to run.
    const renamed = await call(
      port,
      'api.localhost',
      'POST',
      `/v1/sites/${JSON.parse(answer.text).site.name}/rename`,
      token,
      JSON.stringify({ name: 'instr-bench' }),
    );
    if (renamed.status !== 200) throw new Error(`${build.label}: rename answered ${renamed.status} ${renamed.text}`);
    host = 'instr-bench.sites.localhost';
    // The compressor runs after the answer: done once the last page has its brotli variant.
    await until(
      `${build.label} variants`,
      async () =>
        (await call(port, host, 'GET', `/${pagePath(pageCount - 1)}`, undefined, undefined, { 'accept-encoding': 'br' })).headers['content-encoding'] === 'br',
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  return { env: serverEnv, port, host, argv: [...nodeArgs, join(build.root, 'dist/main.js')] };
}

function prepareCeiling(label) {
  return freePort().then((port) => ({
    port,
    host: 'bench.sites.localhost',
    argv: [...nodeArgs.filter((a) => a === '--perf-basic-prof'), join(benchDir, 'ceiling.mjs')],
    env: {
      ...env,
      CEILING_PORT: String(port),
      CEILING_BODY: indexFile,
      ...(label.startsWith('ceiling-pages') ? { CEILING_PAGES_DIR: pagesDir } : {}),
      ...(label.startsWith('ceiling-reads') ? { CEILING_READS: '1' } : {}),
      ...(label.endsWith('-ab') ? { CEILING_ARRAY_BUFFERS: '1' } : {}),
    },
  }));
}

/** Runs a callgrind_control command, sending requests until the process has taken it (it reads commands only while it runs). */
async function control(arm, args) {
  const child = spawn('callgrind_control', [...args, String(arm.pid)], { stdio: 'ignore' });
  const done = new Promise((r) => child.once('exit', r));
  let finished = false;
  void done.then(() => (finished = true));
  await sleep(100);
  while (!finished) {
    await call(arm.port, arm.host, 'GET', '/').catch(() => undefined);
    await sleep(100);
  }
  await done;
}

const scenarios = {
  page2k: (arm) => ({ path: '/', headers: { Host: arm.host } }),
  rotation: (arm) => ({ path: '/', headers: { Host: arm.host }, wrkScript: { file: 'pages.lua', args: [arm.host, String(pageCount)] } }),
};
const wrk = (arm, scenario, secs) => runWrk({ port: arm.port, seconds: secs, connections, scenario: scenarios[scenario](arm), benchDir });

/**
 * Self cost of a callgrind file, one figure per event (`events:` line: Ir alone, or with the cache
 * simulation Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw), split by where the code is. Name compression:
 * `ob=(3) name` names object 3, a later `ob=(3)` refers to it; `fn` likewise. The line after
 * `calls=` is the inclusive cost of a call, not the caller's own, and is skipped. A cost line's
 * trailing zeros may be left out. `jit` names the JIT's addresses (see jitNames).
 */
function parseCallgrind(text, jit) {
  const names = { ob: new Map(), fn: new Map() };
  const nameOf = (kind, value) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (!m) return value;
    if (m[2] !== undefined) names[kind].set(m[1], m[2]);
    return names[kind].get(m[1]) ?? value;
  };
  let events = ['Ir'];
  let positions = 1;
  let ob = '';
  let fn = '';
  let key = '';
  let group = '';
  let skip = false;
  const byGroup = new Map();
  const byFn = new Map();
  const total = [];
  const add = (map, k, costs) => {
    let sum = map.get(k);
    if (!sum) map.set(k, (sum = zeros(events.length)));
    for (let i = 0; i < costs.length; i++) sum[i] += costs[i];
  };
  const where = () => {
    group = groupOf(ob, fn);
    key = `${group === 'JIT code' && jit ? jit(fn) : fn} [${ob.split('/').pop()}]`;
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('ob=')) {
      ob = nameOf('ob', line.slice(3));
      where();
    } else if (line.startsWith('fn=')) {
      fn = nameOf('fn', line.slice(3));
      where();
    } else if (line.startsWith('cob=')) nameOf('ob', line.slice(4));
    else if (line.startsWith('cfn=')) nameOf('fn', line.slice(4));
    else if (line.startsWith('calls=')) skip = true;
    else if (line.startsWith('events:')) {
      events = line.slice(7).trim().split(/\s+/);
      total.push(...zeros(events.length));
    } else if (line.startsWith('positions:')) positions = line.slice(10).trim().split(/\s+/).length;
    else if (/^[+\-*\d]/.test(line)) {
      if (skip) {
        skip = false;
        continue;
      }
      const costs = line.split(' ').slice(positions).map(Number);
      for (let i = 0; i < costs.length; i++) total[i] += costs[i];
      add(byGroup, group, costs);
      add(byFn, key, costs);
    }
  }
  if (total.length === 0) total.push(0);
  return { events, total, byGroup, byFn };
}

/**
 * Names for the JIT's code from node's `--perf-basic-prof` map (`/tmp/perf-<pid>.map`: start,
 * size, name; under valgrind the process keeps the pid valgrind started with): callgrind names a
 * function it has no symbol for by its address, which falls in one of the map's ranges.
 */
function jitNames(pid) {
  let text;
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8');
  } catch {
    return undefined;
  }
  const starts = [];
  const ends = [];
  const labels = [];
  const entries = text
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter(Boolean)
    .map((m) => [parseInt(m[1], 16), parseInt(m[2], 16), m[3]])
    .sort((a, b) => a[0] - b[0]);
  for (const [start, size, label] of entries) {
    starts.push(start);
    ends.push(start + size);
    labels.push(label);
  }
  return (fn) => {
    const m = /^0x([0-9a-f]+)$/.exec(fn);
    if (!m) return fn;
    const address = parseInt(m[1], 16);
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= address) lo = mid + 1;
      else hi = mid - 1;
    }
    // A code object moved or dropped by V8 leaves its old range in the map; the latest entry wins the search.
    return hi >= 0 && address < ends[hi] ? labels[hi].replace(/^(LazyCompile|Function):\s*/, '') : 'JIT (unnamed)';
  };
}

const zeros = (n) => Array.from({ length: n }, () => 0);

const GROUPS = ['JIT code', 'V8 builtins', 'GC', 'node and V8 (C++)', 'uWS', 'libc', 'other'];
// V8's garbage collector by its function names: a major collection (marking, sweeping, compacting)
// comes every so many seconds, and under callgrind's slowed clock it may or may not fall in a run.
const GC_FUNCTION =
  /Marking|Marker|Sweep|Scaveng|Evacuat|Compact|RememberedSet|MemoryChunk|SlotSet|BodyDescriptor|SizeFromMap|ActiveSystemPages|heap::base|v8::internal::Heap::|GCTracer|__popcount/;
function groupOf(ob, fn) {
  if (ob === '???' || ob === '') return 'JIT code';
  if (GC_FUNCTION.test(fn)) return 'GC';
  if (ob.endsWith('.node')) return 'uWS';
  if (/\/libc[.-]/.test(ob)) return 'libc';
  if (ob.endsWith('/node')) return fn.includes('Builtins_') ? 'V8 builtins' : 'node and V8 (C++)';
  return 'other';
}

/** The dump files of one `-d`: `<out>/<arm>.<pid>.<n>-<thread>`, the highest n, summed over threads. */
function readDump(arm, n) {
  const prefix = `${arm.file}.${n}-`;
  const files = readdirSync(out).filter((f) => f.startsWith(prefix.split('/').pop()));
  const jit = jitNames(arm.pid);
  const threads = files.map((f) => parseCallgrind(readFileSync(join(out, f), 'utf8'), jit));
  const events = threads[0]?.events ?? ['Ir'];
  const sum = { events, total: zeros(events.length), byGroup: new Map(), byFn: new Map(), busiest: 0 };
  const add = (map, k, costs) => {
    const to = map.get(k) ?? map.set(k, zeros(events.length)).get(k);
    costs.forEach((c, i) => (to[i] += c));
  };
  for (const t of threads) {
    t.total.forEach((c, i) => (sum.total[i] += c));
    sum.busiest = Math.max(sum.busiest, t.total[0]);
    for (const [k, v] of t.byGroup) add(sum.byGroup, k, v);
    for (const [k, v] of t.byFn) add(sum.byFn, k, v);
  }
  return sum;
}

// Each ceiling where it is the reference: the one page (and its reads) for page2k, the pages for the rotation.
// A `-ab` ceiling hands uWS ArrayBuffers (bench/ceiling.mjs CEILING_ARRAY_BUFFERS), as Plinth does.
const CEILING_SCENARIOS = {
  ceiling: ['page2k'],
  'ceiling-reads': ['page2k'],
  'ceiling-pages': ['rotation'],
  'ceiling-ab': ['page2k'],
  'ceiling-reads-ab': ['page2k'],
  'ceiling-pages-ab': ['rotation'],
};

/**
 * Instructions per request: the run's, less what the process did at rest in as long a time. The
 * collector's work at rest is not subtracted: it collects what the requests left (a major
 * collection may fall in either interval, or in neither).
 */
const atRest = (r, group, e = 0) => (group === 'GC' ? 0 : (r.idle.byGroup.get(group)?.[e] ?? 0));
const groupPerRequest = (r, group, e = 0) => ((r.loaded.byGroup.get(group)?.[e] ?? 0) - atRest(r, group, e)) / r.requests;
const perRequest = (r, e = 0) => (r.loaded.total[e] - (r.idle.total[e] - (r.idle.byGroup.get('GC')?.[e] ?? 0))) / r.requests;

async function measureArm(label, prepared, only = scenarioIds) {
  const ids = scenarioIds.filter((id) => only.includes(id));
  const file = join(out, label);
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      ...(cacheSim ? ['--cache-sim=yes', ...cacheArgs] : []),
      `--callgrind-out-file=${file}.%p`,
      process.execPath,
      ...prepared.argv,
    ],
    { env: prepared.env, stdio: 'ignore' },
  );
  const arm = { label, pid: child.pid, port: prepared.port, host: prepared.host, file: `${file}.${child.pid}`, dumps: 0 };
  const results = {};
  try {
    await until(`${label} under valgrind`, async () => (await call(arm.port, arm.host, 'GET', '/')).status === 200, 900);
    for (let i = 0; i < pageCount; i++) await call(arm.port, arm.host, 'GET', `/${pagePath(i)}`);
    for (const scenario of ids) await wrk(arm, scenario, warmupSeconds);
    await control(arm, ['-i', 'on']);
    for (const scenario of ids) {
      await wrk(arm, scenario, 2);
      await control(arm, ['-z']);
      const run = await wrk(arm, scenario, seconds);
      if (run.badStatus > 0) throw new Error(`${label} ${scenario}: ${run.badStatus} bad statuses`);
      // A slowed process on a busy machine may miss wrk's 2 s time-out now and then: a few
      // requests against thousands, said here.
      if (run.errors > 0) log(`${label} ${scenario}: ${run.errors} socket errors (time-outs) in ${run.requests} requests`);
      await control(arm, ['-d']);
      const loaded = readDump(arm, ++arm.dumps);
      await control(arm, ['-z']);
      await sleep(run.seconds * 1000);
      await control(arm, ['-d']);
      const idle = readDump(arm, ++arm.dumps);
      const r = { requests: run.requests, rps: run.rps, loaded, idle };
      results[scenario] = r;
      log(
        `${label} ${scenario}: ${run.requests} requests (${Math.round(run.rps)}/s under callgrind), ${Math.round(perRequest(r))} instructions a request, ${Math.round(perRequest(r) - groupPerRequest(r, 'GC'))} without GC (${Math.round(loaded.total[0] / run.requests)} before the idle ${Math.round(idle.total[0] / run.requests)}, of which GC ${Math.round((idle.byGroup.get('GC')?.[0] ?? 0) / run.requests)})`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    // The JIT's map (--perf-basic-prof), about 1 MB a process: kept only with the callgrind files.
    if (env.INSTR_KEEP !== '1') rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
  }
  return results;
}

const k = (n) => Math.round(n).toLocaleString('en-US');
const topCount = Number(env.INSTR_TOP ?? 25);

/**
 * The cache simulation's figures per request: every event, at-rest work subtracted as for the
 * instructions; the data misses (D1mr + D1mw, DLmr + DLmw) by where the code is; and each arm's
 * functions that miss most, first level and last.
 */
function cacheReport(measured) {
  const lines = [];
  const f2 = (n) => n.toFixed(2);
  const sumOf = (costs, names, events) => names.reduce((a, n) => a + (costs?.[events.indexOf(n)] ?? 0), 0);
  for (const scenario of scenarioIds) {
    const arms = measured.filter(({ results }) => results[scenario]);
    if (arms.length === 0) continue;
    const events = arms[0].results[scenario].loaded.events;
    if (!events.includes('D1mr')) return ['(no cache events in the dumps: was --cache-sim=yes taken?)'];
    lines.push(`${scenario}: simulated cache events per request (${cacheArgs.join(' ')}; at-rest work but for GC subtracted)`);
    lines.push(`  ${'arm'.padEnd(14)} ${events.map((e) => e.padStart(9)).join(' ')}`);
    for (const { label, results } of arms) {
      const r = results[scenario];
      lines.push(`  ${label.padEnd(14)} ${events.map((_, e) => (e < 3 ? k(perRequest(r, e)) : f2(perRequest(r, e))).padStart(9)).join(' ')}`);
    }
    lines.push(`${scenario}: data misses per request by where the code is, D1 (read+write) / LL (read+write)`);
    lines.push(`  ${'arm'.padEnd(14)} ${GROUPS.map((g) => g.padStart(Math.max(13, g.length))).join(' ')}`);
    for (const { label, results } of arms) {
      const r = results[scenario];
      const per = (g, names) => names.reduce((a, n) => a + groupPerRequest(r, g, events.indexOf(n)), 0);
      const cells = GROUPS.map((g) => `${f2(per(g, ['D1mr', 'D1mw']))}/${f2(per(g, ['DLmr', 'DLmw']))}`.padStart(Math.max(13, g.length)));
      lines.push(`  ${label.padEnd(14)} ${cells.join(' ')}`);
    }
  }
  for (const [title, names] of [
    ['first-level data misses (D1mr+D1mw)', ['D1mr', 'D1mw']],
    ['last-level data misses (DLmr+DLmw)', ['DLmr', 'DLmw']],
    ['first-level instruction misses (I1mr)', ['I1mr']],
  ]) {
    for (const { label, results } of measured) {
      for (const scenario of scenarioIds) {
        const r = results[scenario];
        if (!r) continue;
        const { events } = r.loaded;
        const top = [...r.loaded.byFn]
          .map(([name, costs]) => [name, sumOf(costs, names, events), costs[0]])
          .sort((a, b) => b[1] - a[1])
          .slice(0, topCount);
        lines.push(`${label} ${scenario}, top functions by ${title} per request (and their instructions):`);
        for (const [name, misses, ir] of top) lines.push(`  ${f2(misses / r.requests).padStart(7)} ${k(ir / r.requests).padStart(6)}  ${name}`);
      }
    }
  }
  return lines;
}
try {
  const measured = [];
  for (const build of builds) {
    log(`${build.label}: deploying natively`);
    measured.push({ label: build.label, results: await measureArm(build.label, await preparePlinth(build)) });
  }
  for (const label of ceilingLabels) measured.push({ label, results: await measureArm(label, await prepareCeiling(label), CEILING_SCENARIOS[label]) });
  const lines = [];
  for (const scenario of scenarioIds) {
    lines.push(`${scenario}: instructions per request (user space, all threads; at-rest work of the same interval, but for GC, subtracted)`);
    lines.push(
      `  ${'arm'.padEnd(14)} ${'per request'.padStart(11)} ${'without GC'.padStart(11)} ${'busiest thr'.padStart(11)} ${GROUPS.map((g) => g.padStart(Math.max(10, g.length))).join(' ')}  requests`,
    );
    for (const { label, results } of measured) {
      const r = results[scenario];
      if (!r) continue;
      const per = perRequest(r);
      const of = (g) => groupPerRequest(r, g);
      const groups = GROUPS.map((g) => k(of(g)).padStart(Math.max(10, g.length)));
      lines.push(
        `  ${label.padEnd(14)} ${k(per).padStart(11)} ${k(per - of('GC')).padStart(11)} ${k(r.loaded.busiest / r.requests).padStart(11)} ${groups.join(' ')}  ${r.requests}`,
      );
    }
  }
  if (cacheSim) lines.push(...cacheReport(measured));
  // Where each arm's instructions go, its top functions, for the difference to a ceiling.
  for (const { label, results } of measured) {
    for (const scenario of scenarioIds) {
      const r = results[scenario];
      if (!r) continue;
      const top = [...r.loaded.byFn].sort((a, b) => b[1][0] - a[1][0]).slice(0, topCount);
      lines.push(`${label} ${scenario}, top functions (instructions per request):`);
      for (const [name, costs] of top) lines.push(`  ${k(costs[0] / r.requests).padStart(7)}  ${name}`);
    }
  }
  console.log(lines.join('\n'));
  if (env.INSTR_KEEP === '1') log(`callgrind files kept in ${out}`);
} finally {
  if (env.INSTR_KEEP !== '1' || env.INSTR_OUT) rmSync(work, { recursive: true, force: true });
  else rmSync(join(work, 'ceiling-pages'), { recursive: true, force: true });
}
