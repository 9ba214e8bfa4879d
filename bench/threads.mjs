// Thread scaling (issue 11): how Plinth's throughput grows with PLINTH_THREADS on a given number
// of cores, next to nginx on the same cores, in one run. Runs bench/serve.mjs once per machine
// shape (BENCH_NO_WRITE, all Plinth thread counts side by side) and writes the threads section of
// bench/RESULTS.md.
//
// Machine shapes on this host: 1 core (servers pinned to CPU 0 with taskset, wrk on CPU 1) and
// all cores (servers and wrk share them, as in bench:serve). taskset can only take cores away, so
// larger machines cannot be simulated here.
//
// Env: THREADS_SCENARIOS (page2k,image200k), BENCH_DURATION (8), BENCH_ROUNDS (1).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCapture } from './lib/proc.mjs';
import { bestNginx, machineInfo, writeResultsFile } from './lib/report.mjs';

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
    BENCH_TARGETS: 'plinth,nginx',
    BENCH_LOADGENS: 'wrk',
    BENCH_SCENARIOS: scenarios.join(','),
    BENCH_PLINTH_THREADS: shape.threads.join(','),
    BENCH_NGINX_WORKERS: shape.nginx,
    BENCH_SITES: '100',
    BENCH_PAGES: '100',
    BENCH_NO_WRITE: '1',
  };
  log(`${shape.cores} core(s): Plinth with ${shape.threads.join(', ')} threads, nginx with ${shape.nginx} worker(s)`);
  const { code, stdout, stderr } = await runCapture(process.execPath, [join(benchDir, 'serve.mjs')], { env, cwd: root });
  for (const line of stdout.split('\n')) if (line.includes('req/s')) log(line.replace(/^\[bench [^\]]*\]\s*/, ''));
  if (code !== 0) throw new Error(`serve.mjs failed:\n${stderr || stdout}`);
  return JSON.parse(readFileSync(join(benchDir, '.work', 'serve-results.json'), 'utf8'));
}

const median = (runs) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor((runs.length - 1) / 2)];
const k = (n) => `${(n / 1000).toFixed(1)}k`;

async function main() {
  const machine = await machineInfo(root);
  const rows = [];
  for (const shape of shapes) {
    const raw = await measure(shape);
    for (const sc of scenarios) {
      const byTarget = Object.fromEntries(Object.entries(raw.samples.wrk[sc]).map(([id, runs]) => [id, median(runs)]));
      const best = bestNginx(byTarget);
      const plinth = shape.threads.map((n, i) => ({ n, r: byTarget[i === 0 ? 'plinth' : `plinth-${n}`] }));
      rows.push(`| ${shape.cores} | ${sc === 'page2k' ? '2 KB page' : sc === 'image200k' ? '200 KB image' : sc} | ${plinth.map(({ n, r }) => `${n}: ${k(r.rps)} (p99 ${r.p99.toFixed(1)} ms)`).join('; ')} | ${best ? `${k(best.rps)} (${best.target.replace('nginx-', '')} worker${best.target.endsWith('-1') ? '' : 's'}, p99 ${best.p99.toFixed(1)} ms)` : '–'} |`);
    }
  }
  const section = [
    '## Threads: throughput from 1 to N HTTP threads',
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, nginx ${machine.nginx}, ${machine.wrk}; commit ${machine.commit}; ${machine.date.slice(0, 16).replace('T', ' ')} UTC. Command: \`npm run bench:threads\`.`,
    '',
    `wrk -t1 -c64 against each server in turn, Plinth with each thread count side by side in one run. "1 core": servers pinned to CPU 0 with taskset and wrk to another core, a one-core server with an outside load generator. "${cores} cores": everything shares all cores, as in the serve section. Requests per second, with p99.`,
    '',
    '| Cores | File | Plinth, by HTTP threads | Best nginx |',
    '|--:|---|---|---|',
    ...rows,
    '',
    'Machines with 4 and 8 cores cannot be simulated here: taskset only takes cores away.',
  ].join('\n');
  console.log(`\n${section}\n`);
  writeResultsFile(join(benchDir, 'RESULTS.md'), section, 'threads');
  log('wrote bench/RESULTS.md (threads section)');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
