// How Plinth's start-up and memory grow with the number of published sites (issue 11). For each
// count (0, 10,000 and 100,000 by default; SCALE_COUNTS=1000,10000 for a quick run) a fresh data
// directory is filled through the store (as an operator's import would), the real server is started
// on it with its default settings, and every site's index page is visited twice over loopback
// (cold, then warm), then 100,000 random long paths are asked for (SCALE_PROBES), each answer
// checked. Writes bench/results/scale.json and the scale section of
// bench/RESULTS.md (BENCH_NO_WRITE=1 skips both). Usage: npm run bench:scale
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentTypeFor } from '../dist/content-types.js';
import { openStore } from '../dist/store/index.js';
import { machineInfo, writeResultsFile } from './lib/report.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(root, 'dist', 'main.js');
const COUNTS = (process.env.SCALE_COUNTS ?? '0,10000,100000').split(',').map((s) => Number(s.trim()));
if (COUNTS.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`SCALE_COUNTS must be whole numbers (got "${process.env.SCALE_COUNTS}")`);
// Sites published per step: their blobs, one filesystem sync, then their commits all in flight
// (lmdb-js folds concurrent commits into few write transactions). Bounds the bench's own memory.
const BATCH = Number(process.env.SCALE_BATCH ?? 500);
// Requests in flight during the visits, over as many keep-alive connections.
const CONCURRENCY = Number(process.env.SCALE_CONCURRENCY ?? 32);
const PROBES = Number(process.env.SCALE_PROBES ?? 100_000);
// The default site domain (PLINTH_SITE_DOMAIN, src/config.ts).
const SITE_DOMAIN = 'sites.localhost';
const SEGMENTS = 10;
const MiB = 1024 * 1024;
const log = (msg) => process.stdout.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---- content: three small files per site, only index.html unique to the site ------------------
const filler = 'Plinth publishes a static website from an uploaded folder and serves it at its own address. ';
const styles = Array.from({ length: 20 }, (_, v) =>
  Buffer.from(`/* theme ${v} */\n${Array.from({ length: 24 }, (_, k) => `.c${v}-${k} { margin: ${k}px; padding: ${v}px; color: #${(v * 4099 + k * 131).toString(16).padStart(6, '0').slice(0, 6)}; }`).join('\n')}\n`),
);
const abouts = Array.from({ length: 100 }, (_, v) =>
  Buffer.from(`<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>About ${v}</title><link rel="stylesheet" href="/style.css"></head>\n<body><h1>About us (${v})</h1>\n<p>${filler.repeat(14)}</p>\n</body></html>\n`),
);
const siteName = (i) => `scale-${i}`;
const indexPage = (i) =>
  Buffer.from(`<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${siteName(i)}</title><link rel="stylesheet" href="/style.css"></head>\n<body><h1>Welcome to ${siteName(i)}</h1>\n<p>${filler.repeat(20)}</p>\n<p>Site number ${i}. <a href="/about">About</a></p>\n</body></html>\n`);
const siteFiles = (i) => [
  ['index.html', indexPage(i)],
  ['style.css', styles[i % styles.length]],
  ['about.html', abouts[i % abouts.length]],
];
const bytesPerSite = siteFiles(0).reduce((sum, [, bytes]) => sum + bytes.byteLength, 0);

// ---- the store, filled in batches -----------------------------------------------------------
async function populate(dataDir, count) {
  const store = openStore({ dir: dataDir });
  const started = performance.now();
  const phases = { blobsMs: 0, flushMs: 0, commitsMs: 0 };
  const segments = [];
  const segmentSize = Math.max(BATCH, Math.ceil(count / SEGMENTS / BATCH) * BATCH);
  let segmentStart = performance.now();
  let segmentFrom = 0;
  try {
    const account = await store.createAccount({ email: `scale-${count}@example.com`, plan: 'builder' });
    for (let from = 0; from < count; from += BATCH) {
      const to = Math.min(count, from + BATCH);
      const ids = Array.from({ length: to - from }, (_, k) => from + k);
      let t = performance.now();
      const rows = await Promise.all(
        ids.map(async (i) => {
          const files = new Map();
          for (const [path, bytes] of siteFiles(i)) files.set(path, await store.blobs.putFile(bytes, contentTypeFor(path), { compress: false, durable: false }));
          return files;
        }),
      );
      phases.blobsMs += performance.now() - t;
      t = performance.now();
      // Blobs are on disk before any commit names them, as in a deploy.
      await store.blobs.flush();
      phases.flushMs += performance.now() - t;
      t = performance.now();
      await Promise.all(
        ids.map(async (i, k) => {
          const name = siteName(i);
          const result = await store.commitRevision({
            site: name,
            create: { name, plan: 'builder', claimed: true, accountId: account.id },
            baseRevision: null,
            files: rows[k],
            kind: 'deploy',
            createdBy: 'admin',
          });
          if (!result.ok) throw new Error(`populate ${name}: ${result.reason}`);
        }),
      );
      phases.commitsMs += performance.now() - t;
      if (to - segmentFrom >= segmentSize || to === count) {
        const ms = performance.now() - segmentStart;
        segments.push({ from: segmentFrom, to, ms: Math.round(ms), sitesPerSecond: Math.round(((to - segmentFrom) * 1000) / ms) });
        log(`  published ${to.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} (${segments.at(-1).sitesPerSecond} sites/s for the last ${(to - segmentFrom).toLocaleString('en-US')})`);
        segmentStart = performance.now();
        segmentFrom = to;
      }
    }
  } finally {
    await store.close();
  }
  const ms = performance.now() - started;
  return {
    ms: Math.round(ms),
    sitesPerSecond: count === 0 ? null : Math.round((count * 1000) / ms),
    blobsMs: Math.round(phases.blobsMs),
    flushMs: Math.round(phases.flushMs),
    commitsMs: Math.round(phases.commitsMs),
    segments,
  };
}

// ---- disk -------------------------------------------------------------------------------------
function fileStat(path) {
  if (!existsSync(path)) return { bytes: 0, allocatedBytes: 0 };
  const s = statSync(path);
  return { bytes: s.size, allocatedBytes: s.blocks * 512 };
}

function blobStats(dir) {
  let files = 0;
  let bytes = 0;
  let allocatedBytes = 0;
  for (const aa of readdirSync(dir)) {
    if (!/^[0-9a-f]{2}$/.test(aa)) continue;
    for (const bb of readdirSync(join(dir, aa))) {
      for (const name of readdirSync(join(dir, aa, bb))) {
        const s = statSync(join(dir, aa, bb, name));
        files++;
        bytes += s.size;
        allocatedBytes += s.blocks * 512;
      }
    }
  }
  return { files, bytes, allocatedBytes };
}

// ---- the server -------------------------------------------------------------------------------
/** RSS of the whole process (all threads), split into anonymous memory and mapped files (LMDB). */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), hwm: kb('VmHWM') };
}

