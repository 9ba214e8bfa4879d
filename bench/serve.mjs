// Serving bench: Plinth vs nginx (1 worker and one per core) vs lighttpd vs a bare uWS ceiling,
// same corpus, same run, measured with wrk and autocannon. Writes the serve section of
// bench/RESULTS.md.
//
// What is compared, and how: every server is started once, side by side on its own port (an idle
// server costs next to nothing while another is measured), and stays up for the whole run. After
// one warm-up pass over every cell (discarded), each round measures every server once per
// scenario and generator, one after the other, in an order rotated each round (A,B,C then B,C,A
// …), so minutes of machine drift land on every server alike instead of on whichever ran then.
// Each cell reports the median of its rounds and their range; ratios (Plinth ÷ the better nginx,
// any server ÷ the ceiling) are taken within each round and their median reported (see
// lib/rounds.mjs). The ceiling (bench/ceiling.mjs) answers the same bytes from memory for every
// scenario Plinth answers from memory (the 5 MB and 50 MB files stream, so it sits those out);
// for the rotations it answers its 2 KB page for every path and host. `ceiling-pages` (in
// BENCH_TARGETS, not by default) is the same server answering each page of the 1,000-page rotation
// with its own bytes and headers, found by one Map lookup of the URL (CEILING_PAGES_DIR): the least
// any uWS server does to tell pages apart, the rotation's bound that bench/serve-ab.mjs uses too.
// It runs in the rotation only, and its ratio is reported beside the one-page ceiling's.
//
// Defaults: 5 rounds of 2 s per cell after a 1 s warm-up pass: 37 cells with wrk and 29 with
// autocannon (not on the 5 MB and 50 MB files), so 5 × 66 × 2 s + 66 s ≈ 12 min of load, plus
// about 2 min to build and publish the corpus: about 14 min, as long as the single round of 2 s
// warm-up + 8 s per cell (68 cells) it replaces. Shorter rounds, more of them: a median of 5 and its range say how
// much a figure moves; one long round says nothing about that.
//
// Env: BENCH_DURATION (s per cell and round, default 2; whole seconds, as wrk takes them),
//      BENCH_ROUNDS (5), BENCH_WARMUP (s per cell in the warm-up pass, 1; 0 skips it),
//      BENCH_CONNECTIONS (64), BENCH_TARGETS (plinth,nginx,lighttpd,ceiling; ceiling-pages on request),
//      BENCH_LOADGENS (wrk,autocannon),
//      BENCH_SCENARIOS (page2k,script60k,image200k,file5m,file50m,pages,sites,revalidate,
//      page2kBr,script60kBr: the page and the script asked with `Accept-Encoding: br, gzip`, as
//      browsers send it; Plinth answers its brotli variant, nginx its `gzip_static` file),
//      BENCH_SITES (10000), BENCH_PAGES (1000), PLINTH_THREADS (unset: Plinth's default),
//      BENCH_PLINTH_THREADS (a list such as 1,2,3: one Plinth per count, side by side; the first
//      is the one the goals use), BENCH_NGINX_WORKERS (1,<cores>),
//      BENCH_SERVER_CPUS / BENCH_LOADGEN_CPUS (taskset lists, e.g. 0 and 1: servers on one core,
//      wrk on the other, to simulate a smaller machine), BENCH_NO_WRITE=1 to print without
//      touching RESULTS.md. Every round of every cell is in bench/.work/serve-results.json.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAIN_SITE, makeMainSite, makeSharedSmallFiles, makeSmallSite, pagePath, siteName, writeSite } from './lib/corpus.mjs';
import { loadContentTypes, mapLimit, openPublisher } from './lib/publish.mjs';
import { startNginx, writeNginxConfig } from './lib/nginx.mjs';
import { startLighttpd, writeLighttpdConfig } from './lib/lighttpd.mjs';
import { ensureTools, freePort, httpGet, readMemory, sampleMemory, startChild, stopChild, waitReady } from './lib/proc.mjs';
import { runWrk, shellQuote } from './lib/wrk.mjs';
import { runAutocannon } from './lib/autocannon.mjs';
import { machineInfo, publishSection, renderSection, summarizeCells } from './lib/report.mjs';
import { rotate } from './lib/rounds.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, '..');
const work = join(benchDir, '.work');
const sitesDir = join(work, 'sites');
const dataDir = join(work, 'data');

