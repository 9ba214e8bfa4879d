// Serving bench: Plinth vs nginx (1 worker and one per core) vs a bare uWS ceiling, same corpus,
// same run, measured with wrk and autocannon. Writes the serve section of bench/RESULTS.md.
//
// Env: BENCH_DURATION (s, default 8), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS (64),
//      BENCH_TARGETS (plinth,nginx,ceiling), BENCH_LOADGENS (wrk,autocannon),
//      BENCH_SCENARIOS (page2k,script60k,image200k,file5m,file50m,pages,sites,revalidate),
//      BENCH_SITES (10000), BENCH_PAGES (1000), PLINTH_THREADS (unset: Plinth's default),
//      BENCH_PLINTH_THREADS (a list such as 1,2,3: one Plinth per count, side by side; the first
//      is the one the ratios use), BENCH_NGINX_WORKERS (1,<cores>),
//      BENCH_SERVER_CPUS / BENCH_LOADGEN_CPUS (taskset lists, e.g. 0 and 1: servers on one core,
//      wrk on the other, to simulate a smaller machine),
//      BENCH_ROUNDS (1; >1 reports the median round per cell), BENCH_NO_WRITE=1 to print without
//      touching RESULTS.md.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAIN_SITE, makeMainSite, makeSharedSmallFiles, makeSmallSite, pagePath, siteName, writeSite } from './lib/corpus.mjs';
import { loadContentTypes, mapLimit, openPublisher } from './lib/publish.mjs';
import { startNginx, writeNginxConfig } from './lib/nginx.mjs';
import { startLighttpd, writeLighttpdConfig } from './lib/lighttpd.mjs';
import { ensureTools, freePort, httpGet, readMemory, sampleMemory, startChild, stopChild, waitReady } from './lib/proc.mjs';
import { runWrk } from './lib/wrk.mjs';
import { runAutocannon } from './lib/autocannon.mjs';
import { machineInfo, renderSection, writeResultsFile } from './lib/report.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, '..');
const work = join(benchDir, '.work');
const sitesDir = join(work, 'sites');
const dataDir = join(work, 'data');

const env = process.env;
const list = (v, d) => (v ?? d).split(',').map((s) => s.trim()).filter(Boolean);
const cores = os.availableParallelism();
// Cores the servers may use: all of them, or the BENCH_SERVER_CPUS set.
const serverCores = process.env.BENCH_SERVER_CPUS ? cpuCount(process.env.BENCH_SERVER_CPUS) : cores;
const cfg = {
  seconds: Number(env.BENCH_DURATION ?? 8),
  warmup: Number(env.BENCH_WARMUP ?? 2),
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
  rounds: Math.max(1, Number(env.BENCH_ROUNDS ?? 1)),
};
const siteDomain = 'sites.localhost';
const mainHost = `${MAIN_SITE}.${siteDomain}`;
const log = (...a) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

// Children still running; stopped by PID on any exit path.
const live = new Set();
const stopAll = async () => { for (const c of live) await stopChild(c); live.clear(); };
process.on('SIGINT', () => { stopAll().finally(() => process.exit(130)); });

