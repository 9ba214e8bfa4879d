import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/records-schema.js';
import { request } from '../helpers/http.js';
import { killMain, startMain } from '../helpers/main-process.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { tempDir } from '../helpers/sites.js';

/**
 * A node refuses a database that newer Plinth has migrated past what it knows (issue 31: "a node
 * started silently against a database with newer migrations"), naming both versions, and changes
 * nothing in it; a database whose newer migrations declared that this version still works on it
 * (the expand step of a rolling upgrade) is run on, and said so in the log. Real PostgreSQL.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));
/** The newest migration this Plinth has, and every version up to it. */
const KNOWN = SCHEMA_VERSION;
const APPLIED = Array.from({ length: KNOWN }, (_, i) => i + 1);
const REFUSAL = `database schema is version ${KNOWN + 1}; this Plinth knows up to ${KNOWN}: upgrade Plinth`;

let cluster: TestCluster;
let db: pg.Client;

beforeAll(async () => {
  cluster = await startCluster({ count: 1 });
  db = new pg.Client({ connectionString: cluster.pg.url });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
});

const versions = async (): Promise<number[]> =>
  (await db.query<{ version: number }>('SELECT version FROM plinth_migrations ORDER BY version')).rows.map((row) => row.version);

/** Starts a node and resolves with how it ended if it did not come up. */
async function startRefused(env: Record<string, string>): Promise<string> {
  try {
    const main = await startMain(env, { timeoutMs: 60_000 });
    await killMain(main);
    throw new Error(`the node started:\n${main.output()}`);
  } catch (err) {
    return (err as Error).message;
  }
}

function plinth(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
    );
  });
}

describe('a database with newer migrations than this Plinth knows', () => {
  it('is the version this Plinth migrates to on a new database', async () => {
    expect(await versions()).toEqual(APPLIED);
    expect(cluster.process(0)!.output()).not.toContain('cluster.schema_newer');
  });

  it('is refused at start-up by a node that ran on it before, naming both versions, and left as it was', async () => {
    await cluster.kill(0, 'SIGTERM');
    // What the first node of a newer release leaves behind: one more migration applied.
    await db.query('INSERT INTO plinth_migrations (version) VALUES ($1)', [KNOWN + 1]);
    const refused = await startRefused(cluster.env(0));
    expect(refused).toContain('exited with 1 before listening');
    expect(refused).toContain(`plinth: ${REFUSAL}`);
    expect(await versions()).toEqual([...APPLIED, KNOWN + 1]);
  }, 90_000);

  it('is refused by a new node before it builds a replica, and by plinth admin', async () => {
    const fresh = tempDir('plinth-node-new-');
    expect(await startRefused(cluster.env(0, { PLINTH_DATA_DIR: fresh }))).toContain(REFUSAL);
    const admin = await plinth(cluster.env(0, { PLINTH_DATA_DIR: tempDir('plinth-admin-') }), 'admin', 'account', 'create', '--email', 'ops@example.com');
    expect(admin.code).toBe(1);
    expect(admin.stderr).toContain(REFUSAL);
    expect(await versions()).toEqual([...APPLIED, KNOWN + 1]);
  }, 90_000);

  it('is run on when its migrations declared that this version still works there, and the node says so', async () => {
    await db.query("INSERT INTO plinth_meta (key, value) VALUES ('schema_readable_from', $1)", [String(KNOWN)]);
    const main = await cluster.start(0);
    const docs = await request({ port: main.port, host: 'localhost', path: '/' });
    expect(docs.status).toBe(200);
    const warned = main
      .output()
      .split('\n')
      .filter((line) => line.includes('"cluster.schema_newer"'));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 'warn', schema: KNOWN + 1, known: KNOWN });
    expect(await versions()).toEqual([...APPLIED, KNOWN + 1]);
  }, 90_000);
});
