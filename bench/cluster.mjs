// Cluster bench: what running on PostgreSQL and a bucket costs one Plinth node, against the same
// node embedded (LMDB and a blob folder only), on the same machine in the same run. Writes the
// cluster section of bench/RESULTS.md.
//
// Four parts (CLUSTER_PARTS picks some):
// - serve: cluster node A (records in a private PostgreSQL, blobs in s3rver, its data directory a
//   replica and a cache) and an embedded node, side by side on their own ports with the same
//   PLINTH_THREADS, serving the bench:serve corpus's site (built by lib/corpus.mjs, published
//   through the store by lib/publish.mjs: into the embedded node's data directory, and into the
//   cluster through an operator's store, so A first downloads every file from the bucket). A
//   warm-up pass asks for every file once, as visitors in steady state would have. Cluster node B
//   then starts on a copy of A's filled cache (as A after a restart) and gets the same pass. wrk
//   measures the 2 KB page and the page rotation, the three nodes visited in turn every round in
//   a rotated order (lib/rounds.mjs); each cluster node ÷ embedded is taken per round, and so is
//   the difference in CPU time per request (from /proc).
// - propagate: three cluster nodes A, B, C. N times: deploy an update on A (JSON, base_revision),
//   note when its 201 arrives, then poll B and C every CLUSTER_POLL_MS, with HEAD until they know
//   the new revision and with GET until they serve the new bytes; and check that A serves them on
//   its first request after the 201.
// - deploy: the same deploys on the embedded node and on cluster node A, in rounds (each round
//   one new content, deployed once to each, order rotated): a one-file JSON update, and cold
//   creates of bench:deploy's 100-file (~1 MB) and 1,000-file (~50 MB) archives.
// - first: files of 2 KB, 100 KB and 5 MB deployed through node B, then asked of node C (which
//   has never had them) twice: the first request downloads from the bucket, the second is cached.
//
// Env: BENCH_DURATION (s per cell and round, 3), BENCH_ROUNDS (7), BENCH_WARMUP (s per cell in the
//      warm-up pass, 1), BENCH_CONNECTIONS (64), BENCH_PAGES (1000), BENCH_LOADGENS (wrk; add
//      autocannon), PLINTH_THREADS (unset: Plinth's default), CLUSTER_PROPAGATIONS (100),
//      CLUSTER_POLL_MS (2), CLUSTER_DEPLOY_ROUNDS (9 for the JSON and 100-file deploys; the
//      1,000-file one takes CLUSTER_BIG_ROUNDS, 5), CLUSTER_FIRST_SAMPLES (9), CLUSTER_PARTS
//      (serve,propagate,deploy,first), CLUSTER_BUILD (a checkout whose dist/ to run instead of
//      this one's), CLUSTER_NODE_ARGS (Node flags for the Plinth nodes, comma-separated, e.g.
//      --cpu-prof,--cpu-prof-dir=/tmp/prof), BENCH_NO_WRITE=1 to print without touching RESULTS.md,
//      CLUSTER_TIMELINE (a file: for each timed archive deploy on cluster node A of the sites
//      CLUSTER_TIMELINE_SITES names, `big` (1,000 files, the default) and/or `small` (100 files),
//      every thread's CPU of the node, s3rver and PostgreSQL sampled every CLUSTER_TIMELINE_MS, 20
//      (5 suits the small site), from /proc/<pid>/task/*/schedstat, with s3rver's PUTs, as JSON
//      lines; `node bench/timeline.mjs <file>` prints them as slices; the sampling costs this
//      process a few % of a core).
// Defaults take about 6 minutes after the build. Every sample is in bench/.work/cluster/results.json.
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAIN_SITE, makeMainSite, pagePath } from './lib/corpus.mjs';
import { loadContentTypes, openPublisher } from './lib/publish.mjs';
import { addBuilderToken, createClient, deploy, SITE_DOMAIN, startPlinthNode, visit } from './lib/plinth-node.mjs';
import { hasPostgres, startPostgres } from './lib/postgres.mjs';
import { startS3rver } from './lib/s3rver.mjs';
import { cpuTimeMs, ensureTools, stopChild, threadsOf } from './lib/proc.mjs';
import { runWrk } from './lib/wrk.mjs';
import { runAutocannon } from './lib/autocannon.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { noise, writeSite } from './lib/site-gen.mjs';
import { tarGz } from './lib/archive.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
// The build whose dist/ runs: this checkout's, or another's (CLUSTER_BUILD) to compare two builds
// with the same bench.
const root = process.env.CLUSTER_BUILD ?? join(benchDir, '..');
const work = join(benchDir, '.work', 'cluster');
const env = process.env;
const list = (v, d) =>
  (v ?? d)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const cfg = {
  seconds: Number(env.BENCH_DURATION ?? 3),
  warmup: Number(env.BENCH_WARMUP ?? 1),
  rounds: Math.max(1, Number(env.BENCH_ROUNDS ?? 7)),
  connections: Number(env.BENCH_CONNECTIONS ?? 64),
  pageCount: Number(env.BENCH_PAGES ?? 1000),
  gens: list(env.BENCH_LOADGENS, 'wrk'),
  threads: env.PLINTH_THREADS ? Number(env.PLINTH_THREADS) : undefined,
  propagations: Number(env.CLUSTER_PROPAGATIONS ?? 100),
  pollMs: Number(env.CLUSTER_POLL_MS ?? 2),
  // Deploys on two shared cores spread widely from round to round (the hypervisor's steal, in
  // bursts): enough rounds that a run's median of the per-round ratios is not set by one or two.
  deployRounds: Math.max(1, Number(env.CLUSTER_DEPLOY_ROUNDS ?? 9)),
  bigRounds: Math.max(1, Number(env.CLUSTER_BIG_ROUNDS ?? 5)),
  firstSamples: Math.max(1, Number(env.CLUSTER_FIRST_SAMPLES ?? 9)),
  parts: list(env.CLUSTER_PARTS, 'serve,propagate,deploy,first'),
};
const GOAL = 0.95;
// A deploy's compressed variants are made (and, in a cluster, uploaded) after its 201: each timed
// deploy waits this long after the one before, so it runs on an idle node, as in bench:deploy.
const IDLE_MS = { json: 1000, archive: 3000 };
const PROPAGATION_TIMEOUT_MS = 10_000;
const mainHost = `${MAIN_SITE}.${SITE_DOMAIN}`;
const log = (msg) => process.stdout.write(`[cluster ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

// Everything this run started, stopped on any way out: Plinth by PID, PostgreSQL and s3rver by
// their own stop (which also removes their files).
const children = new Set();
const services = [];
async function stopAll() {
  for (const child of children) await stopChild(child);
  children.clear();
  for (const service of services.splice(0)) await service.stop().catch((err) => log(`stop failed: ${err.message}`));
}
process.on('SIGINT', () => {
  stopAll().finally(() => process.exit(130));
});

const k = (n) => (Number.isFinite(n) ? `${(n / 1000).toFixed(1)}k` : '–');
const x = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '–');
const msf = (n) => (!Number.isFinite(n) ? '–' : n < 10 ? `${n.toFixed(2)} ms` : n < 100 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`);
const n0 = (n) => Math.round(n).toLocaleString('en-US');

