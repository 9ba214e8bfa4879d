// Ingest speed (issue 3): the ingest pool's unpack of a 1,000-file, ~50 MB .tar.gz, called
// directly (one worker thread, no HTTP, no LMDB commit), against the floor of `tar xzf` +
// `sha256sum` of the same archive. `npm run bench:deploy` measures the whole deploy over HTTP;
// this isolates the worker. Writes the ingest section of bench/RESULTS.md (BENCH_NO_WRITE=1: print only).
//
// What is compared, and how: three arms, measured once per round in an order rotated each round
// (see lib/rounds.mjs): the floor; a cold unpack into a fresh data directory (every blob new);
// and the same archive unpacked into a data directory that already holds its blobs (a redeploy).
// Before each arm the page cache is flushed with `sync`, so no arm pays for another's writes.
// Each figure is the median of the rounds with their range; "÷ floor" is taken within each
// round, then its median.
//
// Env: BENCH_ROUNDS (5). About 30 s with building the site.
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { floorMs, tarGz } from './lib/archive.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { writeSite } from './lib/site-gen.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, '..');
const work = join(benchDir, '.work', 'ingest');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const MB = 1024 * 1024;
const LIMITS = { maxFiles: 1000, maxFileBytes: 50 * MB, maxSiteBytes: 90 * MB };
const log = (msg) => process.stdout.write(`[ingest-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const { createIngestPool } = await import(pathToFileURL(join(root, 'dist/ingest/index.js')).href);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
log('building a 1,000-file, ~50 MB site');
writeSite(join(work, 'site'), 1000, 50 * MB, 4242);
const archive = tarGz(join(work, 'site'), join(work, 'site.tgz'));
const archiveBytes = statSync(archive).size;

const pool = createIngestPool({ maxThreads: 1, maxQueue: 4, idleTimeoutMs: 60_000 });
let spools = 0;
/** One unpack into `dataDir`, in ms. The worker deletes its spool file, so each gets a copy (not timed). */
async function unpackMs(dataDir) {
  const spoolPath = join(work, `spool-${spools++}.tgz`);
  copyFileSync(archive, spoolPath);
  const started = performance.now();
  const result = await pool.unpack({ spoolPath, dataDir, bodyKind: 'archive', limits: LIMITS, blockExecutables: false });
  const ms = performance.now() - started;
  if (!result.ok) throw new Error(`unpack failed: ${JSON.stringify(result.error)}`);
  return ms;
}

try {
  // Thread start and module load are not per-deploy costs; this also fills the redeploy arm's store.
  const warmDir = join(work, 'data-warm');
  await unpackMs(warmDir);
  const arms = ['floor', 'cold', 'redeploy'];
  const [floors, cold, redeploy] = await runRounds(arms, rounds, async (arm, round) => {
    execFileSync('sync');
    const ms = arm === 'floor' ? floorMs(archive, work) : await unpackMs(arm === 'cold' ? join(work, `data-cold-${round}`) : warmDir);
    log(`round ${round + 1}: ${arm} ${Math.round(ms)} ms`);
    return ms;
  });

  const msf = (ms) => `${Math.round(ms)} ms`;
  const x = (r) => `${r.toFixed(2)}×`;
  const machine = await machineInfo(root);
  const row = (label, runs) => `| ${label} | ${formatSummary(summarize(runs), msf)} | ${runs === floors ? '' : formatSummary(pairedRatio(runs, floors), x)} |`;
  const section = [
    '## Ingest: the worker alone (`npm run bench:ingest`)',
    '',
    `Run ${machine.date}, commit \`${machine.commit}\`, ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}.`,
    '',
    `A 1,000-file, ~50 MB site (40% text, 60% incompressible images by bytes; its .tar.gz ${(archiveBytes / 1e6).toFixed(1)} MB) unpacked by the ingest pool (one worker thread, called in-process: no HTTP, no LMDB commit) after one untimed warm-up unpack, against the floor of \`tar xzf\` + \`sha256sum\` of every file. ${rounds} rounds, each measuring the three arms once in an order rotated each round, after a \`sync\`; medians of the rounds with their range, and "÷ floor" taken within each round, then its median.`,
    '',
    '| Arm | Time, median (range) | ÷ floor, median of rounds (range) |',
    '|---|--:|--:|',
    row('floor: tar xzf + sha256sum', floors),
    row('unpack into a fresh store (every blob new)', cold),
    row('unpack again into a store holding every blob (a redeploy)', redeploy),
    '',
    '```',
    `${process.env.BENCH_ROUNDS ? `BENCH_ROUNDS=${rounds} ` : ''}npm run bench:ingest`,
    '```',
  ].join('\n');
  publishSection(section, 'ingest');
} finally {
  await pool.close();
  rmSync(work, { recursive: true, force: true });
}