async function buildCorpus() {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(sitesDir, { recursive: true });
  const t0 = Date.now();
  const main = makeMainSite(cfg.pageCount);
  writeSite(join(sitesDir, MAIN_SITE), main);
  const shared = makeSharedSmallFiles();
  const small = Array.from({ length: cfg.siteCount }, (_, i) => i);
  for (const i of small) writeSite(join(sitesDir, siteName(i)), makeSmallSite(i, shared));
  const writeMs = Date.now() - t0;
  log(`corpus on disk: ${1 + cfg.siteCount} sites in ${writeMs} ms`);

  const types = await loadContentTypes(root);
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
      id: 'page2k', title: '2 KB page `/`', withCeiling: true,
      forTarget: () => ({ path: '/', headers: host }),
      checks: [{ host: mainHost, path: '/', body: corpus.main.get('index.html') }],
    },
    {
      id: 'script60k', title: '60 KB script `/app.js`',
      forTarget: () => ({ path: '/app.js', headers: host }),
      checks: [{ host: mainHost, path: '/app.js', body: corpus.main.get('app.js') }],
    },
    {
      id: 'image200k', title: '200 KB image `/hero.png`',
      forTarget: () => ({ path: '/hero.png', headers: host }),
      checks: [{ host: mainHost, path: '/hero.png', body: corpus.main.get('hero.png') }],
    },
    {
      id: 'file5m', title: '5 MB video `/media/clip.mp4`',
      forTarget: () => ({ path: '/media/clip.mp4', headers: host }),
      checks: [{ host: mainHost, path: '/media/clip.mp4', body: corpus.main.get('media/clip.mp4') }],
    },
    {
      // 64 clients each pulling 50 MB would only measure wrk's 2 s timeout; 4 is a few downloads.
      id: 'file50m', title: '50 MB video `/media/film.mp4` (4 connections)', connections: 4,
      forTarget: () => ({ path: '/media/film.mp4', headers: host }),
      checks: [{ host: mainHost, path: '/media/film.mp4', body: corpus.main.get('media/film.mp4') }],
    },
    {
      // The ceiling answers its 2 KB for every path: what uWS and this generator allow a rotation.
      id: 'pages', title: `${cfg.pageCount.toLocaleString('en-US')}-page rotation`, withCeiling: true, ceilingAnyBody: true,
      forTarget: () => ({
        path: '/', headers: host,
        wrkScript: { file: 'pages.lua', args: [mainHost, String(cfg.pageCount)] },
        requests: () => Array.from({ length: cfg.pageCount }, (_, i) => ({ method: 'GET', path: `/${pagePath(i)}` })),
      }),
      checks: [0, lastPage].map((i) => ({ host: mainHost, path: `/${pagePath(i)}`, body: corpus.main.get(pagePath(i)) })),
    },
    {
      // lighttpd's evhost answers a share of a fast host rotation with 403, so it sits this one out.
      skip: ['lighttpd'],
      id: 'sites', title: `many-sites rotation (${cfg.siteCount.toLocaleString('en-US')} hosts, \`/\`)`, withCeiling: true, ceilingAnyBody: true,
      forTarget: () => ({
        path: '/', headers: {},
        wrkScript: { file: 'sites.lua', args: [siteDomain, String(cfg.siteCount)] },
        requests: () => Array.from({ length: cfg.siteCount }, (_, i) => ({ method: 'GET', path: '/', headers: { host: `${siteName(i)}.${siteDomain}` } })),
      }),
      checks: [0, lastSite].map((i) => ({ host: `${siteName(i)}.${siteDomain}`, path: '/', body: makeSmallSite(i, corpus.shared).get('index.html') })),
    },
    {
      id: 'revalidate', title: '304 revalidation of `/`',
      forTarget: (t) => ({ path: '/', headers: { ...host, 'If-None-Match': t.etag }, expectStatus: 304 }),
      checks: [{ host: mainHost, path: '/', status: 304, revalidate: true }],
    },
  ];
}

const headerBytes = (res) => `HTTP/1.1 ${res.status} ${res.statusMessage}\r\n`.length
  + res.rawHeaders.reduce((n, v, i) => n + (i % 2 ? v.length + 2 : v.length + 2), 0) + 2;

/** Checks a server returns the corpus bytes before it is measured; problems become report notes. */
async function preflight(target, port, scs, notes) {
  const first = await httpGet(port, mainHost, '/');
  target.etag = first.headers.etag;
  target.headerBytes = headerBytes(first);
  target.headerNames = first.rawHeaders.filter((_, i) => i % 2 === 0).join(', ');
  for (const sc of scs) {
    if ((target.id === 'ceiling' && (!sc.withCeiling || sc.ceilingAnyBody)) || sc.skip?.includes(target.kind)) continue;
    for (const c of sc.checks) {
      const res = await httpGet(port, c.host, c.path, c.revalidate ? { 'If-None-Match': target.etag ?? '' } : {});
      const status = c.status ?? 200;
      const problem = res.status !== status ? `status ${res.status}, expected ${status}`
        : c.body && !res.body.equals(c.body) ? `body of ${res.body.length} bytes differs from the corpus file (${c.body.length})` : null;
      if (problem) {
        const msg = `check failed on ${target.label}: GET ${c.host}${c.path} → ${problem}`;
        log(`WARNING ${msg}`);
        notes.push(msg);
      }
    }
  }
}