/** The p-th percentile (nearest rank) of the finite numbers in `values`. */
function percentile(values, p) {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  return xs[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))];
}

/** Files and bytes under a directory (a node's blob folder). */
function countFiles(dir) {
  let files = 0;
  let bytes = 0;
  if (!existsSync(dir)) return { files, bytes };
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += statSync(join(entry.parentPath ?? entry.path, entry.name)).size;
  }
  return { files, bytes };
}

/** The `deploy.timing` lines of a node's log, by revision id. */
function deployTimings(logPath) {
  const byRevision = new Map();
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.includes('deploy.timing')) continue;
    try {
      const entry = JSON.parse(line);
      byRevision.set(entry.revision, entry);
    } catch {
      /* a line cut by the read */
    }
  }
  return byRevision;
}

// --- Set-up ------------------------------------------------------------------------------------

async function setUp(machine) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  if (!hasPostgres()) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (the cluster tests need it too)');
  if (!existsSync(join(root, 'dist/main.js'))) throw new Error('dist/main.js missing: run `npm run build` (npm run bench:cluster does)');
  const pg = await startPostgres();
  services.push(pg);
  const s3 = await startS3rver('plinth-bench');
  services.push(s3);
  log(`PostgreSQL on port ${pg.port}, s3rver at ${s3.endpoint}`);
  const bucket = s3.options();

  const { loadConfig } = await import(new URL('../dist/config.js', import.meta.url).href);
  const threads = cfg.threads ?? loadConfig({}).threads;
  // Both modes get the same settings; the cluster nodes add PostgreSQL and the bucket. Rate caps
  // are off so that hundreds of deploys and polls from one address are not refused.
  const common = {
    PLINTH_THREADS: String(threads),
    PLINTH_LOG_LEVEL: 'info',
    PLINTH_API_RATE_PER_CREDENTIAL: '0',
    PLINTH_API_RATE_PER_NETWORK: '0',
  };
  const clusterEnv = { ...common, PLINTH_DATABASE_URL: pg.url, ...s3.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

  // The same site, published through the store: into the embedded node's own directory, and into
  // the cluster through an operator's replica (records to PostgreSQL, blobs to the bucket).
  const corpus = makeMainSite(cfg.pageCount);
  const types = await loadContentTypes(root);
  const dataE = join(work, 'embedded');
  const published = {};
  const tokens = {};
  for (const [mode, dir, cluster] of [
    ['embedded', dataE, undefined],
    ['cluster', join(work, 'operator'), { databaseUrl: pg.url, bucket }],
  ]) {
    const started = performance.now();
    const pub = await openPublisher(root, dir, types, cluster);
    await pub.publish(MAIN_SITE, corpus);
    tokens[mode] = await addBuilderToken(root, pub.store);
    await pub.close();
    published[mode] = performance.now() - started;
    log(`${mode}: published ${MAIN_SITE} (${corpus.size} files) in ${Math.round(published[mode])} ms`);
  }
  const startNode = async (name, dataDir, extra) => {
    const node = await startPlinthNode({ root, dataDir, env: extra, logPath: join(work, `${name}.log`), nodeArgs: list(env.CLUSTER_NODE_ARGS, '') });
    children.add(node.child);
    node.name = name;
    node.client = createClient(node.port);
    log(`${name} ready on 127.0.0.1:${node.port} (pid ${node.child.pid})`);
    return node;
  };
  const embedded = await startNode('embedded', dataE, common);
  const nodeA = await startNode('A', join(work, 'node-a'), clusterEnv);
  const dirs = { B: join(work, 'node-b'), C: join(work, 'node-c') };
  return { machine, pg, s3, threads, corpus, types, published, tokens, embedded, nodeA, startNode, clusterEnv, dirs };
}

// --- Serving -----------------------------------------------------------------------------------

function scenarios() {
  const host = { Host: mainHost };
  return [
    { id: 'page2k', title: '2 KB page `/`', scenario: { path: '/', headers: host } },
    {
      id: 'pages',
      title: `${cfg.pageCount.toLocaleString('en-US')}-page rotation`,
      scenario: {
        path: '/',
        headers: host,
        wrkScript: { file: 'pages.lua', args: [mainHost, String(cfg.pageCount)] },
        requests: () => Array.from({ length: cfg.pageCount }, (_, i) => ({ method: 'GET', path: `/${pagePath(i)}` })),
      },
    },
  ];
}

/** Every file of the rotation and the page, once, checked against the corpus; resolves ms taken and mismatches. */
async function warmPass(node, corpus) {
  const paths = ['index.html', ...Array.from({ length: cfg.pageCount }, (_, i) => pagePath(i))];
  const started = performance.now();
  let wrong = 0;
  for (const path of paths) {
    const res = await visit(node.client, MAIN_SITE, path === 'index.html' ? '/' : `/${path}`);
    if (res.status !== 200 || !res.body.equals(corpus.get(path))) wrong++;
  }
  return { ms: performance.now() - started, files: paths.length, wrong };
}

