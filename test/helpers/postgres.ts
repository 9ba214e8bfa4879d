import pgClient from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { hasPostgres, postgresBinDir, startPostgres, type PostgresServer } from '../../bench/lib/postgres.mjs';
import { connectStore, type Store } from '../../src/store/index.js';
import { tempDir } from './sites.js';

/**
 * A private PostgreSQL server for a test file: Debian's `postgresql` binaries, a fresh cluster in
 * a temporary directory, listening on a free loopback port only (bench/lib/postgres.mjs starts it,
 * for the tests and the cluster bench alike). `url` names a database of its own; `pause` and
 * `resume` stop and start the server on the same files (an outage).
 */
export type TestPostgres = PostgresServer;

export { hasPostgres, postgresBinDir, startPostgres };

/** Runs one statement on a connection of its own (to read or poke at what the nodes wrote). */
export async function queryRows<R extends pgClient.QueryResultRow = pgClient.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pgClient.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export interface PostgresNodes {
  readonly pg: TestPostgres;
  /**
   * A store as a cluster node opens one, on its own data directory (or `dir`, to open one again)
   * and this server's database (or `databaseUrl`, another database of it); closed after the file.
   */
  node(dir?: string, databaseUrl?: string): Promise<Store>;
  /** The data directory a node's store was opened on. */
  dirOf(store: Store): string;
  /** Closes a node's store before the end of the file (its directory stays, to open again). */
  close(store: Store): Promise<void>;
}

/** One PostgreSQL for a test file, and cluster stores on it, all stopped after the file. */
export function usePostgresNodes(): PostgresNodes {
  let pg: TestPostgres | undefined;
  const open: Store[] = [];
  const dirs = new Map<Store, string>();
  beforeAll(async () => {
    pg = await startPostgres();
  }, 30_000);
  afterAll(async () => {
    for (const store of open) await store.close().catch(() => undefined);
    await pg?.stop();
  });
  const started = (): TestPostgres => {
    if (pg === undefined) throw new Error('PostgreSQL starts in beforeAll');
    return pg;
  };
  return {
    get pg() {
      return started();
    },
    async node(dir = tempDir('plinth-node-'), databaseUrl = started().url) {
      const store = await connectStore({ dir, databaseUrl, bootstrap: true });
      open.push(store);
      dirs.set(store, dir);
      return store;
    },
    dirOf(store) {
      const dir = dirs.get(store);
      if (dir === undefined) throw new Error('not a store of these nodes');
      return dir;
    },
    async close(store) {
      open.splice(open.indexOf(store), 1);
      await store.close();
    },
  };
}
