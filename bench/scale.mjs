// How Plinth's start-up and memory grow with the number of published sites (issue 11). For each
// count (0, 10,000 and 100,000 by default; SCALE_COUNTS=1000,10000 for a quick run) a fresh data
// directory is filled through the store (as an operator's import would). Writes
// bench/results/scale.json and the scale section of bench/RESULTS.md (BENCH_NO_WRITE=1 skips
// both). Usage: npm run bench:scale
//
// What is compared, and how: the site counts, against each other (memory and start-up of N
// sites against the empty server). Memory (RSS) does not drift with the machine's load, but the
// timings do, so they are taken in rounds over all counts, in an order rotated each round (see
// lib/rounds.mjs): SCALE_STARTUP_ROUNDS (3) start-ups to the banner and stops per data directory;
// then every count's server runs side by side on its own port, each site's index page is visited
// once cold (a first visit can only happen once: one pass per server, in count order), then in
// SCALE_WARM_ROUNDS (3) warm rounds, then 100,000 random long paths are asked for (SCALE_PROBES),
// every answer checked. Timings are medians of the rounds with their range. Publishing each
// count is one pass, its rate reported per segment. About 5 min with the default counts (the
// start-up and warm rounds add about a minute to the single pass each had before).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentTypeFor } from '../dist/rules/index.js';
import { openStore } from '../dist/store/index.js';
import { machineInfo, noWrite, publishSection } from './lib/report.mjs';
import { formatSummary, median, runRounds, summarize } from './lib/rounds.mjs';

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
const STARTUP_ROUNDS = Number(process.env.SCALE_STARTUP_ROUNDS ?? 3);
const WARM_ROUNDS = Number(process.env.SCALE_WARM_ROUNDS ?? 3);
// The default site domain (PLINTH_SITE_DOMAIN, src/config.ts).
const SITE_DOMAIN = 'sites.localhost';
const SEGMENTS = 10;
const MiB = 1024 * 1024;
const log = (msg) => process.stdout.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---- content: three small files per site, only index.html unique to the site ------------------
const filler = 'Plinth publishes a static website from an uploaded folder and serves it at its own address. ';
const styles = Array.from({ length: 20 }, (_, v) =>
  Buffer.from(
    `/* theme ${v} */\n${Array.from({ length: 24 }, (_, k) => `.c${v}-${k} { margin: ${k}px; padding: ${v}px; color: #${(v * 4099 + k * 131).toString(16).padStart(6, '0').slice(0, 6)}; }`).join('\n')}\n`,
  ),
);
const abouts = Array.from({ length: 100 }, (_, v) =>
  Buffer.from(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>About ${v}</title><link rel="stylesheet" href="/style.css"></head>\n<body><h1>About us (${v})</h1>\n<p>${filler.repeat(14)}</p>\n</body></html>\n`,
  ),
);
const siteName = (i) => `scale-${i}`;
const indexPage = (i) =>
  Buffer.from(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${siteName(i)}</title><link rel="stylesheet" href="/style.css"></head>\n<body><h1>Welcome to ${siteName(i)}</h1>\n<p>${filler.repeat(20)}</p>\n<p>Site number ${i}. <a href="/about">About</a></p>\n</body></html>\n`,
  );
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
          for (const [path, bytes] of siteFiles(i))
            files.set(path, await store.blobs.putFile(bytes, contentTypeFor(path), { compress: false, durable: false }));
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
        log(
          `  published ${to.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} (${segments.at(-1).sitesPerSecond} sites/s for the last ${(to - segmentFrom).toLocaleString('en-US')})`,
        );
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
  // Blob files sit in `aa/` (the flat layout of new stores) or `aa/bb/` (stores made before).
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name)) walk(join(folder, entry.name));
      else if (entry.isFile() && folder !== dir) {
        const s = statSync(join(folder, entry.name));
        files++;
        bytes += s.size;
        allocatedBytes += s.blocks * 512;
      }
    }
  };
  walk(dir);
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