function startServer(dataDir, logPath) {
  const env = {
    ...process.env,
    PLINTH_DATA_DIR: dataDir,
    PLINTH_PORT: '0',
    PLINTH_LISTEN_HOST: '127.0.0.1',
    PLINTH_LOG_LEVEL: 'warn',
    PLINTH_ANON_SITES_PER_HOUR: '0',
    PLINTH_ANON_DEPLOYS_PER_HOUR: '0',
    PLINTH_API_RATE_PER_CREDENTIAL: '0',
    PLINTH_API_RATE_PER_NETWORK: '0',
  };
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner within 120 s:\n${out}`));
    }, 120_000);
    let found = false;
    const onData = (chunk) => {
      out += chunk.toString();
      const match = !found && /running on port (\d+) \((\d+) HTTP thread/.exec(out);
      if (match) {
        found = true;
        clearTimeout(timer);
        resolve({ port: Number(match[1]), threads: Number(match[2]), bannerMs: performance.now() - started });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code ?? signal} before listening:\n${out}`));
    });
  });
  return { child, ready, exited, writeLog: () => writeFileSync(logPath, out) };
}

/** Visits every site's index page once, `CONCURRENCY` at a time; every answer must be 200 with its page. */
function visitAll(port, count) {
  return visit(port, count, (i) => ({ host: `${siteName(i)}.${SITE_DOMAIN}`, path: '/', status: 200, body: indexPage(i) }));
}

