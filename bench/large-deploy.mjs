// Large-site deploy benchmark (issue 22): a site of incompressible files, larger than one
// request, published by the real client (`plinth deploy`: a manifest, then parts of 16 MB, three
// at a time) against a server with its default settings. Reports the wall-clock time against a
// floor that only reads and hashes the same bytes once (`tar cf - <dir> | sha256sum`), and the
// peak resident memory of the client and the server for two site sizes, to show it does not grow
// with the site. Each round writes a new site (content the store has never seen) and measures the
// floor and the deploy on it, in an order that alternates by round; the ratio is taken within each
// round and its median reported (see lib/rounds.mjs). Writes the large-site section of RESULTS.md.
// About 3 min for the defaults.
//
// BENCH_LARGE_MB (default 300) sets the larger size; the smaller is a third of it.
// BENCH_LARGE_ROUNDS (default 5) sets the rounds per size.
import { execSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { freePort, startChild, stopChild, waitReady } from './lib/proc.mjs';
import { adminBuilderToken } from './lib/plinth-node.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(root, 'bench', '.work', 'large');
const PLINTH = join(root, 'dist', 'cli', 'plinth.js');
const MB = 1024 * 1024;
const largeMb = Number(process.env.BENCH_LARGE_MB ?? 300);
const rounds = Number(process.env.BENCH_LARGE_ROUNDS ?? 5);
const FILE_BYTES = 500 * 1024;
const log = (msg) => process.stdout.write(`[large-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** Random (incompressible) media files, as a photo or video site has them, and an index page. */
function writeLargeSite(dir, bytes) {
  const kinds = ['jpg', 'png', 'webp', 'mp4'];
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.html'), `<h1>${bytes} bytes</h1>`);
  const files = Math.ceil(bytes / FILE_BYTES);
  for (let i = 0; i < files; i++) {
    const folder = join(dir, 'media', String(i % 16));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `f${i}.${kinds[i % kinds.length]}`), randomBytes(FILE_BYTES));
  }
  return files + 1;
}

function rssOf(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `plinth deploy`, timed, with the client's and the server's peak RSS sampled every 50 ms. */
async function deploy(dir, env, serverPid) {
  const started = process.hrtime.bigint();
  let clientPeak = 0;
  let serverPeak = 0;
  await new Promise((resolve, reject) => {
    const run = spawn(process.execPath, [PLINTH, 'deploy', dir], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const sampler = setInterval(() => {
      clientPeak = Math.max(clientPeak, rssOf(run.pid));
      serverPeak = Math.max(serverPeak, rssOf(serverPid));
    }, 50);
    run.on('error', reject);
    run.on('exit', (code) => {
      clearInterval(sampler);
      if (code === 0) resolve();
      else reject(new Error(`plinth deploy exited with ${code}`));
    });
  });
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, clientPeak, serverPeak };
}

/** The floor: read every byte once and hash it, as `tar` and `sha256sum` do (files in the page cache, as for the deploy). */
function floorMs(dir) {
  const started = process.hrtime.bigint();
  execSync(`tar cf - -C ${JSON.stringify(dir)} . | sha256sum > /dev/null`, { shell: '/bin/bash' });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const port = await freePort();
const dataDir = join(work, 'data');
const serverEnv = {
  PLINTH_PORT: String(port),
  PLINTH_DATA_DIR: dataDir,
  PLINTH_LOG_LEVEL: 'warn',
  PLINTH_LISTEN_HOST: '127.0.0.1',
  PLINTH_SWEEP_INTERVAL_S: '0',
};
const child = startChild(process.execPath, [join(root, 'dist', 'main.js')], { env: serverEnv, cwd: root, logPath: join(work, 'plinth.log') });
try {
  await waitReady(child, port, 'localhost', '/');
  const token = adminBuilderToken(root, dataDir);
  const clientEnv = { ...process.env, PLINTH_API_URL: `http://api.localhost:${port}`, PLINTH_TOKEN: token };

  const rows = [];
  for (const mb of [Math.round(largeMb / 3), largeMb]) {
    const sites = [];
    for (let round = 0; round < rounds; round++) {
      const site = join(work, `site-${mb}-${round}`);
      log(`round ${round + 1}: writing a ${mb} MB site of random ${FILE_BYTES / 1024} KB files`);
      sites.push({ dir: site, files: writeLargeSite(site, mb * MB) });
    }
    // Written out before either arm runs: the deploy's sync of the blob filesystem must not also
    // write the sites the bench just made (the floor never syncs), which skewed earlier runs.
    execSync('sync');
    const runs = [];
    const [floors, deploys] = await runRounds(['floor', 'deploy'], rounds, async (arm, round) => {
      if (arm === 'floor') {
        const ms = floorMs(sites[round].dir);
        log(`${mb} MB round ${round + 1}: floor (tar | sha256sum) ${Math.round(ms)} ms`);
        return ms;
      }
      const run = await deploy(sites[round].dir, clientEnv, child.pid);
      log(
        `${mb} MB round ${round + 1}: plinth deploy ${Math.round(run.ms)} ms, client peak ${Math.round(run.clientPeak / MB)} MB, server peak ${Math.round(run.serverPeak / MB)} MB`,
      );
      runs.push(run);
      return run.ms;
    });
    for (const site of sites) rmSync(site.dir, { recursive: true, force: true });
    rows.push({
      mb,
      files: sites[0].files,
      floor: summarize(floors),
      deploy: summarize(deploys),
      ratio: pairedRatio(deploys, floors),
      clientPeak: Math.max(...runs.map((run) => run.clientPeak)),
      serverPeak: Math.max(...runs.map((run) => run.serverPeak)),
    });
  }

  const machine = await machineInfo(root);
  const large = rows.at(-1);
  const growth = large.clientPeak / rows[0].clientPeak;
  const serverGrowth = large.serverPeak / rows[0].serverPeak;
  const ms = (v) => `${Math.round(v)} ms`;
  const x = (v) => `${v.toFixed(2)}×`;
  const section = [
    '## Large sites in parts (`npm run bench:deploy`, large-site part)',
    '',
    `Run ${machine.date}, commit \`${machine.commit}\`, ${machine.cores} cores, Node ${machine.node}.`,
    '',
    `A first deploy of a site of random (incompressible) ${FILE_BYTES / 1024} KB media files, larger than one request, by the real client (\`plinth deploy\`: a manifest, then parts of 16 MB, three at a time), to a server with its default settings on the same machine. The floor reads and hashes the same bytes once: \`tar cf - . | sha256sum\`. The sites are written and synced to disk before the rounds, so both arms read them from the page cache and the deploy's sync writes only its own blobs. ${rounds} rounds per size, each on a new site, the floor and the deploy in an order that alternates by round; medians with their range, the ratio taken within each round. Peak RSS is sampled every 50 ms, the highest of the rounds.`,
    '',
    '| Site | Files | Floor (tar \\| sha256sum) | `plinth deploy` | Ratio | Client peak RSS | Server peak RSS |',
    '|--:|--:|--:|--:|--:|--:|--:|',
    ...rows.map(
      (row) =>
        `| ${row.mb} MB | ${row.files} | ${formatSummary(row.floor, ms)} | ${formatSummary(row.deploy, ms)} | ${formatSummary(row.ratio, x)} | ${Math.round(row.clientPeak / MB)} MB | ${Math.round(row.serverPeak / MB)} MB |`,
    ),
    '',
    '| Target | Value | Verdict |',
    '|---|--:|:-:|',
    `| ${large.mb} MB within 1.3× of the floor | ${x(large.ratio.median)} | ${large.ratio.median <= 1.3 ? 'met' : 'NOT met'} |`,
    `| Client memory does not grow with the site (${rows[0].mb} → ${large.mb} MB) | ${growth.toFixed(2)}× | ${growth < 1.5 ? 'met' : 'NOT met'} |`,
    `| Server memory does not grow with the site (${rows[0].mb} → ${large.mb} MB) | ${serverGrowth.toFixed(2)}× | ${serverGrowth < 1.5 ? 'met' : 'NOT met'} |`,
    '',
  ].join('\n');
  publishSection(section, 'large');
} finally {
  await stopChild(child, 35_000);
  rmSync(work, { recursive: true, force: true });
}
