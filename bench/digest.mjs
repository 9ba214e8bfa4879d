// Digest redeploy benchmark (issue 11): a 1,000-file / 50 MB site redeployed with one changed
// file by the real client (`plinth deploy`), against a full redeploy of the same folder
// (`plinth deploy --full`). Bytes are counted on the wire by a loopback proxy between the client
// and the server; times are the client's wall clock. Writes the digest section of RESULTS.md.
//
// What is compared, and how: full against digest redeploys on one server, one of each per round
// (BENCH_DIGEST_ROUNDS, default 3), in an order that alternates each round (see lib/rounds.mjs);
// the time ratio is taken within each round, then its median reported. About 1 min.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopChild, waitReady } from './lib/proc.mjs';
import { adminBuilderToken } from './lib/plinth-node.mjs';
import { machineInfo, publishSection } from './lib/report.mjs';
import { text, writeSite } from './lib/site-gen.mjs';
import { tarGz } from './lib/archive.mjs';
import { formatSummary, median, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const work = join(root, 'bench', '.work', 'digest');
const rounds = Number(process.env.BENCH_DIGEST_ROUNDS ?? 3);
const FILES = 1000;
const BYTES = 50 * 1024 * 1024;
const PLINTH = join(root, 'dist', 'cli', 'plinth.js');
const log = (msg) => process.stdout.write(`[digest-bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** A TCP proxy on loopback that counts the bytes the client sends. */
function countingProxy(targetPort) {
  let sent = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    client.on('data', (chunk) => {
      sent += chunk.length;
    });
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        take() {
          const value = sent;
          sent = 0;
          return value;
        },
        close: () => new Promise((done) => server.close(done)),
      }),
    );
  });
}

/** Runs `plinth deploy`; asynchronously, since the counting proxy lives in this process. */
async function deploy(dir, env, args = []) {
  const started = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    const run = spawn(process.execPath, [PLINTH, 'deploy', dir, ...args], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    run.on('error', reject);
    run.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`plinth deploy exited with ${code}`))));
  });
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
let proxy;
try {
  await waitReady(child, port, 'localhost', '/');
  proxy = await countingProxy(port);
  const token = adminBuilderToken(root, dataDir);
  // The client talks to the proxy; the Host header still names the API host.
  const clientEnv = { ...process.env, PLINTH_API_URL: `http://api.localhost:${proxy.port}`, PLINTH_TOKEN: token };

  const site = join(work, 'site');
  log(`writing a ${FILES}-file, ${BYTES / 1024 / 1024} MB site`);
  writeSite(site, FILES, BYTES, 42);
  const archiveBytes = statSync(tarGz(site, join(work, 'site.tar.gz'))).size;

  await deploy(site, clientEnv);
  proxy.take();
  // One changed page before every deploy (an even seed before a full one, odd before a digest
  // one), so each publishes something new whichever goes first.
  const [full, digest] = await runRounds(['full', 'digest'], rounds, async (kind, round) => {
    writeFileSync(join(site, 'pages', 'f3.html'), text(20_000, 1000 + round * 2 + (kind === 'digest' ? 1 : 0), 'html'));
    const ms = await deploy(site, clientEnv, kind === 'full' ? ['--full'] : []);
    const bytes = proxy.take();
    log(`round ${round + 1}: ${kind} ${Math.round(ms)} ms / ${bytes} B`);
    return { ms, bytes };
  });

  const msCell = (runs) => formatSummary(summarize(runs.map((r) => r.ms)), (ms) => `${Math.round(ms)} ms`);
  const digestBytes = median(digest.map((r) => r.bytes));
  const byteShare = digestBytes / archiveBytes;
  const timeShare = pairedRatio(
    digest.map((r) => r.ms),
    full.map((r) => r.ms),
  );
  const machine = await machineInfo(root);
  const load = (await import('node:os'))
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(', ');
  const section = [
    '## Digest redeploys (`npm run bench:deploy`, digest part)',
    '',
    `Run ${machine.date}, commit \`${machine.commit}\`, ${machine.cores} cores, Node ${machine.node}, load average at the end ${load}.`,
    '',
    `A ${FILES}-file, ${BYTES / 1024 / 1024} MB site (its .tar.gz: ${(archiveBytes / 1024 / 1024).toFixed(1)} MB) is redeployed with one changed 20 KB page by the real client, \`plinth deploy\`, with the default settings: once with \`--full\` (the whole folder as one archive) and once as a digest deploy (a manifest of sizes and sha256, then only the missing content). Bytes are what the client sent, counted on the wire by a loopback proxy (request headers and the manifest included); times are the client's wall clock, reading and hashing the folder included. ${rounds} rounds, each with one full and one digest redeploy in an order that alternates each round; medians of the rounds, and the time ratio taken within each round, then its median (range in brackets).`,
    '',
    '| Redeploy | Time, median (range) | Bytes sent, median | Share of the archive |',
    '|---|--:|--:|--:|',
    `| \`plinth deploy --full\` | ${msCell(full)} | ${median(full.map((r) => r.bytes)).toLocaleString('en-US')} | ${((median(full.map((r) => r.bytes)) / archiveBytes) * 100).toFixed(1)} % |`,
    `| \`plinth deploy\` (digest) | ${msCell(digest)} | ${digestBytes.toLocaleString('en-US')} | ${(byteShare * 100).toFixed(2)} % |`,
    '',
    `| Target | Value | Verdict |`,
    '|---|--:|:-:|',
    `| Digest sends < 2 % of the archive's bytes | ${(byteShare * 100).toFixed(2)} % | ${byteShare < 0.02 ? 'met' : 'NOT met'} |`,
    `| Digest takes < 0.2× a full deploy's time (median of rounds) | ${formatSummary(timeShare, (r) => `${r.toFixed(3)}×`)} | ${timeShare.median < 0.2 ? 'met' : 'NOT met'} |`,
    '',
  ].join('\n');
  publishSection(section, 'digest');
} finally {
  await proxy?.close();
  await stopChild(child, 35_000);
}