/** One warm-up (discarded) then one measured run of a scenario against a target. */
async function measureCell(target, sc, gen, commands) {
  const scenario = sc.forTarget(target);
  const { port } = target;
  const run = gen === 'wrk'
    ? (seconds) => runWrk({ port, seconds, connections: sc.connections ?? cfg.connections, scenario, benchDir, cpus: cfg.loadgenCpus })
    : (seconds) => runAutocannon({ port, seconds, connections: sc.connections ?? cfg.connections, scenario });
  if (cfg.warmup > 0) await run(cfg.warmup);
  const r = await run(cfg.seconds);
  // Same command for every server bar the port: list each once, with $PORT.
  const cmd = r.command.replaceAll(`:${port}/`, ':$PORT/');
  if (!commands.includes(cmd)) commands.push(cmd);
  log(`${gen.padEnd(10)} ${target.label.padEnd(23)} ${sc.id.padEnd(10)} ${Math.round(r.rps).toString().padStart(7)} req/s ${r.mbps.toFixed(1).padStart(7)} MB/s  p50 ${+r.p50.toFixed(3)} ms  p99 ${+r.p99.toFixed(3)} ms  err ${r.errors}/${r.badStatus}`);
  return r;
}

/** Starts one server as a child process on a free port; returns the shell form of its command. */
async function startTarget(target, nginxTypes) {
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
  const [script, tenv, logName] = target.kind === 'plinth'
    ? [join(root, 'dist/main.js'), { PLINTH_PORT: String(port), PLINTH_LISTEN_HOST: '127.0.0.1', PLINTH_DATA_DIR: dataDir, ...(target.threads ? { PLINTH_THREADS: String(target.threads) } : {}), PLINTH_LOG_LEVEL: 'warn' }, `${target.id}.log`]
    : [join(benchDir, 'ceiling.mjs'), { CEILING_PORT: String(port), CEILING_BODY: join(sitesDir, MAIN_SITE, 'index.html') }, 'ceiling.log'];
  target.child = startChild(process.execPath, [script], { env: tenv, cwd: root, logPath: join(work, logName), cpus: cfg.serverCpus });
  return `${Object.entries(tenv).map(([k, v]) => `${k}=${v}`).join(' ')} node ${script.slice(root.length + 1)}`;
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

const median = (runs) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor((runs.length - 1) / 2)];