const env = process.env;
const list = (v, d) =>
  (v ?? d)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const cores = os.availableParallelism();
// Cores the servers may use: all of them, or the BENCH_SERVER_CPUS set.
const serverCores = process.env.BENCH_SERVER_CPUS ? cpuCount(process.env.BENCH_SERVER_CPUS) : cores;
const cfg = {
  seconds: Number(env.BENCH_DURATION ?? 2),
  warmup: Number(env.BENCH_WARMUP ?? 1),
  connections: Number(env.BENCH_CONNECTIONS ?? 64),
  targets: list(env.BENCH_TARGETS, 'plinth,nginx,lighttpd,ceiling'),
  gens: list(env.BENCH_LOADGENS, 'wrk,autocannon'),
  siteCount: Number(env.BENCH_SITES ?? 10000),
  pageCount: Number(env.BENCH_PAGES ?? 1000),
  // Unset: measured as a new user runs it, with the thread count Plinth picks by itself.
  plinthThreads: env.PLINTH_THREADS ? Number(env.PLINTH_THREADS) : undefined,
  plinthThreadList: list(env.BENCH_PLINTH_THREADS, '').map(Number),
  serverCpus: env.BENCH_SERVER_CPUS || undefined,
  loadgenCpus: env.BENCH_LOADGEN_CPUS || undefined,
  nginxWorkers: [...new Set(list(env.BENCH_NGINX_WORKERS, `1,${serverCores}`).map(Number))],
  rounds: Math.max(1, Number(env.BENCH_ROUNDS ?? 5)),
};
const siteDomain = 'sites.localhost';
const mainHost = `${MAIN_SITE}.${siteDomain}`;
// The ceiling's path for the 304 scenario (see ceilingRoutes).
const CEILING_304 = '/not-modified';
const log = (...a) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

// Children still running; stopped by PID on any exit path.
const live = new Set();
const stopAll = async () => {
  for (const c of live) await stopChild(c);
  live.clear();
};
process.on('SIGINT', () => {
  stopAll().finally(() => process.exit(130));
});

async function buildCorpus() {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(sitesDir, { recursive: true });
  const t0 = Date.now();
  const main = makeMainSite(cfg.pageCount);
  writeSite(join(sitesDir, MAIN_SITE), main);
  const types = await loadContentTypes(root);
  // nginx's `gzip_static` serves `<file>.gz` where one exists: the main site's text files get one,
  // gzip level 9 as Plinth's stored gzip variant (src/store/blob-store.ts).
  const gzipped = new Map();
  for (const [path, bytes] of main) if (types.isCompressible(types.typeOf(path))) gzipped.set(`${path}.gz`, gzipSync(bytes, { level: 9 }));
  writeSite(join(sitesDir, MAIN_SITE), gzipped);
  const shared = makeSharedSmallFiles();
  const small = Array.from({ length: cfg.siteCount }, (_, i) => i);
  for (const i of small) writeSite(join(sitesDir, siteName(i)), makeSmallSite(i, shared));
  const writeMs = Date.now() - t0;
  log(`corpus on disk: ${1 + cfg.siteCount} sites in ${writeMs} ms`);

  let publishMs = null;
  if (cfg.targets.includes('plinth')) {
    if (!existsSync(join(root, 'dist/store/index.js'))) throw new Error('dist/store/index.js missing: run `npm run build`, or set BENCH_TARGETS=nginx,ceiling');
    const t1 = Date.now();
    const pub = await openPublisher(root, dataDir, types);
    await pub.publish(MAIN_SITE, main);
    let done = 0;
    await mapLimit(small, 32, async (i) => {
      await pub.publish(siteName(i), makeSmallSite(i, shared));
      if (++done % 2000 === 0) log(`published ${done}/${cfg.siteCount}`);
    });
    await pub.close();
    publishMs = Date.now() - t1;
    log(`published into the store in ${publishMs} ms (content types: ${types.source})`);
  }
  return { main, shared, types, writeMs, publishMs };
}