async function measureServing(ctx) {
  const { embedded, nodeA, corpus, s3 } = ctx;
  // The cluster node learns of the operator's commit from the change log; wait for it.
  const deadline = Date.now() + 30_000;
  while ((await visit(nodeA.client, MAIN_SITE)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`node A does not serve ${MAIN_SITE}`);
    await sleep(50);
  }
  const bucketGets = () => s3.requests().filter((r) => r.method === 'GET').length;
  const warm = {};
  const fetched = {};
  const warmUp = async (node) => {
    const before = bucketGets();
    warm[node.name] = await warmPass(node, corpus);
    fetched[node.name] = bucketGets() - before;
    log(
      `warm-up pass on ${node.name}: ${warm[node.name].files} files in ${Math.round(warm[node.name].ms)} ms, ${fetched[node.name]} downloads, ${warm[node.name].wrong} wrong`,
    );
  };
  await warmUp(embedded);
  await warmUp(nodeA);
  const cache = countFiles(join(nodeA.dataDir, 'blobs'));
  log(`node A's cache holds ${cache.files} files (${(cache.bytes / 1e6).toFixed(1)} MB)`);
  // Node B starts on a copy of A's filled cache, as A would after a restart: the same files on
  // disk, none downloaded by this process. It tells what serving costs with a warm cache apart
  // from what filling the cache left in the process that did it.
  cpSync(join(nodeA.dataDir, 'blobs'), join(ctx.dirs.B, 'blobs'), { recursive: true });
  ctx.nodeB = await ctx.startNode('B', ctx.dirs.B, ctx.clusterEnv);
  await warmUp(ctx.nodeB);
  const arms = [embedded, nodeA, ctx.nodeB];

  const results = {};
  const requestsBefore = s3.requests().length;
  for (const sc of scenarios()) {
    for (const gen of cfg.gens) {
      const cell = (node, seconds) =>
        gen === 'wrk'
          ? runWrk({ port: node.port, seconds, connections: cfg.connections, scenario: sc.scenario, benchDir })
          : runAutocannon({ port: node.port, seconds, connections: cfg.connections, scenario: sc.scenario });
      const [e, a, b] = await runRounds(
        arms,
        cfg.rounds,
        async (node, round) => {
          const cpuBefore = cpuTimeMs(node.child.pid);
          const r = await cell(node, cfg.seconds);
          // The node's CPU per answered request (all its threads): less sensitive than req/s to
          // what else the shared cores are doing.
          r.cpuUs = ((cpuTimeMs(node.child.pid) - cpuBefore) * 1000) / r.requests;
          log(
            `${gen} ${sc.id.padEnd(7)} round ${round + 1} ${node.name.padEnd(8)} ${Math.round(r.rps).toString().padStart(7)} req/s  p50 ${+r.p50.toFixed(3)} ms  p99 ${+r.p99.toFixed(3)} ms  CPU ${r.cpuUs.toFixed(2)} µs/req  err ${r.errors}/${r.badStatus}`,
          );
          return r;
        },
        { warmup: cfg.warmup > 0 ? (node) => cell(node, cfg.warmup) : undefined },
      );
      const rps = (runs) => runs.map((r) => r.rps);
      const cpu = (runs) => runs.map((r) => r.cpuUs);
      const row = {
        title: sc.title,
        runs: { embedded: e, A: a, B: b },
        ratioA: pairedRatio(rps(a), rps(e)),
        ratioB: pairedRatio(rps(b), rps(e)),
        // CPU per request, cluster − embedded, round by round.
        cpuA: summarize(cpu(a).map((v, i) => v - e[i].cpuUs)),
        cpuB: summarize(cpu(b).map((v, i) => v - e[i].cpuUs)),
        command: e[0].command.replace(`:${embedded.port}/`, ':$PORT/').replace(`${root}/`, ''),
      };
      log(
        `${gen} ${sc.id}: A ÷ embedded per round ${a.map((r, i) => x(r.rps / e[i].rps)).join(' ')}, median ${x(row.ratioA.median)}; B ÷ embedded median ${x(row.ratioB.median)}; CPU µs/req A − embedded ${row.cpuA.median.toFixed(2)}, B − embedded ${row.cpuB.median.toFixed(2)}`,
      );
      (results[gen] ??= {})[sc.id] = row;
    }
  }
  const bucketDuring = s3.requests().length - requestsBefore;
  return { warm, fetched, cache, results, bucketDuring };
}

// --- Propagation -------------------------------------------------------------------------------

