// What one commit to the cluster's records costs, two builds side by side: the records log
// (src/store/records-log.ts) of each build commits the same small changes, one after another, to
// its own database of one private PostgreSQL on loopback; wall time per commit, this process's
// CPU and that of the PostgreSQL backends serving its database. Arms alternate in rotated order every round (lib/rounds.mjs); figures are
// medians of the rounds with their range. A one-file JSON deploy's commit writes a handful of
// records, so that is the default.
//
// Env: COMMIT_BUILDS (checkouts whose dist/ to compare, comma-separated; default /work/main and
//      this one), COMMIT_COUNT (commits per arm and round, 200), COMMIT_WRITES (records per
//      commit, 4), COMMIT_ROUNDS (6), COMMIT_AHEAD (1: each commit prepared ahead, as a deploy's is
//      while its last pack goes up, and handed to the commit; default off), COMMIT_LATENCY_MS (one
//      way, added to every read and write between the logs and PostgreSQL by a forwarder, as a
//      database on another machine adds; default 0: none). Needs `npm run build` in each checkout.
import net from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { startPostgres } from './lib/postgres.mjs';
import { cpuTimeMs } from './lib/proc.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';

const here = fileURLToPath(new URL('..', import.meta.url));
const builds = (process.env.COMMIT_BUILDS ?? `/work/main,${here}`)
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const count = Number(process.env.COMMIT_COUNT ?? 200);
const writesPerCommit = Number(process.env.COMMIT_WRITES ?? 4);
const rounds = Number(process.env.COMMIT_ROUNDS ?? 6);
const ahead = process.env.COMMIT_AHEAD === '1';
const latencyMs = Number(process.env.COMMIT_LATENCY_MS ?? 0);

const pg = await startPostgres();

/** A forwarder to PostgreSQL that holds each chunk `latencyMs` before passing it on, in order. */
async function delayed(port) {
  const later = (from, to) => from.on('data', (chunk) => setTimeout(() => to.write(chunk), latencyMs));
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    later(client, upstream);
    later(upstream, client);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      a.on('error', () => b.destroy());
      a.on('close', () => setTimeout(() => b.destroy(), latencyMs));
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const forwarder = latencyMs > 0 ? await delayed(pg.port) : undefined;
const through = (url) => (forwarder === undefined ? url : url.replace(`:${pg.port}/`, `:${forwarder.address().port}/`));

const logs = [];
for (const [i, build] of builds.entries()) {
  const { openRecordsLog } = await import(join(build, 'dist/store/records-log.js'));
  const database = `commit_${i}`;
  const url = through(await pg.createDatabase(database));
  logs.push({ build, database, log: await openRecordsLog({ url, maxConnections: 2, origin: `bench-${i}` }), applied: 0, next: 0 });
}
// Which backends serve an arm's database (its log's connections), to count their CPU alone.
const pgClient = createRequire(import.meta.url)('pg');
const watcher = new pgClient.Client({ connectionString: pg.url });
await watcher.connect();
const backendsOf = async (database) =>
  (await watcher.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rows.map((row) => row.pid);
const backendCpuMs = (pids) => pids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0);

/** A site's records as a deploy touches them: a few hundred bytes each, new keys and one rewritten. */
function writesOf(arm) {
  const n = arm.next++;
  return Array.from({ length: writesPerCommit }, (_, k) => [
    'sites',
    k === 0 ? ['bench', 'site'] : ['bench', n, k],
    { n, k, name: `page-${n}-${k}.html`, sha256: 'ab'.repeat(32), size: 2048, type: 'text/html; charset=utf-8', at: Date.now() },
  ]);
}

async function measure(index) {
  const arm = logs[index];
  const backends = await backendsOf(arm.database);
  const pgBefore = backendCpuMs(backends);
  const before = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const prepared = () => ({ result: undefined, writes: writesOf(arm) });
    const { change } = await arm.log.commit(
      async () => undefined,
      () => arm.applied,
      prepared,
      undefined,
      ahead ? arm.log.prepareAhead(arm.applied, prepared()) : undefined,
    );
    arm.applied = change.seq;
  }
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  return {
    wallMs: wallMs / count,
    clientMs: (used.user + used.system) / 1000 / count,
    postgresMs: (backendCpuMs(backends) - pgBefore) / count,
  };
}

const arms = logs.map((_, i) => i);
await runRounds(arms, 1, measure); // warm-up: connections, JIT, the tables' first pages
const results = await runRounds(arms, rounds, measure);
const ms = (v) => `${v.toFixed(3)} ms`;
console.log(
  `${count} commits of ${writesPerCommit} records per arm and round, one at a time${ahead ? ', each prepared ahead' : ''}${latencyMs > 0 ? `, ${latencyMs} ms each way to PostgreSQL` : ''}, ${rounds} rounds; medians (range)`,
);
console.log('| Build | Wall time per commit | This process CPU per commit | PostgreSQL CPU per commit |');
console.log('|---|--:|--:|--:|');
for (const [i, arm] of logs.entries()) {
  const r = results[i];
  console.log(
    `| ${arm.build} | ${formatSummary(summarize(r.map((x) => x.wallMs)), ms)} | ${formatSummary(summarize(r.map((x) => x.clientMs)), ms)} | ${formatSummary(summarize(r.map((x) => x.postgresMs)), ms)} |`,
  );
}
for (let i = 1; i < logs.length; i++) {
  const ratio = pairedRatio(
    results[i].map((x) => x.wallMs),
    results[0].map((x) => x.wallMs),
  );
  console.log(`${logs[i].build} ÷ ${logs[0].build}, wall time per commit, median of rounds: ${formatSummary(ratio, (v) => `${v.toFixed(2)}×`)}`);
}
for (const { log } of logs) await log.close();
await watcher.end();
forwarder?.close();
await pg.stop();
