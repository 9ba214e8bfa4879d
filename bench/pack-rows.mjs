// What a cluster deploy's pack rows cost, written two ways by this build's records log
// (src/store/records-log.ts, bucket-packs.ts), side by side: "after each pack", an insert of each
// pack's rows (32 at a time) and then the deploy's commit, as a deploy did before; "with the
// commit", the same rows as one part of the commit's statement, as a deploy does now. Each
// arm has its own database of one private PostgreSQL on loopback; per deploy: wall time, this
// process's CPU and that of the PostgreSQL backends serving its database, and the wall time of the
// commit alone (in a deploy the inserts after each pack overlap the unpack; the commit does not). Arms alternate in
// rotated order every round (lib/rounds.mjs); figures are medians of the rounds with their range.
//
// Env: PACK_ROWS_FILES (files per deploy: records and pack rows, 1000), PACK_ROWS_PER_PACK (32),
//      PACK_ROWS_DEPLOYS (deploys per arm and round, 20), PACK_ROWS_ROUNDS (6). Needs `npm run build`.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { startPostgres } from './lib/postgres.mjs';
import { cpuTimeMs } from './lib/proc.mjs';
import { formatSummary, pairedRatio, runRounds, summarize } from './lib/rounds.mjs';

const { openRecordsLog } = await import('../dist/store/records-log.js');
const files = Number(process.env.PACK_ROWS_FILES ?? 1000);
const perPack = Number(process.env.PACK_ROWS_PER_PACK ?? 32);
const deploys = Number(process.env.PACK_ROWS_DEPLOYS ?? 20);
const rounds = Number(process.env.PACK_ROWS_ROUNDS ?? 6);

const pg = await startPostgres();
const arms = [];
for (const name of ['after each pack', 'with the commit']) {
  const database = `packrows_${arms.length}`;
  const url = await pg.createDatabase(database);
  arms.push({ name, database, log: await openRecordsLog({ url, maxConnections: 2, origin: `bench-${arms.length}` }), applied: 0, next: 0 });
}
const pgClient = createRequire(import.meta.url)('pg');
const watcher = new pgClient.Client({ connectionString: pg.url });
await watcher.connect();
const backendsOf = async (database) =>
  (await watcher.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])).rows.map((row) => row.pid);
const backendCpuMs = (pids) => pids.reduce((sum, pid) => sum + cpuTimeMs(pid), 0);

/** One new site's file records and its blobs' pack rows, as a deploy of `files` new small files makes them. */
function deployOf(arm) {
  const n = arm.next++;
  const at = Date.now();
  const writes = [];
  const packs = [];
  let pack;
  for (let i = 0; i < files; i++) {
    if (i % perPack === 0) packs.push((pack = { key: `packs/${randomUUID()}`, rows: [] }));
    const sha256 = `${n.toString(16).padStart(8, '0')}${i.toString(16).padStart(8, '0')}`.repeat(4);
    const offset = (i % perPack) * 52_000;
    pack.rows.push({ key: `blobs/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`, pack: pack.key, offset, size: 52_000, touchedMs: at });
    writes.push(['paths', ['rev', n, `f${i}.html`], { sha256, size: 52_000, type: 'text/html; charset=utf-8', pack: { key: pack.key, offset } }]);
  }
  return { writes, packs };
}

async function measure(index) {
  const arm = arms[index];
  const backends = await backendsOf(arm.database);
  const pgBefore = backendCpuMs(backends);
  const before = process.cpuUsage();
  const started = performance.now();
  let commitMs = 0;
  for (let i = 0; i < deploys; i++) {
    const { writes, packs } = deployOf(arm);
    const withCommit = arm.name === 'with the commit';
    if (!withCommit) for (const { rows } of packs) await arm.log.bucketLedger.packs.record(rows);
    const alongside = withCommit ? { packRows: { rows: packs.flatMap((p) => p.rows), check: () => undefined } } : undefined;
    const commitStarted = performance.now();
    const { change } = await arm.log.commit(
      async () => undefined,
      () => arm.applied,
      () => ({ result: undefined, writes }),
      alongside,
    );
    commitMs += performance.now() - commitStarted;
    arm.applied = change.seq;
  }
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(before);
  return {
    wallMs: wallMs / deploys,
    commitMs: commitMs / deploys,
    clientMs: (used.user + used.system) / 1000 / deploys,
    postgresMs: (backendCpuMs(backends) - pgBefore) / deploys,
  };
}

const order = arms.map((_, i) => i);
await runRounds(order, 1, measure); // warm-up: connections, JIT, the tables' first pages
const results = await runRounds(order, rounds, measure);
const ms = (v) => `${v.toFixed(2)} ms`;
console.log(`${deploys} deploys of ${files} files (pack rows ${perPack} a pack) per arm and round, ${rounds} rounds; per deploy, medians (range)`);
console.log('| Pack rows | Wall time | The commit alone (wall) | This process CPU | PostgreSQL CPU |');
console.log('|---|--:|--:|--:|--:|');
for (const [i, arm] of arms.entries()) {
  const r = results[i];
  const cell = (key) => formatSummary(summarize(r.map((x) => x[key])), ms);
  console.log(`| ${arm.name} | ${cell('wallMs')} | ${cell('commitMs')} | ${cell('clientMs')} | ${cell('postgresMs')} |`);
}
const ratio = (key) =>
  formatSummary(
    pairedRatio(
      results[1].map((x) => x[key]),
      results[0].map((x) => x[key]),
    ),
    (v) => `${v.toFixed(2)}×`,
  );
console.log(
  `with the commit ÷ after each pack, per round: wall ${ratio('wallMs')}, the commit alone ${ratio('commitMs')}, this process CPU ${ratio('clientMs')}, PostgreSQL CPU ${ratio('postgresMs')}`,
);
for (const { log } of arms) await log.close();
await watcher.end();
await pg.stop();