const updatePage = (i, marker) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Update ${i}</title></head><body><h1>Update ${i}</h1><p id="m">${marker}</p><p>${'Plinth propagation bench. '.repeat(70)}</p></body></html>\n`;

/** Polls `path` of `site` on `node` until its body holds `marker`; resolves performance.now() then, or NaN after the timeout. */
async function pollFor(node, site, marker, { path = '/', everyMs = cfg.pollMs, timeoutMs = PROPAGATION_TIMEOUT_MS } = {}) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const res = await visit(node.client, site, path);
    if (res.status === 200 && res.body.includes(marker)) return res.at;
    if (performance.now() > deadline) return NaN;
    await sleep(everyMs);
  }
}

/**
 * Polls `site` on `node` until it knows the revision whose page hashes to `sha` (a HEAD answers
 * with its ETag: HEAD never waits for a download), then GETs until the page's bytes arrive (the
 * first GET downloads the page from the bucket). Resolves both moments (performance.now() at the
 * status line), NaN for what did not happen before the timeout.
 */
async function pollRevision(node, site, sha, marker) {
  const deadline = performance.now() + PROPAGATION_TIMEOUT_MS;
  const etag = `"${sha}"`;
  let known = NaN;
  while (Number.isNaN(known)) {
    const res = await node.client.request({ method: 'HEAD', host: `${site}.${SITE_DOMAIN}`, path: '/' });
    if (res.status === 200 && res.headers.etag === etag) known = res.at;
    else if (performance.now() > deadline) return { known, served: NaN };
    else await sleep(cfg.pollMs);
  }
  for (;;) {
    const res = await visit(node.client, site);
    if (res.status === 200 && res.body.includes(marker)) return { known, served: res.at };
    if (performance.now() > deadline) return { known, served: NaN };
    await sleep(cfg.pollMs);
  }
}

async function measurePropagation(ctx, nodes) {
  const [a, b, c] = nodes;
  const token = ctx.tokens.cluster;
  let marker = `first-${randomBytes(6).toString('hex')}`;
  const created = await deploy(a.client, token, { files: [{ path: 'index.html', content: updatePage(0, marker) }] }, { json: true });
  const site = created.site;
  let base = created.revision;
  for (const node of [b, c]) if (!Number.isFinite(await pollFor(node, site, marker))) throw new Error(`node ${node.name} never served ${site}`);
  const delays = { B: { known: [], served: [] }, C: { known: [], served: [] } };
  let firstRequestFailures = 0;
  let missed = 0;
  for (let i = 1; i <= cfg.propagations; i++) {
    marker = `update-${i}-${randomBytes(6).toString('hex')}`;
    const page = updatePage(i, marker);
    const res = await deploy(a.client, token, { site, base_revision: base, files: [{ path: 'index.html', content: page }] }, { json: true });
    base = res.revision;
    // Measured from the moment the 201's status line arrived.
    const acked = res.at;
    const sha = sha256(Buffer.from(page));
    const [own, atB, atC] = await Promise.all([visit(a.client, site), pollRevision(b, site, sha, marker), pollRevision(c, site, sha, marker)]);
    if (own.status !== 200 || !own.body.includes(marker)) firstRequestFailures++;
    for (const [name, at] of [
      ['B', atB],
      ['C', atC],
    ]) {
      if (Number.isFinite(at.served)) {
        delays[name].known.push(at.known - acked);
        delays[name].served.push(at.served - acked);
      } else missed++;
    }
    if (i % 25 === 0) log(`propagation ${i}/${cfg.propagations}: last B ${msf(atB.served - acked)}, C ${msf(atC.served - acked)}`);
  }
  const stats = (xs) => ({ n: xs.length, p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs), min: Math.min(...xs) });
  const both = (key) => [...delays.B[key], ...delays.C[key]];
  const result = {
    B: stats(delays.B.served),
    C: stats(delays.C.served),
    both: stats(both('served')),
    known: { B: stats(delays.B.known), C: stats(delays.C.known), both: stats(both('known')) },
    firstRequestFailures,
    missed,
    delays,
  };
  log(
    `propagation: B p50 ${msf(result.B.p50)} p99 ${msf(result.B.p99)} max ${msf(result.B.max)}; C p50 ${msf(result.C.p50)} p99 ${msf(result.C.p99)} max ${msf(result.C.max)}; revision known p50 ${msf(result.known.both.p50)} p99 ${msf(result.known.both.p99)}; A first-request failures ${firstRequestFailures}; missed ${missed}`,
  );
  return result;
}

// --- Deploy time -------------------------------------------------------------------------------

/**
 * Waits `ms`, then until the bucket has had no request for half a second: a cluster deploy's
 * compressed variants go up after its 201, and the next timed deploy must not share the cores
 * with them.
 */
async function settle(s3, ms) {
  await sleep(ms);
  const deadline = Date.now() + 60_000;
  for (let seen = s3.requests().length; Date.now() < deadline;) {
    await sleep(500);
    const now = s3.requests().length;
    if (now === seen) return;
    seen = now;
  }
}

/**
 * CPU (ms) between two `threadsOf` readings of a node, s3rver and PostgreSQL, by who spent it: the
 * node's main thread (the HTTP threads are worker threads), its ingest workers (the threads at a
 * nice value above 0), its other threads (the HTTP thread, libuv's pool, V8's), s3rver, PostgreSQL
 * (every process of the server).
 */
function cpuBetween(before, after, nodePid, s3Pid) {
  const cpu = { main: 0, ingest: 0, other: 0, s3rver: 0, postgres: 0, ingestWait: 0, threads: [] };
  for (const [id, t] of after) {
    const ms = (t.ns - (before.get(id)?.ns ?? 0)) / 1e6;
    const waitMs = (t.waitNs - (before.get(id)?.waitNs ?? 0)) / 1e6;
    if (t.pid === nodePid) {
      const part = t.tid === nodePid ? 'main' : t.nice > 0 ? 'ingest' : 'other';
      cpu[part] += ms;
      // Time the ingest worker was ready to run but had no core.
      if (part === 'ingest') cpu.ingestWait += waitMs;
      if (ms >= 1) cpu.threads.push({ tid: t.tid, nice: t.nice, ms: Math.round(ms), waitMs: Math.round(waitMs) });
    } else cpu[t.pid === s3Pid ? 's3rver' : 'postgres'] += ms;
  }
  return cpu;
}
const CPU_PARTS = ['main', 'ingest', 'other', 's3rver', 'postgres'];

/**
 * CLUSTER_TIMELINE: every thread's CPU and wait (schedstat, ns) of these processes every
 * `everyMs`, until `stop()`. Threads are listed once at the start (with their nice value and
 * name) and again when one is missing, so a sample reads only the schedstat files.
 */
function sampleThreads(pids, everyMs) {
  const threads = {};
  const list = () => {
    for (const [id, t] of threadsOf(pids)) {
      if (threads[id] !== undefined) continue;
      let name = '';
      try {
        name = readFileSync(`/proc/${t.pid}/task/${t.tid}/comm`, 'utf8').trim();
      } catch {
        // Ended meanwhile.
      }
      threads[id] = { pid: t.pid, tid: t.tid, nice: t.nice, name };
    }
  };
  list();
  const samples = [];
  const take = () => {
    const at = Date.now();
    const cpu = {};
    for (const [id, t] of Object.entries(threads)) {
      try {
        const [ns, waitNs] = readFileSync(`/proc/${t.pid}/task/${t.tid}/schedstat`, 'utf8').split(' ').map(Number);
        cpu[id] = [ns, waitNs];
      } catch {
        // The thread ended.
      }
    }
    samples.push({ at, cpu });
  };
  take();
  let ticks = 0;
  const timer = setInterval(() => {
    // New threads (a PostgreSQL backend) are rare: the listing, which reads more files, runs every tenth sample.
    if (++ticks % 10 === 0) list();
    take();
  }, everyMs);
  return {
    threads,
    stop() {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

async function measureDeploys(ctx) {
  const { embedded, nodeA, tokens, s3, pg } = ctx;
  const arms = [embedded, nodeA];
  const timelineSites = list(env.CLUSTER_TIMELINE_SITES, 'big');
  const tokenOf = (node) => (node === embedded ? tokens.embedded : tokens.cluster);
  const out = [];
  /**
   * One timed deploy, with the CPU each process (and the node's main thread and ingest worker)
   * spent up to its 201; for the cluster node, also the bucket requests made before the 201 and
   * when each was taken and answered (ms from the deploy's start).
   */
  const timed = async (node, body, options, sampled = undefined) => {
    const sampler =
      sampled && env.CLUSTER_TIMELINE ? sampleThreads([node.child.pid, s3.pid(), ...pg.pids()], Number(env.CLUSTER_TIMELINE_MS ?? 20)) : undefined;
    const before = s3.requests().length;
    const answeredBefore = s3.answered().length;
    const pids = () => [node.child.pid, s3.pid(), ...pg.pids()];
    const cpuBefore = threadsOf(pids());
    const startedAt = Date.now();
    const res = await deploy(node.client, tokenOf(node), body, options);
    const cpu = cpuBetween(cpuBefore, threadsOf(pids()), node.child.pid, s3.pid());
    const requests = s3.requests().slice(before);
    const timeline = s3
      .answered()
      .slice(answeredBefore)
      .filter((r) => r.method === 'PUT')
      .map((r) => ({ url: r.url, at: r.at - startedAt, end: r.end - startedAt, bytes: r.bytes }));
    if (sampler !== undefined) {
      const samples = sampler.stop();
      const roles = { node: node.child.pid, s3rver: s3.pid() };
      writeFileSync(
        env.CLUSTER_TIMELINE,
        JSON.stringify({ site: sampled, startedAt, ms: res.ms, roles, threads: sampler.threads, samples, puts: timeline }) + '\n',
        {
          flag: 'a',
        },
      );
    }
    return {
      ms: res.ms,
      revision: res.revision,
      site: res.site,
      cpu,
      bucket: node === embedded ? undefined : countMethods(requests),
      ...(node === embedded ? {} : { timeline }),
    };
  };

  // One-file JSON update of a site each node has, with base_revision (what propagation deploys).
  // Three untimed deploys first: the JSON path of the ingest worker warms up.
  const sites = new Map();
  for (const node of arms) {
    let made;
    for (let i = 0; i < 3; i++) {
      const base = made ? { site: made.site, base_revision: made.revision } : {};
      made = await deploy(node.client, tokenOf(node), { ...base, files: [{ path: 'index.html', content: updatePage(0, `warm-up ${i}`) }] }, { json: true });
    }
    sites.set(node, { site: made.site, base: made.revision });
  }
  const markers = Array.from({ length: cfg.deployRounds }, (_, r) => `round-${r}-${randomBytes(6).toString('hex')}`);
  const json = await runRounds(arms, cfg.deployRounds, async (node, round) => {
    await settle(s3, IDLE_MS.json);
    const at = sites.get(node);
    const res = await timed(
      node,
      { site: at.site, base_revision: at.base, files: [{ path: 'index.html', content: updatePage(round + 1, markers[round]) }] },
      { json: true },
    );
    at.base = res.revision;
    return res;
  });
  out.push({
    id: 'json',
    label: 'JSON update, one 2 KB file',
    bytes: Buffer.byteLength(JSON.stringify({ files: [{ path: 'index.html', content: updatePage(1, markers[0]) }] })),
    byArm: json,
  });

  // Cold creates of bench:deploy's archives: each round one new archive, deployed once to each node.
  for (const [id, label, files, bytes, rounds] of [
    ['small', '100 files, ~1 MB archive (new site)', 100, 1024 * 1024, cfg.deployRounds],
    ['big', '1,000 files, ~50 MB archive (new site)', 1000, 50 * 1024 * 1024, cfg.bigRounds],
  ]) {
    const archives = [];
    for (let r = 0; r <= rounds; r++) {
      // Seeds far apart, as in bench:deploy, so no archive repeats another's content.
      writeSite(join(work, `${id}-site`), files, bytes, 10_000 * (r + 1) + (id === 'small' ? 5000 : 0) + 777);
      archives.push(tarGz(join(work, `${id}-site`), join(work, `${id}-${r}.tgz`)));
    }
    // Archive 0 warms both nodes up (the ingest worker's JIT) and is not timed.
    for (const node of arms) await deploy(node.client, tokenOf(node), readFileSync(archives[0]));
    const byArm = await runRounds(arms, rounds, async (node, round) => {
      await settle(s3, IDLE_MS.archive);
      return timed(node, readFileSync(archives[round + 1]), undefined, timelineSites.includes(id) && node !== embedded ? id : undefined);
    });
    out.push({ id, label, bytes: statSync(archives[1]).size, byArm });
  }
  await settle(s3, 300);
  const timings = new Map(arms.map((node) => [node, deployTimings(node.logPath)]));
  for (const row of out) {
    row.embedded = summarize(row.byArm[0].map((r) => r.ms));
    row.cluster = summarize(row.byArm[1].map((r) => r.ms));
    row.ratio = pairedRatio(
      row.byArm[1].map((r) => r.ms),
      row.byArm[0].map((r) => r.ms),
    );
    row.phases = arms.map((node, i) => {
      const entries = row.byArm[i].map((r) => timings.get(node).get(r.revision)).filter(Boolean);
      return {
        unpack: summarize(entries.map((e) => e.unpackMs)),
        commit: summarize(entries.map((e) => e.commitMs)),
        upload: summarize(entries.map((e) => e.uploadMs)),
      };
    });
    row.cpu = arms.map((_, i) => {
      const parts = Object.fromEntries(CPU_PARTS.map((part) => [part, summarize(row.byArm[i].map((r) => r.cpu[part]))]));
      // Two cores: a sum well under 2 × the wall time means something waited.
      const busy = summarize(row.byArm[i].map((r) => CPU_PARTS.reduce((sum, part) => sum + r.cpu[part], 0) / r.ms));
      return { ...parts, busy, ingestWait: summarize(row.byArm[i].map((r) => r.cpu.ingestWait)) };
    });
    const put = row.byArm[1].flatMap((r) => r.timeline ?? []);
    const putBytes = put.reduce((sum, r) => sum + r.bytes, 0);
    const s3Ms = row.byArm[1].reduce((sum, r) => sum + r.cpu.s3rver, 0);
    // Per MB only where MBs were sent: a 2 KB update's figure would be all per-request cost.
    row.s3rverPer = { mb: putBytes >= 1e6 ? s3Ms / (putBytes / 1e6) : NaN, request: put.length > 0 ? s3Ms / put.length : NaN };
    row.bucket = row.byArm[1][0].bucket;
    log(
      `deploy ${row.label}: embedded ${row.byArm[0].map((r) => Math.round(r.ms)).join('/')} ms, cluster ${row.byArm[1].map((r) => Math.round(r.ms)).join('/')} ms, per round ${formatSummary(row.ratio, x)}; bucket requests before the 201 ${JSON.stringify(row.bucket)}`,
    );
    for (const [i, name] of ['embedded', 'cluster'].entries()) {
      const c = row.cpu[i];
      log(
        `  CPU up to the 201, ${name}, medians: main ${msf(c.main.median)}, ingest ${msf(c.ingest.median)}, other ${msf(c.other.median)}, s3rver ${msf(c.s3rver.median)}, PostgreSQL ${msf(c.postgres.median)}; CPU ÷ wall ${formatSummary(c.busy, x)}; ingest worker waiting for a core ${msf(c.ingestWait.median)}`,
      );
    }
    log(`  s3rver CPU per MB received ${msf(row.s3rverPer.mb)}, per PUT ${msf(row.s3rverPer.request)}`);
  }
  return out;
}

/** Requests by method, with CopyObject apart: { HEAD: n, PUT: n, … }. */
function countMethods(requests) {
  const counts = {};
  for (const r of requests) {
    const kind = r.copy ? 'COPY' : r.method;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

// --- First request of a blob not in the cache -------------------------------------------------

const FIRST_SIZES = [
  ['2 KB', 2 * 1024, 'f2k.jpg'],
  ['100 KB', 100 * 1024, 'f100k.jpg'],
  ['5 MB', 5 * 1024 * 1024, 'f5m.jpg'],
];

async function measureFirstRequests(ctx, deployer, reader) {
  const token = ctx.tokens.cluster;
  let marker = `cold-${randomBytes(6).toString('hex')}`;
  const created = await deploy(deployer.client, token, { files: [{ path: 'index.html', content: updatePage(0, marker) }] }, { json: true });
  const site = created.site;
  let base = created.revision;
  const samples = Object.fromEntries(FIRST_SIZES.map(([label]) => [label, { first: [], second: [], bucket: [] }]));
  // The bucket's own answer for the same object (s3rver takes unsigned GETs), for reference.
  const s3Port = Number(new URL(ctx.s3.endpoint).port);
  const bucketClient = createClient(s3Port);
  let wrong = 0;
  for (let s = 0; s < cfg.firstSamples; s++) {
    marker = `sample-${s}-${randomBytes(6).toString('hex')}`;
    const files = FIRST_SIZES.map(([, bytes, path], i) => [
      path,
      Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), noise(bytes - 3, (s + 1) * 7919 + i * 104729 + Date.now())]),
    ]);
    const res = await deploy(
      deployer.client,
      token,
      {
        site,
        base_revision: base,
        files: [
          { path: 'index.html', content: updatePage(s, marker) },
          ...files.map(([path, bytes]) => ({ path, content: bytes.toString('base64'), encoding: 'base64' })),
        ],
      },
      { json: true },
    );
    base = res.revision;
    // The reader knows the new revision once it serves its page (that fetches the page alone).
    if (!Number.isFinite(await pollFor(reader, site, marker))) throw new Error(`node ${reader.name} never served sample ${s}`);
    // Sizes in a rotated order, so none always goes first after the deploy.
    for (let j = 0; j < FIRST_SIZES.length; j++) {
      const i = (j + s) % FIRST_SIZES.length;
      const [label, , path] = FIRST_SIZES[i];
      const first = await visit(reader.client, site, `/${path}`);
      const second = await visit(reader.client, site, `/${path}`);
      const want = sha256(files[i][1]);
      if (first.status !== 200 || second.status !== 200 || sha256(first.body) !== want || sha256(second.body) !== want) wrong++;
      const raw = await bucketClient.request({ host: `127.0.0.1:${s3Port}`, path: `/${ctx.s3.bucket}/blobs/${want.slice(0, 2)}/${want.slice(2, 4)}/${want}` });
      if (raw.status !== 200 || sha256(raw.body) !== want) wrong++;
      samples[label].first.push(first.ms);
      samples[label].second.push(second.ms);
      samples[label].bucket.push(raw.ms);
    }
  }
  bucketClient.close();
  const rows = FIRST_SIZES.map(([label]) => ({
    label,
    first: summarize(samples[label].first),
    second: summarize(samples[label].second),
    bucket: summarize(samples[label].bucket),
    samples: samples[label],
  }));
  for (const row of rows)
    log(
      `first request ${row.label}: ${formatSummary(row.first, msf)}; second ${formatSummary(row.second, msf)}; the bucket's own GET ${formatSummary(row.bucket, msf)}`,
    );
  return { rows, wrong };
}

