// A small deploy's unpack step alone, in one process (issue 35 §4, seventh pass): the 1 MB site's
// archive (100 files) unpacked by the ingest pool of each build, as a server asks for it on an
// embedded node (body in memory, analysed in the unpack, blobs carried by the commit:
// `journalMaxBytes` 2 MB), each build a pool of its own over a data directory of its own, one new
// archive per round, in an order rotated each round. What differs: whether the worker creates the
// blob files before it answers (main) or leaves the new ones to the compressor's task after the
// `201` (this branch). That task runs after each round here too, off the clock, as the server runs it.
//
//   npm run build && node bench/unpack-ab.mjs <other root> [<root>]   # built checkouts; this one last by default
//   BENCH_UNPACK_ROUNDS (default 24); BENCH_UNPACK_IN_PROCESS=1: each build's worker functions
//   called on this thread instead of through its pool (no thread hop, no waiting for a niced
//   thread's turn: the worker's own work alone; the module renices this thread as it does a worker)
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tarGz } from './lib/archive.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { writeSite } from './lib/site-gen.mjs';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const roots = process.argv.slice(2).map((path) => resolve(path));
if (roots.length === 0) throw new Error('usage: node bench/unpack-ab.mjs <root> [<root>…]');
if (roots.length === 1) roots.push(here);
const rounds = Number(process.env.BENCH_UNPACK_ROUNDS ?? 24);
const work = join(here, 'bench', '.work', 'unpack-ab');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const { loadConfig } = await import(pathToFileURL(join(here, 'dist', 'config.js')).href);
const { analysisLimits } = await import(pathToFileURL(join(here, 'dist', 'sites', 'deploy-analyze.js')).href);
const config = loadConfig({ PLINTH_DATA_DIR: work });
const limits = {
  maxFiles: 1000,
  maxFileBytes: 10 * 1024 * 1024,
  maxSiteBytes: 100 * 1024 * 1024,
  maxRulesFileBytes: config.deploy.siteRules.maxRulesFileBytes,
};

const inProcess = process.env.BENCH_UNPACK_IN_PROCESS === '1';

/** A build's worker functions on this thread, as its pool's `unpack` and `compress` answer. */
async function inProcessPool(root) {
  const worker = await import(pathToFileURL(join(root, 'dist', 'ingest', 'worker.js')).href);
  return {
    unpack: async (task) => {
      const reply = await worker.unpack(task);
      // Piscina's `move` wraps a reply whose buffers are transferred; the value is inside.
      const value =
        reply[Symbol.for('piscina.valueSymbol')] ??
        Object.getOwnPropertySymbols(reply)
          .map((symbol) => reply[symbol])
          .find((v) => v?.result);
      return (value ?? reply).result;
    },
    compress: (task) => worker.compress(task),
    close: () => Promise.resolve(),
  };
}

const arms = await Promise.all(
  roots.map(async (root, i) => {
    const { createIngestPool } = await import(pathToFileURL(join(root, 'dist', 'ingest', 'index.js')).href);
    const pool = inProcess
      ? await inProcessPool(root)
      : createIngestPool({ maxThreads: 1, maxQueue: 4, idleTimeoutMs: 60_000, workerFile: join(root, 'dist', 'ingest', 'worker-entry.cjs') });
    return { label: `${i + 1}: ${root}`, pool, dataDir: join(work, `data-${i + 1}`) };
  }),
);

/** Each round's archive, the same for every arm. */
const archives = [];
function archiveOf(round) {
  if (archives[round] === undefined) {
    const dir = join(work, `site-${round}`);
    // Seeds far apart: a site's text files take seeds `seed + i`.
    writeSite(dir, 100, 1024 * 1024, 100_000 * (round + 1));
    archives[round] = readFileSync(tarGz(dir, join(work, `site-${round}.tgz`)));
    rmSync(dir, { recursive: true, force: true });
  }
  return archives[round];
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function measure(label, round) {
  const arm = arms.find((a) => a.label === label);
  const body = new Uint8Array(archiveOf(round));
  const started = performance.now();
  const cpu = process.cpuUsage();
  const result = await arm.pool.unpack({
    body,
    dataDir: arm.dataDir,
    bodyKind: 'archive',
    limits,
    blockExecutables: false,
    analyze: { limits: analysisLimits(config), threads: 1 },
    journalMaxBytes: 2 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  // Every thread of this process (the pool's worker is one): robust against the machine's load, where wall time is not.
  const { user, system } = process.cpuUsage(cpu);
  const cpuMs = (user + system) / 1000;
  const systemMs = system / 1000;
  if (!result.ok || result.journal === undefined || result.analysis === undefined) throw new Error(`${label}: not a journaled, analysed unpack`);
  // After the answer: the files (this branch), the variants, one sync; as the server does.
  await arm.pool.compress({ dataDir: arm.dataDir, sha256s: result.pendingVariants, ...(result.filesDeferred ? { write: result.journal } : {}) });
  await sleep(200);
  return { ms, cpuMs, systemMs, deferred: result.filesDeferred === true };
}

try {
  const labels = arms.map((arm) => arm.label);
  // The warm-up's archive is one of its own: a site already stored (with its variants) is not carried.
  const results = await runRounds(labels, rounds, measure, { warmup: (label) => measure(label, rounds) });
  const ms = (v) => `${v.toFixed(1)} ms`;
  labels.forEach((label, i) => {
    const of = (key) => formatSummary(summarize(results[i].map((r) => r[key])), ms);
    const values = results[i].map((r) => r.ms);
    console.log(
      `${label}: unpack ${of('ms')}, CPU ${of('cpuMs')} (system ${of('systemMs')}), files after the answer: ${results[i].some((r) => r.deferred) ? 'yes' : 'no'}; rounds ${values.map(Math.round).join(', ')} ms`,
    );
  });
  for (const key of ['ms', 'cpuMs']) {
    const ratio = pairedRatio(
      results[labels.length - 1].map((r) => r[key]),
      results[0].map((r) => r[key]),
    );
    console.log(`${labels.at(-1)} ÷ ${labels[0]}, ${key === 'ms' ? 'unpack' : 'CPU'} per round: ${formatSummary(ratio, (v) => `${v.toFixed(3)}×`)}`);
  }
} finally {
  await Promise.all(arms.map((arm) => arm.pool.close()));
  rmSync(work, { recursive: true, force: true });
}
