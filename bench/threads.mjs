// Thread scaling (issue 11): how Plinth's throughput grows with PLINTH_THREADS on a given number
// of cores, next to nginx and the bare uWS ceiling on the same cores. Writes the threads section
// of bench/RESULTS.md.
//
// What is compared, and how: per machine shape, Plinth at each thread count, nginx (1 worker and
// one per core) and the ceiling, all started side by side by one run of bench/serve.mjs, which
// visits each in turn every round in a rotated order (see lib/rounds.mjs). Each figure is the
// median of the rounds with their range; "÷ best nginx" and "% of ceiling" are taken within each
// round, then their median. The shapes run one after the other: each is its own machine (other
// pinning, another default thread count), and figures are only compared within a shape.
//
// Machine shapes on this host: 1 core (servers pinned to CPU 0 with taskset, wrk on CPU 1) and
// all cores (servers and wrk share them, as in bench:serve). taskset can only take cores away, so
// larger machines cannot be simulated here.
//
// Env: THREADS_SCENARIOS (page2k,image200k), and bench:serve's BENCH_DURATION (2), BENCH_ROUNDS
// (5), BENCH_WARMUP (1). Defaults: 20 cells, 5 rounds of 2 s after a 1 s warm-up pass, about 4 min.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCapture } from './lib/proc.mjs';
import { machineInfo, publishSection, summarizeCells } from './lib/report.mjs';
import { formatSummary } from './lib/rounds.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, '..');
const cores = os.availableParallelism();
const scenarios = (process.env.THREADS_SCENARIOS ?? 'page2k,image200k').split(',');
const log = (msg) => process.stdout.write(`[threads ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const shapes = [
  { cores: 1, env: { BENCH_SERVER_CPUS: '0', BENCH_LOADGEN_CPUS: String(cores - 1) }, threads: [1, 2], nginx: '1' },
  { cores, env: {}, threads: [...new Set([1, Math.max(1, cores - 1), cores, cores + 1])], nginx: `1,${cores}` },
  // Pinning needs a spare core for wrk.
].filter((shape) => shape.env.BENCH_SERVER_CPUS === undefined || cores > 1);

async function measure(shape) {
  const env = {
    ...process.env,
    ...shape.env,
    BENCH_TARGETS: 'plinth,nginx,ceiling',
    BENCH_LOADGENS: 'wrk',
    BENCH_SCENARIOS: scenarios.join(','),
    BENCH_PLINTH_THREADS: shape.threads.join(','),
    BENCH_NGINX_WORKERS: shape.nginx,
    BENCH_SITES: '100',
    BENCH_PAGES: '100',
    BENCH_NO_WRITE: '1',
  };
  log(`${shape.cores} core(s): Plinth with ${shape.threads.join(', ')} threads, nginx with ${shape.nginx} worker(s), the ceiling`);
  const { code, stdout, stderr } = await runCapture(process.execPath, [join(benchDir, 'serve.mjs')], { env, cwd: root });
  for (const line of stdout.split('\n')) if (line.includes('req/s') || line.includes('round ')) log(line.replace(/^\[bench [^\]]*\]\s*/, ''));
  if (code !== 0) throw new Error(`serve.mjs failed:\n${stderr || stdout}`);
  return JSON.parse(readFileSync(join(benchDir, '.work', 'serve-results.json'), 'utf8'));
}

const k = (n) => `${(n / 1000).toFixed(1)}k`;
const msf = (n) => `${n.toFixed(1)} ms`;
const x = (r) => `${r.toFixed(2)}×`;
const pct = (r) => `${(100 * r).toFixed(0)}%`;
const FILES = { page2k: '2 KB page', image200k: '200 KB image' };

async function main() {
  const machine = await machineInfo(root);
  const rows = [];
  let rounds = 0;
  for (const shape of shapes) {
    const raw = await measure(shape);
    rounds = raw.cfg.rounds;
    const cells = summarizeCells(raw.samples).wrk;
    for (const sc of scenarios) {
      const cell = cells[sc];
      for (const [id, c] of Object.entries(cell.byTarget)) {
        // Of the nginx runs only the better one (by median) is listed, as the ratios use the better one of each round.
        if (id.startsWith('nginx') && id !== cell.bestNginx) continue;
        rows.push(
          `| ${shape.cores} | ${FILES[sc] ?? sc} | ${raw.labels[id]} | ${formatSummary(c.rps, k)} | ${formatSummary(c.p99, msf)} | ${c.vsNginx ? formatSummary(c.vsNginx, x) : ''} | ${c.ofCeiling ? formatSummary(c.ofCeiling, pct) : ''} |`,
        );
      }
    }
  }
  const section = [
    '## Threads: throughput from 1 to N HTTP threads',
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, nginx ${machine.nginx}, ${machine.wrk}; commit ${machine.commit}; ${machine.date.slice(0, 16).replace('T', ' ')} UTC. Command: \`npm run bench:threads\`.`,
    '',
    `wrk -t1 -c64. Per machine shape, Plinth at each thread count, nginx and the bare uWS ceiling run side by side; after a warm-up pass, each of ${rounds} rounds measures every server once per file, in an order rotated each round. Figures are the median of the rounds with their range in brackets; "÷ best nginx" and "% of ceiling" are taken within each round (the better nginx of that round), then their median. "1 core": servers pinned to CPU 0 with taskset and wrk to another core, a one-core server with an outside load generator. "${cores} cores": everything shares all cores, as in the serve section.`,
    '',
    '| Cores | File | Server | req/s, median (range) | p99, median (range) | ÷ best nginx, median of rounds (range) | % of ceiling, median of rounds (range) |',
    '|--:|---|---|--:|--:|--:|--:|',
    ...rows,
    '',
    'Machines with 4 and 8 cores cannot be simulated here: taskset only takes cores away.',
  ].join('\n');
  publishSection(section, 'threads');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