/** Scenarios; `forTarget` gives target-specific request data (the 304 ETag differs per server). */
function scenarios(corpus) {
  const host = { Host: mainHost };
  const lastPage = cfg.pageCount - 1;
  const lastSite = cfg.siteCount - 1;
  return [
    {
      id: 'page2k',
      title: '2 KB page `/`',
      forTarget: () => ({ path: '/', headers: host }),
      checks: [{ host: mainHost, path: '/', body: corpus.main.get('index.html') }],
    },
    {
      id: 'script60k',
      title: '60 KB script `/app.js`',
      forTarget: () => ({ path: '/app.js', headers: host }),
      checks: [{ host: mainHost, path: '/app.js', body: corpus.main.get('app.js') }],
    },
    {
      id: 'image200k',
      title: '200 KB image `/hero.png`',
      forTarget: () => ({ path: '/hero.png', headers: host }),
      checks: [{ host: mainHost, path: '/hero.png', body: corpus.main.get('hero.png') }],
    },
    ...[
      ['page2kBr', '2 KB page `/`, `Accept-Encoding: br, gzip`', '/', 'index.html'],
      ['script60kBr', '60 KB script `/app.js`, `Accept-Encoding: br, gzip`', '/app.js', 'app.js'],
    ].map(([id, title, path, file]) => ({
      // What browsers send: Plinth answers its brotli variant, nginx the .gz file (gzip_static).
      // lighttpd has no precompressed files configured, and the ceiling sends identity bytes.
      skip: ['lighttpd', 'ceiling'],
      id,
      title,
      compressed: true,
      forTarget: () => ({ path, headers: { ...host, 'Accept-Encoding': 'br, gzip' } }),
      checks: [{ host: mainHost, path, body: corpus.main.get(file), headers: { 'Accept-Encoding': 'br, gzip' } }],
    })),
    {
      // Plinth streams these in slices, so a bare uWS answer from memory is no bound for them: the
      // ceiling sits the two large files out. So does autocannon: one Node thread taking 64
      // bodies of 5 MB at once completes next to none within a 2 s round.
      skip: ['ceiling'],
      gens: ['wrk'],
      id: 'file5m',
      title: '5 MB video `/media/clip.mp4`',
      forTarget: () => ({ path: '/media/clip.mp4', headers: host }),
      checks: [{ host: mainHost, path: '/media/clip.mp4', body: corpus.main.get('media/clip.mp4') }],
    },
    {
      // 64 clients each pulling 50 MB would only measure wrk's 2 s timeout; 4 is a few downloads.
      skip: ['ceiling'],
      gens: ['wrk'],
      id: 'file50m',
      title: '50 MB video `/media/film.mp4` (4 connections)',
      connections: 4,
      forTarget: () => ({ path: '/media/film.mp4', headers: host }),
      checks: [{ host: mainHost, path: '/media/film.mp4', body: corpus.main.get('media/film.mp4') }],
    },
    {
      // The ceiling answers its 2 KB for every path: what uWS and this generator allow a rotation.
      id: 'pages',
      title: `${cfg.pageCount.toLocaleString('en-US')}-page rotation`,
      ceilingAnyBody: true,
      forTarget: () => ({
        path: '/',
        headers: host,
        wrkScript: { file: 'pages.lua', args: [mainHost, String(cfg.pageCount)] },
        requests: () => Array.from({ length: cfg.pageCount }, (_, i) => ({ method: 'GET', path: `/${pagePath(i)}` })),
      }),
      checks: [0, lastPage].map((i) => ({ host: mainHost, path: `/${pagePath(i)}`, body: corpus.main.get(pagePath(i)) })),
    },
    {
      // lighttpd's evhost answers a share of a fast host rotation with 403, so it sits this one out.
      skip: ['lighttpd'],
      id: 'sites',
      title: `many-sites rotation (${cfg.siteCount.toLocaleString('en-US')} hosts, \`/\`)`,
      ceilingAnyBody: true,
      forTarget: () => ({
        path: '/',
        headers: {},
        wrkScript: { file: 'sites.lua', args: [siteDomain, String(cfg.siteCount)] },
        requests: () => Array.from({ length: cfg.siteCount }, (_, i) => ({ method: 'GET', path: '/', headers: { host: `${siteName(i)}.${siteDomain}` } })),
      }),
      checks: [0, lastSite].map((i) => ({ host: `${siteName(i)}.${siteDomain}`, path: '/', body: makeSmallSite(i, corpus.shared).get('index.html') })),
    },
    {
      // The ceiling answers 304 on a path of its own, without reading If-None-Match.
      id: 'revalidate',
      title: '304 revalidation of `/`',
      forTarget: (t) => ({ path: t.kind === 'ceiling' ? CEILING_304 : '/', headers: { ...host, 'If-None-Match': t.etag }, expectStatus: 304 }),
      checks: [{ host: mainHost, path: '/', status: 304, revalidate: true }],
    },
  ];
}