// ---- the counts, side by side ---------------------------------------------------------------
/** A fresh data directory filled with `count` sites; nothing runs on it yet. */
async function prepare(count) {
  const work = mkdtempSync(join(os.tmpdir(), 'plinth-bench-scale-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  log(`${count.toLocaleString('en-US')} sites: publishing through the store into ${dataDir}`);
  const populate_ = await populate(dataDir, count);
  const lmdb = fileStat(join(dataDir, 'meta', 'data.mdb'));
  const blobs = blobStats(join(dataDir, 'blobs'));
  log(
    `  populate ${(populate_.ms / 1000).toFixed(1)} s (blobs ${(populate_.blobsMs / 1000).toFixed(1)} s, flushes ${(populate_.flushMs / 1000).toFixed(1)} s, commits ${(populate_.commitsMs / 1000).toFixed(1)} s); LMDB ${(lmdb.bytes / MiB).toFixed(1)} MiB, ${blobs.files.toLocaleString('en-US')} blob files of ${(blobs.bytes / MiB).toFixed(1)} MiB (${(blobs.allocatedBytes / MiB).toFixed(1)} MiB allocated)`,
  );
  return {
    sites: count,
    work,
    dataDir,
    populate: populate_,
    disk: {
      lmdbBytes: lmdb.bytes,
      lmdbAllocatedBytes: lmdb.allocatedBytes,
      blobFiles: blobs.files,
      blobBytes: blobs.bytes,
      blobAllocatedBytes: blobs.allocatedBytes,
    },
  };
}

/** SIGTERM, then the time to exit; throws unless the exit is clean. */
async function stop(server, logPath) {
  const started = performance.now();
  server.child.kill('SIGTERM');
  const exit = await server.exited;
  const ms = Math.round(performance.now() - started);
  server.writeLog();
  if (exit.code !== 0) throw new Error(`server exited with ${exit.code ?? exit.signal} after SIGTERM (log: ${logPath})`);
  return { ms, code: exit.code };
}

/** One start to the banner and one stop on each data directory per round, the counts in a rotated order. */
async function startupRounds(all) {
  const byCount = await runRounds(all, STARTUP_ROUNDS, async (run, round) => {
    const logPath = join(run.work, 'startup.log');
    const server = startServer(run.dataDir, logPath);
    try {
      const { threads, bannerMs } = await server.ready;
      const stopped = await stop(server, logPath);
      log(`  start-up round ${round + 1}, ${n0(run.sites)} sites: banner in ${Math.round(bannerMs)} ms, stopped in ${stopped.ms} ms`);
      return { bannerMs: Math.round(bannerMs), stopMs: stopped.ms, threads };
    } finally {
      await kill(server);
    }
  });
  all.forEach((run, i) => {
    const rounds = byCount[i];
    run.startup = { bannerMs: summarize(rounds.map((r) => r.bannerMs)), stopMs: summarize(rounds.map((r) => r.stopMs)), threads: rounds[0].threads, rounds };
  });
}

/**
 * Every count's server at once, each on its own port: memory after start, after one cold visit
 * of every site, after WARM_ROUNDS warm visits (interleaved across the servers, rotated each
 * round), and after the random paths; then each is stopped.
 */
async function visitSideBySide(all) {
  const live = [];
  try {
    for (const run of all) {
      const server = startServer(run.dataDir, join(run.work, 'server.log'));
      live.push({ run, server });
      Object.assign(run, { port: (await server.ready).port, pid: server.child.pid });
      run.memory = { afterStart: memoryOf(run.pid) };
      log(`  ${n0(run.sites)} sites: server up on port ${run.port}, RSS ${(run.memory.afterStart.rss / MiB).toFixed(1)} MiB`);
    }
    const visited = all.filter((run) => run.sites > 0);
    // A first visit finds empty caches only once: one pass per server, in count order.
    for (const run of visited) {
      run.cold = await visitAll(run.port, run.sites);
      run.memory.afterCold = memoryOf(run.pid);
      log(
        `  ${n0(run.sites)} sites, cold visits: ${run.cold.requestsPerSecond} req/s, p99 ${run.cold.p99Ms} ms, ${run.cold.failures} failed; RSS ${(run.memory.afterCold.rss / MiB).toFixed(1)} MiB`,
      );
    }
    const warm = await runRounds(visited, WARM_ROUNDS, async (run, round) => {
      const result = await visitAll(run.port, run.sites);
      log(`  warm round ${round + 1}, ${n0(run.sites)} sites: ${result.requestsPerSecond} req/s, p99 ${result.p99Ms} ms, ${result.failures} failed`);
      return result;
    });
    visited.forEach((run, i) => {
      const rounds = warm[i];
      run.warm = {
        requestsPerSecond: summarize(rounds.map((r) => r.requestsPerSecond)),
        p50Ms: median(rounds.map((r) => r.p50Ms)),
        p99Ms: median(rounds.map((r) => r.p99Ms)),
        maxMs: Math.max(...rounds.map((r) => r.maxMs)),
        failures: rounds.reduce((a, r) => a + r.failures, 0),
        rounds,
      };
      run.memory.afterWarm = memoryOf(run.pid);
    });
    for (const run of visited) {
      run.probes = await probeRandomPaths(run.port, PROBES, run.sites);
      run.memory.afterProbes = memoryOf(run.pid);
      log(
        `  ${n0(run.sites)} sites, ${n0(PROBES)} random 1,000-character paths: ${run.probes.requestsPerSecond} req/s, ${run.probes.failures} failed; RSS ${(run.memory.afterProbes.rss / MiB).toFixed(1)} MiB`,
      );
    }
    for (const { run, server } of live) {
      run.stop = await stop(server, join(run.work, 'server.log'));
      log(`  ${n0(run.sites)} sites: stopped in ${run.stop.ms} ms (exit 0)`);
    }
  } finally {
    for (const { server } of live) await kill(server);
  }
}

/** SIGKILL for a server still running (a failed run); nothing for one that exited. */
async function kill(server) {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

// ---- report -----------------------------------------------------------------------------------
const n0 = (n) => (n === null || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const mib = (b) => `${(b / MiB).toFixed(0)}`;
const perSite = (b) => (b === null ? '–' : `${(b / 1024).toFixed(1)} KiB`);

function tables(runs) {
  const rows = [];
  rows.push(
    `| Sites | Publish (store) | LMDB file | Blobs on disk | Start-up to banner, median (range) | RSS after start | RSS after the cold visits | RSS after the warm rounds | RSS after ${n0(PROBES)} random paths | RSS per site, cold / warm |`,
  );
  rows.push('|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of runs) {
    const m = r.memory;
    const publish = r.sites === 0 ? '–' : `${(r.populate.ms / 1000).toFixed(1)} s, ${n0(r.populate.sitesPerSecond)} sites/s`;
    const split = (x) => `${mib(x.rss)} MiB (${mib(x.anon)} anon + ${mib(x.file)} file)`;
    rows.push(
      `| ${n0(r.sites)} | ${publish} | ${mib(r.disk.lmdbBytes)} MiB | ${n0(r.disk.blobFiles)} files, ${mib(r.disk.blobAllocatedBytes)} MiB | ${formatSummary(r.startup.bannerMs, (v) => `${n0(v)} ms`)} | ${split(m.afterStart)} | ${r.sites === 0 ? '–' : split(m.afterCold)} | ${r.sites === 0 ? '–' : split(m.afterWarm)} | ${m.afterProbes ? split(m.afterProbes) : '–'} | ${perSite(r.rssPerSiteBytes.cold)} / ${perSite(r.rssPerSiteBytes.warm)} |`,
    );
  }
  const visits = [
    `| Sites | cold visits: req/s | p50 | p99 | max | ${WARM_ROUNDS} warm rounds: req/s, median (range) | p50, median | p99, median | max | failed | Stop after the visits (SIGTERM) |`,
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of runs) {
    if (r.sites === 0) continue;
    const ms = (x) => (x === null ? '–' : `${x.toFixed(2)} ms`);
    visits.push(
      `| ${n0(r.sites)} | ${n0(r.cold.requestsPerSecond)} | ${ms(r.cold.p50Ms)} | ${ms(r.cold.p99Ms)} | ${ms(r.cold.maxMs)} | ${formatSummary(r.warm.requestsPerSecond, n0)} | ${ms(r.warm.p50Ms)} | ${ms(r.warm.p99Ms)} | ${ms(r.warm.maxMs)} | ${r.cold.failures + r.warm.failures} | ${n0(r.stop.ms)} ms, exit ${r.stop.code} |`,
    );
  }
  return { memory: rows.join('\n'), visits: visits.join('\n') };
}

const machine = await machineInfo(root);
const startedAt = performance.now();
const runs = [];
try {
  for (const count of COUNTS) runs.push(await prepare(count));
  log(`start-ups: ${STARTUP_ROUNDS} rounds over ${runs.length} data directories`);
  await startupRounds(runs);
  log('all servers side by side: visits and memory');
  await visitSideBySide(runs);
} finally {
  for (const run of runs) rmSync(run.work, { recursive: true, force: true });
}
for (const run of runs) {
  delete run.work;
  delete run.dataDir;
}

// RSS per site: over the empty server's RSS right after start (no sites, no visits).
const empty = runs.find((r) => r.sites === 0);
for (const r of runs) {
  r.rssPerSiteBytes =
    r.sites === 0 || !empty
      ? { cold: null, warm: null }
      : {
          cold: Math.round((r.memory.afterCold.rss - empty.memory.afterStart.rss) / r.sites),
          warm: Math.round((r.memory.afterWarm.rss - empty.memory.afterStart.rss) / r.sites),
        };
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
  machine: {
    cpu: machine.cpu,
    cores: machine.cores,
    memoryGiB: Number(machine.memoryGiB),
    kernel: machine.kernel,
    node: machine.node,
    commit: machine.commit,
    date: machine.date,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
  },
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
  `Run ${machine.date}, commit \`${machine.commit}\`: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.kernel}, Node ${machine.node}. Load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}.`,
  '',
  `For each count a fresh data directory is filled through the store (\`openStore\`, \`blobs.putFile\` without a sync per file, one \`blobs.flush()\` and ${BATCH} concurrent \`commitRevision\`s per batch of ${BATCH} sites): 3 files per site (index.html unique to the site, style.css and about.html shared by 20 and 100 sites), ${n0(bytesPerSite)} bytes per site, plan \`builder\` (no badge), no compressed variants. Then \`node dist/main.js\` runs with its default settings (${threads} HTTP thread${threads === 1 ? '' : 's'} on ${machine.cores} cores, \`PLINTH_CACHE_MB\` ${process.env.PLINTH_CACHE_MB ?? 64}). Start-up: ${STARTUP_ROUNDS} rounds, each starting (to the banner) and stopping the server once on every data directory, the counts in an order rotated each round. Then one server per count runs, side by side on its own port, and every site's \`/\` is fetched with \`Host: <name>.${SITE_DOMAIN}\`, ${CONCURRENCY} requests in flight over keep-alive connections, each answer checked (200 and the site's own bytes): once cold, server after server, then in ${WARM_ROUNDS} warm rounds that visit each server in turn, in an order rotated each round. Timings are medians of the rounds with their range. RSS is VmRSS of the whole process (/proc/<pid>/status), split into anonymous memory (JavaScript heaps, caches, native buffers) and mapped file pages (the node binary, about 53 MiB, and the LMDB map: page cache the kernel can reclaim); per site = (RSS after the visits − RSS of the empty server after start) / sites. "Cold" means the server's caches were empty; the files were still in the OS page cache from publishing. The visit rates are bounded by the Node client on the same 2 cores; \`npm run bench:serve\` measures serving throughput.`,
  '',
  memory,
  '',
  visits,
  '',
  marginal
    ? `Between ${n0(marginal.between[0])} and ${n0(marginal.between[1])} sites, after the warm visits, each further site cost ${perSite(marginal.rss)} of RSS (${perSite(marginal.anon)} anonymous, ${perSite(marginal.file)} mapped file).`
    : '',
  '',
  '```',
  `${process.env.SCALE_COUNTS ? `SCALE_COUNTS=${process.env.SCALE_COUNTS} ` : ''}npm run bench:scale`,
  '```',
].join('\n');

publishSection(section, 'scale');
if (!noWrite()) {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'scale.json'), `${JSON.stringify(result, null, 2)}\n`);
  log('wrote bench/results/scale.json');
}