// --- Report ------------------------------------------------------------------------------------

function render(ctx, parts, started) {
  const { machine, threads } = ctx;
  const out = [];
  out.push('## Cluster: one node on PostgreSQL and a bucket against embedded (`npm run bench:cluster`)', '');
  out.push(
    `Run ${machine.date}, commit \`${machine.commit}\`: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.kernel}, Node ${machine.node}, ${machine.wrk}. Total run time ${((performance.now() - started) / 60000).toFixed(1)} min; 1-minute load average ${ctx.loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end (the machine is shared: other work competes for the cores).`,
    '',
  );
  out.push(
    `Every node is \`node dist/main.js\` with \`PLINTH_THREADS=${threads}\`${cfg.threads ? '' : " (Plinth's default here)"} and the other settings at their defaults (API rate caps off). An embedded node has its data directory alone. A cluster node adds \`PLINTH_DATABASE_URL\`, a private PostgreSQL ${ctx.pgVersion} on loopback (\`bench/lib/postgres.mjs\`, which the cluster tests use too; fsync off), and \`PLINTH_S3_*\`, s3rver on loopback (\`bench/lib/s3rver.mjs\`, the tests' stand-in for S3: one Node process that writes each object and its metadata as files, not a tuned store). PostgreSQL, s3rver, every node and the load generator share the same ${machine.cores} cores.`,
    '',
  );
  const s = parts.serve;
  if (s) {
    out.push('### Serving: one cluster node against one embedded node', '');
    out.push(
      `The bench:serve site \`${MAIN_SITE}\` (\`bench/lib/corpus.mjs\`: a 2,048 B \`index.html\` and ${cfg.pageCount.toLocaleString('en-US')} pages of 1–3 KB, beside its script, image and videos) is published through the store (\`bench/lib/publish.mjs\`): into the embedded node's data directory (${(ctx.published.embedded / 1000).toFixed(1)} s), and into the cluster through an operator's replica, with the blobs uploaded to the bucket before the commit (${(ctx.published.cluster / 1000).toFixed(1)} s). Cluster node A learns of the site from the change log and holds none of its files. A warm-up pass asks a node for the page and every page of the rotation once and checks the bytes: ${s.warm.A.files} files in ${n0(s.warm.embedded.ms)} ms on the embedded node, and in ${n0(s.warm.A.ms)} ms on node A, which downloaded ${s.fetched.A} objects from the bucket into its cache (${s.cache.files} files, ${(s.cache.bytes / 1e6).toFixed(1)} MB). Cluster node B then starts on a copy of A's cache, as A would after a restart, and has the same warm-up pass (${n0(s.warm.B.ms)} ms, ${s.fetched.B} downloads). ${s.warm.embedded.wrong + s.warm.A.wrong + s.warm.B.wrong} answers differed from the corpus; the bucket received ${s.bucketDuring} requests during the measured rounds.`,
      '',
    );
    out.push(
      `Load: \`wrk -t1 -c${cfg.connections}\` (keep-alive, the site's Host header, no Accept-Encoding), as in bench:serve. The three nodes run side by side for the whole run; after a ${cfg.warmup} s warm-up run of each, ${cfg.rounds} rounds of ${cfg.seconds} s measure each node once per file, in an order rotated each round. Medians of the rounds with their range. "÷ embedded" is taken within each round (runs seconds apart), then its median; so is "CPU − embedded", the node's CPU time (all threads, from /proc) per answered request minus the embedded node's in the same round, which moves less than req/s when other work takes the cores.`,
      '',
    );
    for (const [gen, byScenario] of Object.entries(s.results)) {
      out.push(
        `| File (${gen}) | Node | req/s, median (range) | p99, median (range) | CPU per request | CPU − embedded, median of rounds (range) | ÷ embedded, per round | ÷ embedded, median (range) | Goal ≥ ${GOAL}× |`,
        '|---|---|--:|--:|--:|--:|---|--:|:-:|',
      );
      for (const r of Object.values(byScenario)) {
        for (const [key, label, ratio, cpu] of [
          ['embedded', 'embedded', null, null],
          ['A', 'cluster A (cache filled by this process)', r.ratioA, r.cpuA],
          ['B', 'cluster B (cache filled before start)', r.ratioB, r.cpuB],
        ]) {
          const runs = r.runs[key];
          const errs = runs.reduce((a, run) => a + run.errors + run.badStatus, 0);
          const us = (v) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)} µs`;
          out.push(
            `| ${r.title} | ${label}${errs ? ` (${errs} errors)` : ''} | ${formatSummary(summarize(runs.map((run) => run.rps)), k)} | ${formatSummary(summarize(runs.map((run) => run.p99)), msf)} | ${summarize(runs.map((run) => run.cpuUs)).median.toFixed(2)} µs | ${cpu ? formatSummary(cpu, us) : ''} | ${ratio ? r.runs[key].map((run, i) => x(run.rps / r.runs.embedded[i].rps)).join(', ') : ''} | ${ratio ? formatSummary(ratio, x) : ''} | ${key === 'A' ? (ratio.median >= GOAL ? 'PASS' : 'MISS') : ''} |`,
          );
        }
      }
      out.push('');
    }
  }
  const p = parts.propagate;
  if (p) {
    out.push('### Propagation: a deploy on node A, served by nodes B and C', '');
    out.push(
      `Three cluster nodes on the same PostgreSQL and bucket. ${cfg.propagations} times: a JSON deploy of a new 2 KB \`index.html\` on A with \`base_revision\`; from the arrival of A's \`201\`, B and C are asked for the page every ${cfg.pollMs} ms (on the site host, over a kept-alive connection), first with HEAD until its ETag is the new page's (the node knows the new revision: the change log's NOTIFY or its 250 ms poll, the replica applying the change, the serving thread dropping its cached site; a HEAD never waits for a download), then with GET until it serves the new bytes (the first GET downloads the page from the bucket). Delays run from the arrival of A's \`201\` to the arrival of the answer; polling adds up to ${cfg.pollMs} ms and a request to each.`,
      '',
    );
    out.push(
      '| Node | Updates seen | Serves the new bytes: p50 | p99 | max | min | Knows the new revision (HEAD): p50 | p99 | max |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const [name, st, known, of] of [
      ['B', p.B, p.known.B, cfg.propagations],
      ['C', p.C, p.known.C, cfg.propagations],
      ['B and C together', p.both, p.known.both, 2 * cfg.propagations],
    ])
      out.push(
        `| ${name} | ${st.n} of ${of} | ${msf(st.p50)} | ${msf(st.p99)} | ${msf(st.max)} | ${msf(st.min)} | ${msf(known.p50)} | ${msf(known.p99)} | ${msf(known.max)} |`,
      );
    out.push(
      '',
      `Node A, asked right after each \`201\`, served the new bytes on its first request ${cfg.propagations - p.firstRequestFailures} times of ${cfg.propagations} (${p.firstRequestFailures} failures). ${p.missed} updates were not seen within ${PROPAGATION_TIMEOUT_MS / 1000} s.`,
      '',
    );
  }
  const d = parts.deploy;
  if (d) {
    out.push('### Deploy time: embedded against cluster', '');
    out.push(
      `The same deploys over HTTP with a Builder API token on the embedded node and on cluster node A, timed from the first byte sent to the \`201\`. Each round deploys one new content once to each node, in an order rotated each round, each deploy at least ${IDLE_MS.json / 1000} s (JSON) or ${IDLE_MS.archive / 1000} s (archives) after the one before and once the bucket has been quiet for half a second, so that the previous deploy's compressed variants (made, and in a cluster uploaded, after its \`201\`) are done. The archives are bench:deploy's (\`bench/lib/site-gen.mjs\`: 40% text, 60% incompressible images), each a new site; untimed deploys warm both nodes up first. Phases from each node's \`deploy.timing\` log: unpack = the ingest worker; commit = on a cluster node, waiting for the blobs to be in the bucket (PostgreSQL is asked which ones a node uploaded lately, then ${env.PLINTH_BUCKET_PACK_MAX_BYTES === '0' ? 'one PUT per new blob (`PLINTH_BUCKET_PACK_MAX_BYTES=0`: packing off)' : `new blobs up to \`PLINTH_BUCKET_PACK_MAX_BYTES\` (${env.PLINTH_BUCKET_PACK_MAX_BYTES ?? '1048576, the default'}) packed: one PUT per 8 MiB or per 32 blobs while fewer than two packs are in flight (PostgreSQL asked about them 32 at a time, except a last burst of new content, which goes up unasked), larger ones one PUT each`}, 32 at a time, each started as soon as the unpack has stored its blob; the gzip variants of small blobs go up after the \`201\`), then the records through PostgreSQL (one round trip when the commit prepared while the last pack went up still stands) and the replica; on the embedded node, the LMDB commit.`,
      '',
    );
    out.push(
      '| Deploy | Body | Rounds | Embedded, median (range) | Cluster, median (range) | Cluster ÷ embedded, median of rounds (range) | Embedded unpack / commit | Cluster unpack / commit | Bucket requests before the 201 |',
      '|---|--:|--:|--:|--:|--:|--:|--:|---|',
    );
    for (const row of d) {
      const ph = (i) => `${msf(row.phases[i].unpack.median)} / ${msf(row.phases[i].commit.median)}`;
      const requests = Object.values(row.bucket ?? {}).reduce((a, n) => a + n, 0);
      const rate = requests / (row.phases[1].commit.median / 1000);
      const bucket =
        Object.entries(row.bucket ?? {})
          .map(([method, n]) => `${n} ${method}`)
          .join(', ') + (requests > 10 && Number.isFinite(rate) ? ` (${n0(rate)}/s over the commit)` : '');
      out.push(
        `| ${row.label} | ${row.bytes >= 1e6 ? `${(row.bytes / 1e6).toFixed(1)} MB` : `${(row.bytes / 1e3).toFixed(1)} KB`} | ${row.embedded.n} | ${formatSummary(row.embedded, msf)} | ${formatSummary(row.cluster, msf)} | ${formatSummary(row.ratio, x)} | ${ph(0)} | ${ph(1)} | ${bucket || 'none'} |`,
      );
    }
    out.push('');
    out.push(
      `CPU spent up to each \`201\` (from \`/proc/<pid>/task/*/schedstat\` before and after the deploy), medians of the rounds: the node's main thread (start-up and the supervision of its HTTP threads, which are worker threads), its ingest worker (the unpack; nice 10), its other threads (the HTTP thread, which runs the deploy's request, the publisher and the bucket and database clients; libuv's pool; V8's helpers), s3rver, and every PostgreSQL process; then all of it ÷ the deploy's wall time (on ${ctx.machine.cores} cores a sum well under ${ctx.machine.cores}× means something waited), and s3rver's CPU per MB and per \`PUT\` it was sent before the \`201\`s.`,
      '',
      '| Deploy | Node | Main thread | Ingest worker | Other threads | s3rver | PostgreSQL | CPU ÷ wall (range) | s3rver per MB / per PUT |',
      '|---|---|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const row of d) {
      for (const [i, name] of ['embedded', 'cluster'].entries()) {
        const c = row.cpu[i];
        const per = i === 1 ? `${msf(row.s3rverPer.mb)} / ${msf(row.s3rverPer.request)}` : '';
        out.push(
          `| ${i === 0 ? row.label : ''} | ${name} | ${msf(c.main.median)} | ${msf(c.ingest.median)} | ${msf(c.other.median)} | ${msf(c.s3rver.median)} | ${msf(c.postgres.median)} | ${formatSummary(c.busy, x)} | ${per} |`,
        );
      }
    }
    out.push('');
  }
  const f = parts.first;
  if (f) {
    out.push('### First request of a file the node has not cached', '');
    out.push(
      `${cfg.firstSamples} samples: a JSON deploy through node B of three new incompressible files, then, once node C serves the deploy's page, each file asked of node C twice over a kept-alive connection (sizes in a rotated order). The first request finds the file missing from C's cache: C downloads it from the bucket into a temp file, syncs it, checks its sha256, renames it into the cache and then answers. The second is served from the thread's memory. Times are the client's, from the request to the last byte (a Node client: reading 5 MB costs it tens of ms). "The bucket's own GET" is an unsigned GET of the same object straight from s3rver, after the two requests. ${f.wrong} answers had other bytes.`,
      '',
    );
    out.push(
      "| File | First request, median (range) | Second request, median (range) | First − second (medians) | The bucket's own GET, median (range) |",
      '|---|--:|--:|--:|--:|',
    );
    for (const row of f.rows)
      out.push(
        `| ${row.label} | ${formatSummary(row.first, msf)} | ${formatSummary(row.second, msf)} | ${msf(row.first.median - row.second.median)} | ${formatSummary(row.bucket, msf)} |`,
      );
    out.push('');
  }
  out.push('### Commands', '', '```');
  out.push(
    `BENCH_DURATION=${cfg.seconds} BENCH_ROUNDS=${cfg.rounds} BENCH_WARMUP=${cfg.warmup} CLUSTER_PROPAGATIONS=${cfg.propagations} CLUSTER_DEPLOY_ROUNDS=${cfg.deployRounds} CLUSTER_BIG_ROUNDS=${cfg.bigRounds} CLUSTER_FIRST_SAMPLES=${cfg.firstSamples} npm run bench:cluster`,
  );
  if (s) for (const byScenario of Object.values(s.results)) for (const r of Object.values(byScenario)) out.push(r.command);
  out.push('```');
  return out.join('\n');
}