const headerBytes = (res) =>
  `HTTP/1.1 ${res.status} ${res.statusMessage}\r\n`.length + res.rawHeaders.reduce((n, v, i) => n + (i % 2 ? v.length + 2 : v.length + 2), 0) + 2;

/**
 * Checks a server returns the corpus bytes before it is measured; problems become report notes.
 * Records the header names of each checked answer, so the ceiling's can be held against Plinth's.
 */
async function preflight(target, port, scs, notes) {
  const first = await httpGet(port, mainHost, '/');
  target.etag = first.headers.etag;
  target.headerBytes = headerBytes(first);
  target.headerNames = first.rawHeaders.filter((_, i) => i % 2 === 0).join(', ');
  target.checked = {};
  for (const sc of scs) {
    if ((target.kind === 'ceiling' && sc.ceilingAnyBody) || !runsIn(target, sc)) continue;
    for (const c of sc.checks) {
      // A 304 check asks for the scenario's own path (the ceiling's differs).
      const path = c.revalidate ? sc.forTarget(target).path : c.path;
      const res = await httpGet(port, c.host, path, c.revalidate ? { 'If-None-Match': target.etag ?? '' } : (c.headers ?? {}));
      const status = c.status ?? 200;
      // A compressed answer is held against the corpus once decoded; its size on the wire is reported.
      const encoding = res.headers['content-encoding'];
      const body = encoding === 'br' ? brotliDecompressSync(res.body) : encoding === 'gzip' ? gunzipSync(res.body) : res.body;
      if (sc.compressed) (target.wireBytes ??= {})[sc.id] = { bytes: res.body.length, encoding: encoding ?? 'identity' };
      const problem =
        res.status !== status
          ? `status ${res.status}, expected ${status}`
          : c.body && !body.equals(c.body)
            ? `body of ${body.length} bytes differs from the corpus file (${c.body.length})`
            : null;
      if (problem) {
        const msg = `check failed on ${target.label}: GET ${c.host}${path} → ${problem}`;
        log(`WARNING ${msg}`);
        notes.push(msg);
      }
      target.checked[sc.id] ??= res.rawHeaders
        .filter((_, i) => i % 2 === 0)
        .map((h) => h.toLowerCase())
        .filter((h) => !SERVER_OWN_HEADERS.has(h))
        .sort()
        .join(', ');
    }
  }
}

/** Whether a target is measured in a scenario: `ceiling-pages` bounds the page rotation alone. */
const runsIn = (target, sc) => !sc.skip?.includes(target.kind) && (target.kind !== 'ceiling-pages' || sc.id === 'pages');

// Headers every server adds its own way; the rest must match between Plinth and the ceiling.
const SERVER_OWN_HEADERS = new Set(['date', 'server', 'uwebsockets', 'content-length', 'connection', 'last-modified']);

/** A note per scenario where the ceiling's answer carries other headers than Plinth's. */
function compareHeaders(plan, notes) {
  const plinth = plan.find((t) => t.id === 'plinth');
  const ceiling = plan.find((t) => t.kind === 'ceiling');
  if (!plinth?.checked || !ceiling?.checked) return;
  for (const [sc, names] of Object.entries(ceiling.checked)) {
    if (plinth.checked[sc] !== undefined && plinth.checked[sc] !== names) {
      const msg = `headers differ on ${sc}: Plinth sends ${plinth.checked[sc]}; the ceiling ${names}`;
      log(`WARNING ${msg}`);
      notes.push(msg);
    }
  }
}

