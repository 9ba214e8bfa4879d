// Deploys of several builds side by side (issue 35 §4): a 1 MB site against the `tar | sha256sum`
// floor, and the 1,000-file site with and without links (the link check's share of the deploy).
// Each build runs one server on a data directory of its own; every round deploys a new archive
// to each, and unpacks it once for the floor, in an order rotated each round (lib/rounds.mjs).
//
//   node bench/deploy-ab.mjs <root> [<root>…]   # built checkouts (dist/), this one last by default
//   <root>::NAME=value[,NAME=value]               # that build with settings of its own (e.g. PLINTH_COMPRESS_BEFORE_PUBLISH_KB=0)
//   BENCH_AB_SMALL (default 9) rounds of the 1 MB site, BENCH_AB_LINKS (default 3) of each large site
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { floorMs, tarGz } from './lib/archive.mjs';
import { cpuNsBetween, readMemory, stopChild, threadCpuNs } from './lib/proc.mjs';
import { adminBuilderToken, startPlinthNode } from './lib/plinth-node.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';
import { addLinks, writeSite } from './lib/site-gen.mjs';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const builds = process.argv.slice(2).map((arg) => {
  const [path, settings] = arg.split('::');
  return {
    root: resolve(path),
    env: Object.fromEntries(
      (settings ?? '')
        .split(',')
        .filter(Boolean)
        .map((pair) => pair.split('=')),
    ),
  };
});
if (builds.length === 0) throw new Error('usage: node bench/deploy-ab.mjs <root>[::NAME=value,…] [<root>…]');
if (builds.length === 1) builds.push({ root: here, env: {} });
const work = join(here, 'bench', '.work', 'deploy-ab');
const smallRounds = Number(process.env.BENCH_AB_SMALL ?? 9);
const linkRounds = Number(process.env.BENCH_AB_LINKS ?? 3);
const IDLE_MS = 1500;
const log = (msg) => process.stdout.write(`[deploy-ab ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

function post(port, token, body) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const headers = { host: 'api.localhost', authorization: `Bearer ${token}`, 'content-type': 'application/gzip', 'content-length': body.byteLength };
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/deploy', method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => done({ status: res.statusCode, json: JSON.parse(text), ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

async function startServer(tag, { root, env }) {
  const dataDir = join(work, `data-${tag}`);
  const logPath = join(work, `plinth-${tag}.log`);
  const { port, child } = await startPlinthNode({ root, dataDir, env: { PLINTH_LOG_LEVEL: 'info', ...env }, logPath });
  return { tag, port, token: adminBuilderToken(root, dataDir), child, logPath };
}

function timing(server, revision) {
  const line = readFileSync(server.logPath, 'utf8')
    .split('\n')
    .find((l) => l.includes('deploy.timing') && l.includes(revision));
  return line ? JSON.parse(line) : {};
}

/** Deploys and returns its time at the client, its phases, and the server's CPU up to the answer (all threads). */
async function deploy(server, archive) {
  const cpu = threadCpuNs(server.child.pid);
  const res = await post(server.port, server.token, archive);
  const cpuMs = cpuNsBetween(cpu, threadCpuNs(server.child.pid)) / 1e6;
  if (res.status !== 201) throw new Error(`${server.tag}: deploy failed: ${res.status} ${JSON.stringify(res.json)}`);
  await sleep(100);
  return { ms: res.ms, cpuMs, ...timing(server, res.json.revision.id) };
}

/** A new archive per call: `seed` apart from every other. */
function archive(kind, seed) {
  const dir = join(work, 'site');
  if (kind === 'small') writeSite(dir, 100, 1024 * 1024, seed);
  else writeSite(dir, 1000, 50 * 1024 * 1024, seed);
  if (kind === 'links') addLinks(dir);
  return tarGz(dir, join(work, `${kind}-${seed}.tgz`));
}

const servers = [];
try {
  for (const [i, build] of builds.entries()) servers.push(await startServer(`${i + 1}`, build));
  const settingsOf = (env) =>
    Object.keys(env).length === 0
      ? ''
      : ` (${Object.entries(env)
          .map(([name, value]) => `${name}=${value}`)
          .join(', ')})`;
  log(builds.map((build, i) => `build ${i + 1}: ${build.root}${settingsOf(build.env)}`).join(', '));
  // Warm-up: each server unpacks and checks one site of each kind first (JIT of the ingest threads).
  for (const kind of ['small', 'links']) {
    const path = archive(kind, 1000 + kind.length);
    for (const server of servers) await deploy(server, readFileSync(path));
  }
  // Every archive is made before the first round, then written out, so no round pays for that.
  const smallArchives = Array.from({ length: smallRounds }, (_, round) => archive('small', 200_000 + round * 10_000));
  const largeArchives = Object.fromEntries(
    ['plain', 'links'].map((kind) => [
      kind,
      Array.from({ length: linkRounds }, (_, round) =>
        servers.map((_, s) => archive(kind, 500_000 + round * 20_000 + (kind === 'links' ? 5_000 : 0) + s * 1_000)),
      ),
    ]),
  );
  execFileSync('sync');
  const arms = ['floor', ...servers];
  const small = await runRounds(arms, smallRounds, async (arm, round) => {
    await sleep(IDLE_MS);
    if (arm === 'floor') return floorMs(smallArchives[round], work);
    return deploy(arm, readFileSync(smallArchives[round]));
  });
  const large = {};
  for (const kind of ['plain', 'links']) {
    large[kind] = await runRounds(servers, linkRounds, async (server, round) => {
      await sleep(2 * IDLE_MS);
      return deploy(server, readFileSync(largeArchives[kind][round][servers.indexOf(server)]));
    });
  }
  const ms = (v) => `${v.toFixed(1)} ms`;
  const x = (v) => `${v.toFixed(2)}×`;
  const pct = (v) => `${(v * 100).toFixed(1)} %`;
  log(`1 MB site, floor: ${formatSummary(summarize(small[0]), ms)}`);
  servers.forEach((server, i) => {
    const runs = small[i + 1];
    log(
      `${server.tag}: 1 MB site ${formatSummary(summarize(runs.map((r) => r.ms)), ms)}, ÷ floor ${formatSummary(
        pairedRatio(
          runs.map((r) => r.ms),
          small[0],
        ),
        x,
      )}, CPU ${formatSummary(summarize(runs.map((r) => r.cpuMs)), ms)}, unpack ${formatSummary(summarize(runs.map((r) => r.unpackMs)), ms)}, commit ${formatSummary(summarize(runs.map((r) => r.commitMs)), ms)}`,
    );
    for (const kind of ['plain', 'links']) {
      const r = large[kind][i];
      const share = summarize(r.map((d) => d.analyzeMs / (d.ms - d.analyzeMs)));
      log(
        `${server.tag}: 1,000 files ${kind}: deploy ${formatSummary(summarize(r.map((d) => d.ms)), ms)}, analysis ${formatSummary(summarize(r.map((d) => d.analyzeMs)), ms)}, analysis ÷ rest ${formatSummary(share, pct)}`,
      );
    }
    const withLinks = pairedRatio(
      large.links[i].map((d) => d.ms),
      large.plain[i].map((d) => d.ms),
    );
    log(
      `${server.tag}: 1,000 files, with links ÷ without, per round ${formatSummary(withLinks, x)}; 1 MB deploys ${runs.map((r) => Math.round(r.ms)).join(', ')} ms`,
    );
    log(`${server.tag}: peak RSS (VmHWM) ${(readMemory(server.child.pid).hwm / 2 ** 20).toFixed(0)} MiB`);
  });
  writeFileSync(join(work, 'results.json'), JSON.stringify({ small, large }, null, 1));
} finally {
  for (const server of servers) await stopChild(server.child);
}