/**
 * `count` requests for distinct made-up paths of 1,000 characters spread over the sites, as a
 * client probing random URLs would send: each is resolved (a 404) and may be cached by the
 * server, so this shows whether that memory is bounded.
 */
function probeRandomPaths(port, count, sites) {
  const filler = 'x'.repeat(980);
  return visit(port, count, (i) => ({ host: `${siteName(i % sites)}.${SITE_DOMAIN}`, path: `/${i.toString(36).padStart(8, '0')}-${filler}.png`, status: 404 }));
}

/** Sends `count` requests, `CONCURRENCY` at a time; `target(i)` names each and what must come back. */
async function visit(port, count, target) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY, timeout: 5000 });
  const latencies = new Float64Array(count);
  const failures = [];
  let next = 0;
  const get = (i) =>
    new Promise((resolve) => {
      const started = performance.now();
      const want = target(i);
      const req = http.request({ host: '127.0.0.1', port, path: want.path, agent, headers: { host: want.host } }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          latencies[i] = performance.now() - started;
          if (res.statusCode !== want.status) failures.push(`${want.host}: status ${res.statusCode}`);
          else if (want.body && !Buffer.concat(chunks).equals(want.body)) failures.push(`${want.host}: wrong body`);
          resolve();
        });
        res.on('error', (err) => {
          failures.push(`${want.host}: ${err.message}`);
          resolve();
        });
      });
      req.on('error', (err) => {
        failures.push(`${want.host}: ${err.message}`);
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) await get(next++);
    }),
  );
  const ms = performance.now() - started;
  agent.destroy();
  latencies.sort();
  const at = (q) => (count === 0 ? null : Math.round(latencies[Math.min(count - 1, Math.floor(count * q))] * 100) / 100);
  return {
    requests: count,
    ms: Math.round(ms),
    requestsPerSecond: count === 0 ? null : Math.round((count * 1000) / ms),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: count === 0 ? null : Math.round(latencies[count - 1] * 100) / 100,
    failures: failures.length,
    failureExamples: failures.slice(0, 10),
  };
}