/** One run of a scenario against a target, `seconds` long; `commands` (if given) collects its command line. */
async function measureCell(target, sc, gen, seconds, commands) {
  const scenario = sc.forTarget(target);
  const { port } = target;
  const connections = sc.connections ?? cfg.connections;
  const r =
    gen === 'wrk'
      ? await runWrk({ port, seconds, connections, scenario, benchDir, cpus: cfg.loadgenCpus })
      : await runAutocannon({ port, seconds, connections, scenario });
  if (!commands) return r;
  // Same command for every server bar the port: list each once, with $PORT.
  const cmd = r.command.replaceAll(`:${port}/`, ':$PORT/');
  if (!commands.includes(cmd)) commands.push(cmd);
  return r;
}

/** The ceiling's exact routes: the scenario files it serves as such, with Plinth's headers for them. */
function ceilingRoutes(types) {
  const file = (name) => join(sitesDir, MAIN_SITE, name);
  // As src/serve: HTML is cached 60 s, the rest 300 s; Vary where compressed variants exist.
  const common = (name) => [
    ['Cache-Control', name.endsWith('.html') ? 'public, max-age=60' : 'public, max-age=300'],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'strict-origin-when-cross-origin'],
    ...(types.isCompressible(types.typeOf(name)) ? [['Vary', 'Accept-Encoding']] : []),
  ];
  const asset = (name) => ({
    path: `/${name}`,
    file: file(name),
    headers: [['Content-Type', types.typeOf(name)], ...common(name), ['Accept-Ranges', 'bytes']],
  });
  return [asset('app.js'), asset('hero.png'), { path: CEILING_304, status: '304 Not Modified', file: file('index.html'), headers: common('index.html') }];
}

/** Starts one server as a child process on a free port; returns the shell form of its command. */
async function startTarget(target, nginxTypes, types) {
  const port = await freePort();
  target.port = port;
  if (target.kind === 'nginx') {
    const conf = writeNginxConfig({ workDir: work, sitesDir, port, workers: target.workers, siteDomain, mainSite: MAIN_SITE, types: nginxTypes });
    target.child = startNginx(conf, work, cfg.serverCpus);
    return `nginx -c ${conf} -p ${work} -e ${join(work, 'nginx-error.log')}`;
  }
  if (target.kind === 'lighttpd') {
    const conf = writeLighttpdConfig({ workDir: work, sitesDir, port, siteDomain, mainSite: MAIN_SITE, types: nginxTypes });
    target.child = startLighttpd(conf, work, cfg.serverCpus);
    return `lighttpd -D -f ${conf}`;
  }
  const [script, tenv, logName] =
    target.kind === 'plinth'
      ? [
          join(root, 'dist/main.js'),
          {
            PLINTH_PORT: String(port),
            PLINTH_LISTEN_HOST: '127.0.0.1',
            PLINTH_DATA_DIR: dataDir,
            ...(target.threads ? { PLINTH_THREADS: String(target.threads) } : {}),
            PLINTH_LOG_LEVEL: 'warn',
          },
          `${target.id}.log`,
        ]
      : [
          join(benchDir, 'ceiling.mjs'),
          {
            CEILING_PORT: String(port),
            CEILING_BODY: join(sitesDir, MAIN_SITE, 'index.html'),
            ...(target.kind === 'ceiling-pages' ? { CEILING_PAGES_DIR: join(sitesDir, MAIN_SITE) } : { CEILING_ROUTES: JSON.stringify(ceilingRoutes(types)) }),
          },
          `${target.id}.log`,
        ];
  target.child = startChild(process.execPath, [script], { env: tenv, cwd: root, logPath: join(work, logName), cpus: cfg.serverCpus });
  return `${Object.entries(tenv)
    .map(([k, v]) => `${k}=${shellQuote(v)}`)
    .join(' ')} node ${script.slice(root.length + 1)}`;
}

/** The HTTP thread count Plinth picks with no PLINTH_THREADS, from its own config code. */
async function defaultThreads(cpus) {
  const { defaultHttpThreads, loadConfig } = await import(new URL('../dist/config.js', import.meta.url).href);
  // Pinned with taskset, Plinth sees only those cores (libuv reads the affinity mask).
  return cpus ? defaultHttpThreads(cpuCount(cpus)) : loadConfig({}).threads;
}