async function main() {
  const started = Date.now();
  // Other work on these few cores skews every cell; record it so a noisy run is visible.
  const loadStart = os.loadavg()[0];
  if (loadStart > 0.5) log(`WARNING load average is ${loadStart.toFixed(2)} before the run: other processes compete for the cores`);
  await ensureTools();
  const machine = await machineInfo(root);
  log(`targets ${cfg.targets.join(',')}; generators ${cfg.gens.join(',')}; ${cfg.rounds} round(s) of ${cfg.seconds}s (+${cfg.warmup}s warm-up) × ${cfg.connections} connections`);
  if (cfg.targets.includes('plinth') && !existsSync(join(root, 'dist/main.js'))) throw new Error('dist/main.js missing: run `npm run build`, or set BENCH_TARGETS=nginx,ceiling');
  const corpus = await buildCorpus();
  const scs = scenarios(corpus).filter((sc) => !env.BENCH_SCENARIOS || list(env.BENCH_SCENARIOS, '').includes(sc.id));
  const notes = [];
  const commands = [`BENCH_DURATION=${cfg.seconds} BENCH_WARMUP=${cfg.warmup} BENCH_ROUNDS=${cfg.rounds} BENCH_TARGETS=${cfg.targets.join(',')} BENCH_LOADGENS=${cfg.gens.join(',')} npm run bench:serve`];
  const servers = [];

  const nginxTypes = {};
  for (const ext of ['html', 'css', 'js', 'svg', 'png', 'mp4']) nginxTypes[ext] = corpus.types.typeOf(`x.${ext}`);

  const plan = [];
  const threads = cfg.plinthThreads ?? (await defaultThreads(cfg.serverCpus));
  const threadLabel = `${threads} thread${threads > 1 ? 's' : ''}`;
  if (cfg.targets.includes('plinth')) {
    if (cfg.plinthThreadList.length > 0) {
      cfg.plinthThreadList.forEach((n, i) => plan.push({ id: i === 0 ? 'plinth' : `plinth-${n}`, label: `Plinth, ${n} thread${n > 1 ? 's' : ''}${n === threads ? ' (default)' : ''}`, kind: 'plinth', threads: n }));
    } else {
      plan.push({ id: 'plinth', label: cfg.plinthThreads ? `Plinth, ${threadLabel}` : `Plinth, default (${threadLabel})`, kind: 'plinth', threads: cfg.plinthThreads });
    }
  }
  if (cfg.targets.includes('nginx')) for (const w of cfg.nginxWorkers) plan.push({ id: `nginx-${w}`, label: `nginx, ${w} worker${w > 1 ? 's' : ''}`, kind: 'nginx', workers: w });
  if (cfg.targets.includes('lighttpd')) plan.push({ id: 'lighttpd', label: 'lighttpd', kind: 'lighttpd' });
  if (cfg.targets.includes('ceiling')) plan.push({ id: 'ceiling', label: 'ceiling (uWS, 1 thread)', kind: 'ceiling' });
  const labels = Object.fromEntries(plan.map((t) => [t.id, t.label]));

  // All servers stay up for the whole run (idle ones cost nothing) so each scenario measures them
  // back to back: noise from anything else on the machine then hits them alike, not one server.
  let sampler = null;
  let sampled = null;
  let startRss = NaN;
  const samples = {};
  try {
    for (const target of plan) {
      servers.push(await startTarget(target, nginxTypes));
      live.add(target.child);
      await waitReady(target.child, target.port, mainHost, '/', 30000);
      log(`${target.label} ready on 127.0.0.1:${target.port} (pid ${target.child.pid})`);
      await preflight(target, target.port, scs, notes);
      // Memory is sampled for the Plinth the ratios use (the first, when several run).
      if (target.id === 'plinth') {
        startRss = readMemory(target.child.pid).rss;
        sampler = sampleMemory(target.child.pid);
      }
    }
    for (let round = 0; round < cfg.rounds; round++) {
      if (cfg.rounds > 1) log(`round ${round + 1}/${cfg.rounds}`);
      for (const sc of scs) {
        const targets = plan.filter((t) => (t.kind !== 'ceiling' || sc.withCeiling) && !sc.skip?.includes(t.kind));
        // Rotate the order each round so no server always goes first (or right after a heavy one).
        const ordered = targets.map((_, i) => targets[(i + round) % targets.length]);
        for (const gen of cfg.gens) {
          for (const target of ordered) {
            const r = await measureCell(target, sc, gen, commands);
            ((((samples[gen] ??= {})[sc.id] ??= {})[target.id]) ??= []).push(r);
          }
        }
      }
    }
  } finally {
    if (sampler) sampled = sampler.stop();
    await stopAll();
  }
  // Median round per cell (by req/s); with one round it is that round.
  const results = {};
  for (const [gen, bySc] of Object.entries(samples)) {
    for (const [id, byT] of Object.entries(bySc)) {
      for (const t of plan) if (byT[t.id]) ((results[gen] ??= {})[id] ??= {})[t.id] = median(byT[t.id]);
    }
  }
  const memory = sampled ? { ...sampled, startRss, threads } : null;

  const hdr = plan.map((t) => `${t.label} ${t.headerBytes} B (${t.headerNames})`).join('; ');
  const setup = [
    `Corpus (bench/.work, rebuilt each run): site \`${MAIN_SITE}\` with a 2,048 B \`index.html\`, 60 KB \`app.js\`, 200 KB \`hero.png\` and ${cfg.pageCount.toLocaleString('en-US')} pages of 1–3 KB; plus ${cfg.siteCount.toLocaleString('en-US')} sites \`s00000\`… of 5 files (index.html with a unique line, about.html, style.css, app.js, logo.svg). Written in ${(corpus.writeMs / 1000).toFixed(1)} s${corpus.publishMs !== null ? `; published into Plinth's store directly (plan \`builder\`, no badge) in ${(corpus.publishMs / 1000).toFixed(1)} s` : ''}. Content types: ${corpus.types.source}.`,
    `Servers: Plinth with ${cfg.plinthThreads ? `PLINTH_THREADS=${cfg.plinthThreads}` : `its default settings (${threadLabel} on ${serverCores} core${serverCores > 1 ? 's' : ''})`}; lighttpd ${machine.lighttpd} (one process, sendfile, same headers and host routing); nginx ${cfg.nginxWorkers.map((w) => `${w} worker${w > 1 ? 's' : ''}`).join(' and ')} (sendfile, tcp_nopush, open_file_cache max=20000, access_log off, keepalive_requests 100000, reuseport), each scenario compared against the better of the two; the ceiling is \`bench/ceiling.mjs\`, one uWS thread answering the same 2 KB bytes from memory (for every path and host, so it also bounds the two rotations).`,
    'Fair responses: nginx gets the same Content-Type strings, Cache-Control, X-Content-Type-Options, Referrer-Policy and Vary as Plinth; the ceiling sends the headers Plinth sends for an HTML file. No request carries Accept-Encoding, so every server sends identical identity bytes (checked before measuring).',
    `Response headers for \`/\`: ${hdr}.`,
    `Load: ${cfg.connections} keep-alive connections, ${cfg.warmup} s warm-up (discarded) then ${cfg.seconds} s measured per cell${cfg.rounds > 1 ? `, median of ${cfg.rounds} rounds` : ''}; all servers run side by side and each scenario measures them back to back; to 127.0.0.1 with the site's Host header. wrk: 1 thread, rotations via bench/wrk/*.lua (prebuilt requests). autocannon ${machine.autocannon}: programmatic, one thread, rotations as \`requests\` arrays; its latency histogram has 1 ms resolution. With 64 connections on ${cores} shared cores, p99 mostly measures scheduling (server threads and the generator take turns), so it swings between runs.`,
    `${cfg.serverCpus ? `Servers pinned to CPU ${cfg.serverCpus} and the load generator to CPU ${cfg.loadgenCpus ?? 'any'} (taskset).` : `Load generator and servers share the same ${cores} cores.`} Total run time ${((Date.now() - started) / 60000).toFixed(1)} min. 1-minute load average: ${loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end (the bench alone keeps 2–3 threads busy).`,
  ];
  if (loadStart > 0.5) notes.push(`The machine was busy before the run (load average ${loadStart.toFixed(2)}): other processes competed for the cores, so these numbers are noisy. Re-run on an idle machine.`);
  const allCommands = [commands[0], '', '# servers (ports are picked free each run; $PORT below)', ...servers, '', '# load, per server (autocannon runs programmatically; shown as the equivalent CLI)', ...commands.slice(1)];
  const section = renderSection({ machine, setup, results, scenarios: scs, labels, gens: cfg.gens, memory, commands: allCommands, notes });
  console.log(`\n${section}\n`);
  // Raw numbers (every round) for anyone who wants more than the tables.
  writeFileSync(join(work, 'serve-results.json'), JSON.stringify({ machine, cfg, samples, memory }, null, 2));
  if (env.BENCH_NO_WRITE !== '1') {
    writeResultsFile(join(benchDir, 'RESULTS.md'), section);
    log('wrote bench/RESULTS.md (serve section)');
  }
}

main().then(
  () => stopAll(),
  async (err) => {
    console.error(err);
    await stopAll();
    process.exit(1);
  },
);