// ---- one count --------------------------------------------------------------------------------
async function measure(count) {
  const work = mkdtempSync(join(os.tmpdir(), 'plinth-bench-scale-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  let server;
  try {
    log(`${count.toLocaleString('en-US')} sites: publishing through the store into ${dataDir}`);
    const populate_ = await populate(dataDir, count);
    const lmdb = fileStat(join(dataDir, 'meta', 'data.mdb'));
    const blobs = blobStats(join(dataDir, 'blobs'));
    log(`  populate ${(populate_.ms / 1000).toFixed(1)} s (blobs ${(populate_.blobsMs / 1000).toFixed(1)} s, flushes ${(populate_.flushMs / 1000).toFixed(1)} s, commits ${(populate_.commitsMs / 1000).toFixed(1)} s); LMDB ${(lmdb.bytes / MiB).toFixed(1)} MiB, ${blobs.files.toLocaleString('en-US')} blob files of ${(blobs.bytes / MiB).toFixed(1)} MiB (${(blobs.allocatedBytes / MiB).toFixed(1)} MiB allocated)`);

    server = startServer(dataDir, join(work, 'server.log'));
    const { port, threads, bannerMs } = await server.ready;
    const pid = server.child.pid;
    const afterStart = memoryOf(pid);
    log(`  server up in ${Math.round(bannerMs)} ms (${threads} HTTP thread${threads === 1 ? '' : 's'}), RSS ${(afterStart.rss / MiB).toFixed(1)} MiB`);

    const cold = await visitAll(port, count);
    const afterCold = memoryOf(pid);
    if (count > 0) log(`  cold visits: ${cold.requestsPerSecond} req/s, p99 ${cold.p99Ms} ms, ${cold.failures} failed; RSS ${(afterCold.rss / MiB).toFixed(1)} MiB`);
    const warm = await visitAll(port, count);
    const afterWarm = memoryOf(pid);
    if (count > 0) log(`  warm visits: ${warm.requestsPerSecond} req/s, p99 ${warm.p99Ms} ms, ${warm.failures} failed; RSS ${(afterWarm.rss / MiB).toFixed(1)} MiB`);
    const probes = count > 0 ? await probeRandomPaths(port, PROBES, count) : null;
    const afterProbes = count > 0 ? memoryOf(pid) : null;
    if (probes) log(`  ${PROBES.toLocaleString('en-US')} random 1,000-character paths: ${probes.requestsPerSecond} req/s, ${probes.failures} failed; RSS ${(afterProbes.rss / MiB).toFixed(1)} MiB`);

    const stopStarted = performance.now();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    const stopMs = Math.round(performance.now() - stopStarted);
    server.writeLog();
    if (exit.code !== 0) throw new Error(`server exited with ${exit.code ?? exit.signal} after SIGTERM (log: ${join(work, 'server.log')})`);
    log(`  stopped in ${stopMs} ms (exit 0)`);
    return {
      sites: count,
      populate: populate_,
      disk: { lmdbBytes: lmdb.bytes, lmdbAllocatedBytes: lmdb.allocatedBytes, blobFiles: blobs.files, blobBytes: blobs.bytes, blobAllocatedBytes: blobs.allocatedBytes },
      startup: { bannerMs: Math.round(bannerMs), threads },
      memory: { afterStart, afterCold, afterWarm, afterProbes },
      cold,
      warm,
      probes,
      stop: { ms: stopMs, code: exit.code },
    };
  } finally {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    rmSync(work, { recursive: true, force: true });
  }
}

// ---- report -----------------------------------------------------------------------------------
const n0 = (n) => (n === null || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const mib = (b) => `${(b / MiB).toFixed(0)}`;
const perSite = (b) => (b === null ? '–' : `${(b / 1024).toFixed(1)} KiB`);

function tables(runs) {
  const rows = [];
  rows.push(`| Sites | Publish (store) | LMDB file | Blobs on disk | Start-up to banner | RSS after start | RSS after 1st visits (cold) | RSS after 2nd visits (warm) | RSS after ${n0(PROBES)} random paths | RSS per site, cold / warm |`);
  rows.push('|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of runs) {
    const m = r.memory;
    const publish = r.sites === 0 ? '–' : `${(r.populate.ms / 1000).toFixed(1)} s, ${n0(r.populate.sitesPerSecond)} sites/s`;
    const split = (x) => `${mib(x.rss)} MiB (${mib(x.anon)} anon + ${mib(x.file)} file)`;
    rows.push(
      `| ${n0(r.sites)} | ${publish} | ${mib(r.disk.lmdbBytes)} MiB | ${n0(r.disk.blobFiles)} files, ${mib(r.disk.blobAllocatedBytes)} MiB | ${n0(r.startup.bannerMs)} ms | ${split(m.afterStart)} | ${r.sites === 0 ? '–' : split(m.afterCold)} | ${r.sites === 0 ? '–' : split(m.afterWarm)} | ${m.afterProbes ? split(m.afterProbes) : '–'} | ${perSite(r.rssPerSiteBytes.cold)} / ${perSite(r.rssPerSiteBytes.warm)} |`,
    );
  }
  const visits = ['| Sites | 1st visits (cold): req/s | p50 | p99 | max | 2nd visits (warm): req/s | p50 | p99 | max | failed | Stop (SIGTERM) |', '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|'];
  for (const r of runs) {
    if (r.sites === 0) continue;
    const ms = (x) => (x === null ? '–' : `${x.toFixed(2)} ms`);
    visits.push(`| ${n0(r.sites)} | ${n0(r.cold.requestsPerSecond)} | ${ms(r.cold.p50Ms)} | ${ms(r.cold.p99Ms)} | ${ms(r.cold.maxMs)} | ${n0(r.warm.requestsPerSecond)} | ${ms(r.warm.p50Ms)} | ${ms(r.warm.p99Ms)} | ${ms(r.warm.maxMs)} | ${r.cold.failures + r.warm.failures} | ${n0(r.stop.ms)} ms, exit ${r.stop.code} |`);
  }
  return { memory: rows.join('\n'), visits: visits.join('\n') };
}

const machine = await machineInfo(root);
const startedAt = performance.now();
const runs = [];
for (const count of COUNTS) runs.push(await measure(count));

// RSS per site: over the empty server's RSS right after start (no sites, no visits).
const empty = runs.find((r) => r.sites === 0);
for (const r of runs) {
  r.rssPerSiteBytes =
    r.sites === 0 || !empty
      ? { cold: null, warm: null }
      : { cold: Math.round((r.memory.afterCold.rss - empty.memory.afterStart.rss) / r.sites), warm: Math.round((r.memory.afterWarm.rss - empty.memory.afterStart.rss) / r.sites) };
}
const counted = runs.filter((r) => r.sites > 0).sort((a, b) => a.sites - b.sites);
const marginal =
  counted.length >= 2
    ? (() => {
        const [a, b] = counted.slice(-2);
        const per = (key) => Math.round((b.memory.afterWarm[key] - a.memory.afterWarm[key]) / (b.sites - a.sites));
        return { between: [a.sites, b.sites], rss: per('rss'), anon: per('anon'), file: per('file') };
      })()
    : null;

const result = {
  bench: 'scale',
  machine: { cpu: machine.cpu, cores: machine.cores, memoryGiB: Number(machine.memoryGiB), kernel: machine.kernel, node: machine.node, commit: machine.commit, date: machine.date, loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))) },
  settings: {
    counts: COUNTS,
    filesPerSite: 3,
    bytesPerSite,
    batch: BATCH,
    concurrency: CONCURRENCY,
    siteDomain: SITE_DOMAIN,
    server: 'node dist/main.js with default settings (PLINTH_THREADS, PLINTH_CACHE_MB unset), rate limits off, PLINTH_LOG_LEVEL=warn',
  },
  runs,
  marginalWarmBytesPerSite: marginal,
  totalMs: Math.round(performance.now() - startedAt),
};