/** Cores in a taskset list such as `0`, `0,1` or `0-3`. */
function cpuCount(cpus) {
  return cpus.split(',').reduce((n, part) => {
    const [a, b] = part.split('-').map(Number);
    return n + (b === undefined ? 1 : b - a + 1);
  }, 0);
}

async function main() {
  const started = Date.now();
  // Other work on these few cores skews every cell; record it so a noisy run is visible.
  const loadStart = os.loadavg()[0];
  if (loadStart > 0.5) log(`WARNING load average is ${loadStart.toFixed(2)} before the run: other processes compete for the cores`);
  // Only the tools of the servers and generators this run uses: BENCH_TARGETS=plinth,nginx,ceiling
  // runs where lighttpd is not installed.
  await ensureTools(
    Object.fromEntries(['nginx', 'lighttpd', 'wrk'].filter((tool) => cfg.targets.includes(tool) || cfg.gens.includes(tool)).map((tool) => [tool, tool])),
  );
  const machine = await machineInfo(root);
  log(
    `targets ${cfg.targets.join(',')}; generators ${cfg.gens.join(',')}; a ${cfg.warmup}s warm-up pass, then ${cfg.rounds} round(s) of ${cfg.seconds}s per cell × ${cfg.connections} connections`,
  );
  if (cfg.targets.includes('plinth') && !existsSync(join(root, 'dist/main.js')))
    throw new Error('dist/main.js missing: run `npm run build`, or set BENCH_TARGETS=nginx,ceiling');
  const corpus = await buildCorpus();
  const scs = scenarios(corpus).filter((sc) => !env.BENCH_SCENARIOS || list(env.BENCH_SCENARIOS, '').includes(sc.id));
  const notes = [];
  const commands = [
    `BENCH_DURATION=${cfg.seconds} BENCH_WARMUP=${cfg.warmup} BENCH_ROUNDS=${cfg.rounds} BENCH_TARGETS=${cfg.targets.join(',')} BENCH_LOADGENS=${cfg.gens.join(',')} npm run bench:serve`,
  ];
  const servers = [];

  const nginxTypes = {};
  for (const ext of ['html', 'css', 'js', 'svg', 'png', 'mp4']) nginxTypes[ext] = corpus.types.typeOf(`x.${ext}`);

  const plan = [];
  const threads = cfg.plinthThreads ?? (await defaultThreads(cfg.serverCpus));
  const threadLabel = `${threads} thread${threads > 1 ? 's' : ''}`;
  if (cfg.targets.includes('plinth')) {
    if (cfg.plinthThreadList.length > 0) {
      cfg.plinthThreadList.forEach((n, i) =>
        plan.push({
          id: i === 0 ? 'plinth' : `plinth-${n}`,
          label: `Plinth, ${n} thread${n > 1 ? 's' : ''}${n === threads ? ' (default)' : ''}`,
          kind: 'plinth',
          threads: n,
        }),
      );
    } else {
      plan.push({
        id: 'plinth',
        label: cfg.plinthThreads ? `Plinth, ${threadLabel}` : `Plinth, default (${threadLabel})`,
        kind: 'plinth',
        threads: cfg.plinthThreads,
      });
    }
  }
  if (cfg.targets.includes('nginx'))
    for (const w of cfg.nginxWorkers) plan.push({ id: `nginx-${w}`, label: `nginx, ${w} worker${w > 1 ? 's' : ''}`, kind: 'nginx', workers: w });
  if (cfg.targets.includes('lighttpd')) plan.push({ id: 'lighttpd', label: 'lighttpd', kind: 'lighttpd' });
  if (cfg.targets.includes('ceiling')) plan.push({ id: 'ceiling', label: 'ceiling (uWS, 1 thread)', kind: 'ceiling' });
  if (cfg.targets.includes('ceiling-pages')) plan.push({ id: 'ceiling-pages', label: 'ceiling-pages (each page its own)', kind: 'ceiling-pages' });
  const labels = Object.fromEntries(plan.map((t) => [t.id, t.label]));

  // All servers stay up for the whole run (idle ones cost nothing) and every round visits each
  // of them in turn, so noise from anything else on the machine hits them alike.
  let sampler = null;
  let sampled = null;
  let startRss = NaN;
  const samples = {};
  const cellsOf = (sc) => plan.filter((t) => runsIn(t, sc));
  const gensOf = (sc) => cfg.gens.filter((g) => !sc.gens || sc.gens.includes(g));
  try {
    for (const target of plan) {
      servers.push(await startTarget(target, nginxTypes, corpus.types));
      live.add(target.child);
      await waitReady(target.child, target.port, mainHost, '/', 30000);
      log(`${target.label} ready on 127.0.0.1:${target.port} (pid ${target.child.pid})`);
      await preflight(target, target.port, scs, notes);
      // Memory is sampled for the Plinth the goals use (the first, when several run).
      if (target.id === 'plinth') {
        startRss = readMemory(target.child.pid).rss;
        sampler = sampleMemory(target.child.pid);
      }
    }
    compareHeaders(plan, notes);
    // The warm-up pass: every cell once (JIT, caches, connections), discarded.
    if (cfg.warmup > 0) {
      log(`warm-up pass, ${cfg.warmup}s per cell`);
      for (const sc of scs) for (const gen of gensOf(sc)) for (const target of cellsOf(sc)) await measureCell(target, sc, gen, cfg.warmup);
    }
    for (let round = 0; round < cfg.rounds; round++) {
      log(`round ${round + 1}/${cfg.rounds}`);
      for (const sc of scs) {
        for (const gen of gensOf(sc)) {
          // Rotated each round so no server always goes first, or always right after the same one.
          for (const target of rotate(cellsOf(sc), round)) {
            const r = await measureCell(target, sc, gen, cfg.seconds, commands);
            (((samples[gen] ??= {})[sc.id] ??= {})[target.id] ??= [])[round] = r;
            log(
              `${gen.padEnd(10)} ${target.label.padEnd(23)} ${sc.id.padEnd(10)} ${Math.round(r.rps).toString().padStart(7)} req/s ${r.mbps.toFixed(1).padStart(7)} MB/s  p50 ${+r.p50.toFixed(3)} ms  p99 ${+r.p99.toFixed(3)} ms  err ${r.errors}/${r.badStatus}`,
            );
          }
        }
      }
    }
  } finally {
    if (sampler) sampled = sampler.stop();
    await stopAll();
  }
  // Tables follow the plan's order of servers, whatever order a round measured them in.
  for (const bySc of Object.values(samples)) {
    for (const [id, byT] of Object.entries(bySc)) bySc[id] = Object.fromEntries(plan.filter((t) => byT[t.id]).map((t) => [t.id, byT[t.id]]));
  }
  const cells = summarizeCells(samples);
  const memory = sampled ? { ...sampled, startRss, threads } : null;

  const hdr = plan.map((t) => `${t.label} ${t.headerBytes} B (${t.headerNames})`).join('; ');
  for (const sc of scs.filter((sc) => sc.compressed)) {
    const sizes = plan
      .filter((t) => t.wireBytes?.[sc.id])
      .map((t) => `${t.label} ${t.wireBytes[sc.id].bytes.toLocaleString('en-US')} B (${t.wireBytes[sc.id].encoding})`);
    notes.push(
      `Body bytes per answer, ${sc.title} (identity ${corpus.main.get(sc.id === 'page2kBr' ? 'index.html' : 'app.js').length.toLocaleString('en-US')} B): ${sizes.join('; ')}.`,
    );
  }
  const setup = [
    `Corpus (bench/.work, rebuilt each run): site \`${MAIN_SITE}\` with a 2,048 B \`index.html\`, 60 KB \`app.js\`, 200 KB \`hero.png\` and ${cfg.pageCount.toLocaleString('en-US')} pages of 1–3 KB; plus ${cfg.siteCount.toLocaleString('en-US')} sites \`s00000\`… of 5 files (index.html with a unique line, about.html, style.css, app.js, logo.svg). Written in ${(corpus.writeMs / 1000).toFixed(1)} s${corpus.publishMs !== null ? `; published into Plinth's store directly (plan \`builder\`, no badge) in ${(corpus.publishMs / 1000).toFixed(1)} s` : ''}. Content types: ${corpus.types.source}.`,
    `Servers: Plinth with ${cfg.plinthThreads ? `PLINTH_THREADS=${cfg.plinthThreads}` : `its default settings (${threadLabel} on ${serverCores} core${serverCores > 1 ? 's' : ''})`}; lighttpd ${machine.lighttpd} (one process, sendfile, same headers and host routing); nginx ${cfg.nginxWorkers.map((w) => `${w} worker${w > 1 ? 's' : ''}`).join(' and ')} (sendfile, tcp_nopush, open_file_cache max=20000 inactive=1h, access_log off, keepalive_requests 100000, reuseport), each round compared against the better of the two in that round; the ceiling is \`bench/ceiling.mjs\`, one uWS thread answering from memory with all headers in one prebuilt block and bodies over 64 KB sent with \`tryEnd\` (as Plinth sends them): the same 2 KB page, 60 KB script and 200 KB image, an unconditional 304 on a path of its own, and the 2 KB page for every other path and host, so it also bounds the two rotations. It sits out the 5 MB and 50 MB files, which Plinth streams in slices.${plan.some((t) => t.kind === 'ceiling-pages') ? " `ceiling-pages`, the same server with each of the rotation's pages its own bytes and headers, found by one Map lookup of the URL, runs in the page rotation only." : ''}`,
    'Fair responses: nginx gets the same Content-Type strings, Cache-Control, X-Content-Type-Options, Referrer-Policy and Vary as Plinth; the ceiling sends the headers Plinth sends for the same file (checked before measuring, by name). Only the two scenarios marked `Accept-Encoding: br, gzip` carry that header (Plinth answers its stored brotli variant, nginx its `.gz` file through `gzip_static on`, each decoded and checked against the corpus before measuring); every other request has none, so every server sends identical identity bytes (checked before measuring).',
    `Response headers for \`/\`: ${hdr}.`,
    `Load: ${cfg.connections} keep-alive connections to 127.0.0.1 with the site's Host header. All servers run side by side for the whole run. ${cfg.warmup > 0 ? `A warm-up pass of ${cfg.warmup} s per cell (discarded), then` : 'No warm-up pass;'} ${cfg.rounds} round${cfg.rounds > 1 ? 's' : ''}: each round measures every server once per scenario and generator for ${cfg.seconds} s, one after the other, in an order rotated each round (A, B, C, then B, C, A …). Each cell shows the median of its rounds and their range; ratios are taken within a round and their median shown, never a ratio of medians. wrk: 1 thread, rotations via bench/wrk/*.lua (prebuilt requests). autocannon ${machine.autocannon}: programmatic, one thread, rotations as \`requests\` arrays, not on the 5 MB and 50 MB files (one Node thread completes next to none of them in a ${cfg.seconds} s round); its latency histogram has 1 ms resolution. With 64 connections on ${cores} shared cores, p99 mostly measures scheduling (server threads and the generator take turns), so it swings between runs.`,
    `${cfg.serverCpus ? `Servers pinned to CPU ${cfg.serverCpus} and the load generator to CPU ${cfg.loadgenCpus ?? 'any'} (taskset).` : `Load generator and servers share the same ${cores} cores.`} Total run time ${((Date.now() - started) / 60000).toFixed(1)} min. 1-minute load average: ${loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end (the bench alone keeps 2–3 threads busy).`,
  ];
  if (loadStart > 0.5)
    notes.push(
      `The machine was busy before the run (load average ${loadStart.toFixed(2)}): other processes competed for the cores, so these numbers are noisy. Re-run on an idle machine.`,
    );
  const allCommands = [
    commands[0],
    '',
    '# servers (ports are picked free each run; $PORT below)',
    ...servers,
    '',
    '# load, per server (autocannon runs programmatically; shown as the equivalent CLI)',
    ...commands.slice(1),
  ];
  const section = renderSection({ machine, setup, cells, scenarios: scs, labels, gens: cfg.gens, memory, commands: allCommands, notes });
  // Raw numbers (every round) for anyone who wants more than the tables.
  writeFileSync(join(work, 'serve-results.json'), JSON.stringify({ machine, cfg, labels, samples, memory }, null, 2));
  publishSection(section, 'serve');
}

main().then(
  () => stopAll(),
  async (err) => {
    console.error(err);
    await stopAll();
    process.exit(1);
  },
);
