// What PostgreSQL does for one cluster deploy: every statement the node sends up to its `201`,
// with its calls, rows, execution and planning time (pg_stat_statements), and the CPU each
// PostgreSQL process spent (from /proc/<pid>/schedstat, as bench/cluster.mjs counts it), by the
// process's kind (a backend serving the node, or the server's own: WAL writer, checkpointer...).
// One cluster node (`node dist/main.js` of CLUSTER_BUILD, default this checkout) on a private
// PostgreSQL with pg_stat_statements loaded, and s3rver; an untimed deploy first, then
// STATEMENTS_DEPLOYS new sites of bench:deploy's archives (lib/site-gen.mjs), each measured alone,
// with a pause between them so that the previous deploy's work after its `201` is done.
//
// Env: STATEMENTS_FILES (files per archive, 1000: ~50 MB; 100: ~1 MB), STATEMENTS_DEPLOYS (3),
//      STATEMENTS_GAP_S (seconds between two deploys, 4; above 10, pg's default idle timeout
//      closes a node's idle connections between them), CLUSTER_BUILD (a checkout whose dist/ to run). Needs `npm run build` in that checkout.
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { tarGz } from './lib/archive.mjs';
import { addBuilderToken, createClient, deploy, startPlinthNode } from './lib/plinth-node.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { loadContentTypes, openPublisher } from './lib/publish.mjs';
import { stopChild, threadsOf } from './lib/proc.mjs';
import { startS3rver } from './lib/s3rver.mjs';
import { writeSite } from './lib/site-gen.mjs';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const root = process.env.CLUSTER_BUILD ?? join(benchDir, '..');
const files = Number(process.env.STATEMENTS_FILES ?? 1000);
const deploys = Number(process.env.STATEMENTS_DEPLOYS ?? 3);
const gapMs = Number(process.env.STATEMENTS_GAP_S ?? 4) * 1000;
const archiveBytes = files >= 1000 ? 50 * 1024 * 1024 : files >= 100 ? 1024 * 1024 : 64 * 1024;
const work = join(benchDir, '.work', 'cluster-statements');
const pg = createRequire(import.meta.url)('pg');

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const server = await startPostgres();
const s3 = await startS3rver('plinth-statements');
let node;
const connect = async () => {
  const client = new pg.Client({ connectionString: server.url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
};
try {
  // pg_stat_statements must be loaded at start-up: set it, then restart the server on its files.
  const setup = await connect();
  await setup.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await setup.end();
  await server.pause();
  await server.resume();
  const stats = await connect();
  await stats.query('CREATE EXTENSION pg_stat_statements');
  await stats.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await stats.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
  await stats.query('SELECT pg_reload_conf()');

  const bucket = s3.options();
  const publisher = await openPublisher(root, join(work, 'operator'), await loadContentTypes(root), { databaseUrl: server.url, bucket });
  const token = await addBuilderToken(root, publisher.store);
  await publisher.close();
  node = await startPlinthNode({
    root,
    dataDir: join(work, 'node'),
    logPath: join(work, 'node.log'),
    env: {
      PLINTH_LOG_LEVEL: 'info',
      PLINTH_API_RATE_PER_CREDENTIAL: '0',
      PLINTH_API_RATE_PER_NETWORK: '0',
      PLINTH_DATABASE_URL: server.url,
      ...s3.env,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  });
  const client = createClient(node.port);
  const archives = [];
  for (let i = 0; i <= deploys; i++) {
    writeSite(join(work, 'site'), files, archiveBytes, 10_000 * (i + 1) + 777);
    archives.push(tarGz(join(work, 'site'), join(work, `site-${i}.tgz`)));
  }
  await deploy(client, token, readFileSync(archives[0]));
  const kindOf = new Map();
  console.log(
    `${root}: ${files}-file archives, ${deploys} deploys ${gapMs / 1000} s apart; 1-minute load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
  );
  for (let i = 1; i <= deploys; i++) {
    await sleep(gapMs);
    await stats.query('SELECT pg_stat_statements_reset()');
    const before = threadsOf(server.pids());
    const res = await deploy(client, token, readFileSync(archives[i]));
    const after = threadsOf(server.pids());
    for (const { pid, backend_type: kind } of (await stats.query('SELECT pid, backend_type FROM pg_stat_activity')).rows) kindOf.set(pid, kind);
    const byKind = {};
    let total = 0;
    for (const [id, t] of after) {
      const ms = (t.ns - (before.get(id)?.ns ?? 0)) / 1e6;
      total += ms;
      const kind = t.pid === stats.processID ? 'this bench' : (kindOf.get(t.pid) ?? 'postmaster or ended');
      byKind[kind] = (byKind[kind] ?? 0) + ms;
    }
    const { rows } = await stats.query(
      `SELECT calls, rows, total_exec_time AS exec, total_plan_time AS plan, regexp_replace(query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_stat_activity%' ORDER BY total_exec_time + total_plan_time DESC`,
    );
    const kinds = Object.entries(byKind)
      .filter(([, ms]) => ms >= 0.05)
      .map(([kind, ms]) => `${kind} ${ms.toFixed(1)}`)
      .join(', ');
    console.log(`\nDeploy ${i}: ${Math.round(res.ms)} ms to the 201; PostgreSQL CPU ${total.toFixed(1)} ms (${kinds})`);
    console.log('| Calls | Rows | Execution | Planning | Statement |');
    console.log('|--:|--:|--:|--:|---|');
    for (const row of rows) {
      console.log(`| ${row.calls} | ${row.rows} | ${Number(row.exec).toFixed(2)} ms | ${Number(row.plan).toFixed(2)} ms | \`${row.query.slice(0, 160)}\` |`);
    }
    console.log(`Statements: ${rows.reduce((sum, row) => sum + Number(row.calls), 0)}`);
  }
  client.close();
  await stats.end();
} finally {
  if (node) await stopChild(node.child);
  await s3.stop();
  await server.stop();
}