// --- Main --------------------------------------------------------------------------------------

async function main() {
  const started = performance.now();
  const loadStart = os.loadavg()[0];
  if (loadStart > 0.5) log(`WARNING load average is ${loadStart.toFixed(2)} before the run: other processes compete for the cores`);
  if (cfg.gens.includes('wrk')) await ensureTools({ wrk: 'wrk' });
  const machine = await machineInfo(root);
  const ctx = await setUp(machine);
  ctx.loadStart = loadStart;
  ctx.pgVersion = readdirSync('/usr/lib/postgresql').sort().pop();
  const parts = {};
  if (cfg.parts.includes('serve')) parts.serve = await measureServing(ctx);
  if (cfg.parts.some((part) => part === 'propagate' || part === 'first')) {
    ctx.nodeB ??= await ctx.startNode('B', ctx.dirs.B, ctx.clusterEnv);
    ctx.nodeC = await ctx.startNode('C', ctx.dirs.C, ctx.clusterEnv);
  }
  if (cfg.parts.includes('propagate')) parts.propagate = await measurePropagation(ctx, [ctx.nodeA, ctx.nodeB, ctx.nodeC]);
  if (cfg.parts.includes('deploy')) parts.deploy = await measureDeploys(ctx);
  if (cfg.parts.includes('first')) parts.first = await measureFirstRequests(ctx, ctx.nodeB, ctx.nodeC);
  for (const node of [ctx.embedded, ctx.nodeA, ctx.nodeB, ctx.nodeC]) node?.client.close();
  writeFileSync(join(work, 'results.json'), JSON.stringify({ machine, cfg, threads: ctx.threads, published: ctx.published, parts }, null, 2));
  publishSection(render(ctx, parts, started), 'cluster');
}

main().then(
  () => stopAll(),
  async (err) => {
    console.error(err);
    await stopAll();
    process.exit(1);
  },
);