const { memory, visits } = tables(runs);
const threads = runs[0]?.startup.threads;
const section = [
  '## Scale: sites and memory (`npm run bench:scale`)',
  '',
  `Run ${machine.date}, commit \`${machine.commit}\`: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.kernel}, Node ${machine.node}. Load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}.`,
  '',
  `For each count a fresh data directory is filled through the store (\`openStore\`, \`blobs.putFile\` without a sync per file, one \`blobs.flush()\` and ${BATCH} concurrent \`commitRevision\`s per batch of ${BATCH} sites): 3 files per site (index.html unique to the site, style.css and about.html shared by 20 and 100 sites), ${n0(bytesPerSite)} bytes per site, plan \`builder\` (no badge), no compressed variants. Then \`node dist/main.js\` starts with its default settings (${threads} HTTP thread${threads === 1 ? '' : 's'} on ${machine.cores} cores, \`PLINTH_CACHE_MB\` ${process.env.PLINTH_CACHE_MB ?? 64}) and every site's \`/\` is fetched twice with \`Host: <name>.${SITE_DOMAIN}\`, ${CONCURRENCY} requests in flight over keep-alive connections, each answer checked (200 and the site's own bytes). RSS is VmRSS of the whole process (/proc/<pid>/status), split into anonymous memory (JavaScript heaps, caches, native buffers) and mapped file pages (the node binary, about 53 MiB, and the LMDB map: page cache the kernel can reclaim); per site = (RSS after the visits − RSS of the empty server after start) / sites. "Cold" means the server's caches were empty; the files were still in the OS page cache from publishing. The visit rates are bounded by the Node client on the same 2 cores; \`npm run bench:serve\` measures serving throughput.`,
  '',
  memory,
  '',
  visits,
  '',
  marginal ? `Between ${n0(marginal.between[0])} and ${n0(marginal.between[1])} sites, after the warm visits, each further site cost ${perSite(marginal.rss)} of RSS (${perSite(marginal.anon)} anonymous, ${perSite(marginal.file)} mapped file).` : '',
  '',
  '```',
  `${process.env.SCALE_COUNTS ? `SCALE_COUNTS=${process.env.SCALE_COUNTS} ` : ''}npm run bench:scale`,
  '```',
].join('\n');

console.log(`\n${section}\n`);
if (!process.env.BENCH_NO_WRITE) {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'scale.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeResultsFile(join(root, 'bench', 'RESULTS.md'), section, 'scale');
  log('wrote bench/results/scale.json and the scale section of bench/RESULTS.md');
}
