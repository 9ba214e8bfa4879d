import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Key } from 'lmdb';
import { RECORDS_UNAVAILABLE_CODE } from '../errors.js';
import { describePostgresFailure } from './postgres-errors.js';
import type { RecordWrite, ReplicatedDb } from './replica.js';
import { checkSchema, READABLE_FROM_KEY, type DatabaseSchema } from './schema-version.js';
import type { RateCheck, RateResult } from './types.js';

/**
 * PostgreSQL as the record of truth (DESIGN "Past one machine"): every record in
 * `plinth_records`, every committed transaction's writes as one numbered row of
 * `plinth_changes`, written in the same PostgreSQL transaction. Writers take one cluster-wide
 * lock, so changes are numbered in commit order and a replica that applies them in order sees
 * exactly the states PostgreSQL went through. Rate counters live only here (every node counts
 * against the same windows). LISTEN/NOTIFY only wakes replicas; they poll as well.
 */

export interface RecordsLogOptions {
  url: string;
  /** Connections this handle may open (each thread of each node has its own handle). */
  maxConnections?: number;
  /** Names this process in the log, for operators. */
  origin?: string;
}

export interface Change {
  seq: number;
  /**
   * When PostgreSQL committed it, in microseconds: with `seq`, it tells this change from another
   * that took the same number in a database restored to an earlier point.
   */
  stamp: string;
  writes: RecordWrite[];
}

/** A position in the log: the last change a replica reflects (seq 0: none). */
export interface LogPosition {
  seq: number;
  stamp?: string;
}

export interface RecordsLog {
  readonly clusterId: string;
  /** The database's schema version once this handle opened it, and the newest this Plinth knows. */
  readonly schema: { database: number; known: number };
  /**
   * Runs `prepare` under the cluster-wide write lock after `catchUp` brought the replica to the
   * head of the log; commits what it returns as the next change. The lock is held until
   * PostgreSQL has committed, so no other writer can slip in between.
   */
  commit<T>(
    catchUp: (changes: Change[]) => Promise<void>,
    after: () => number,
    prepare: () => { result: T; writes: RecordWrite[] },
  ): Promise<{ result: T; change?: Change }>;
  /**
   * Changes after `seq`, oldest first, at most `limit`. Throws an error with code
   * `REPLICA_BEHIND` when changes after `seq` were already pruned from the log.
   */
  changesSince(seq: number, limit?: number): Promise<Change[]>;
  /** The last change pruned from the log (0: none); a replica behind it must be rebuilt. */
  logStart(): Promise<number>;
  /** Drops changes committed before `before` (epoch ms), always keeping the newest. Returns how many went. */
  pruneChanges(before: number): Promise<number>;
  /** Every record and the change it reflects, read in one snapshot; for a new replica. */
  snapshot(each: (batch: Array<[ReplicatedDb, Key, unknown]>) => Promise<void>): Promise<LogPosition>;
  /** The stamp of change `seq`, or undefined if the log does not hold it. */
  stampOf(seq: number): Promise<string | undefined>;
  /**
   * Fills an empty cluster with records from elsewhere (an embedded install moving in), in one
   * PostgreSQL transaction: each batch becomes a change of the log, so nodes already following
   * the cluster apply it like any other. Before committing, `verify` reads back every record the
   * transaction holds; if it throws, nothing is committed. Refuses, changing nothing, if the
   * cluster holds records.
   */
  importRecords(
    batches: AsyncIterable<RecordWrite[]>,
    verify: (read: (each: (batch: Array<[ReplicatedDb, Key, unknown]>) => void) => Promise<void>) => Promise<void>,
  ): Promise<{ records: number; changes: number }>;
  /** Calls `wake` when another writer commits (best effort: replicas also poll). */
  listen(wake: () => void): Promise<() => Promise<void>>;
  takeRateTokens(checks: readonly RateCheck[], at: number): Promise<RateResult>;
  pruneCounters(before: number): Promise<number>;
  /** Runs `fn` only if no other node is running a task of this name (a leader for upkeep). */
  alone<T>(task: string, fn: () => Promise<T>): Promise<T | undefined>;
  /** Calls that failed so far (PostgreSQL unreachable, or a query it refused), for operators' metrics. */
  readonly errors: number;
  close(): Promise<void>;
}

/** Raised when records are imported into a cluster that already holds some. */
export const CLUSTER_NOT_EMPTY = 'ECLUSTER_NOT_EMPTY';

/** Raised when a replica's position is older than the oldest change the log still holds. */
export const REPLICA_BEHIND = 'EREPLICA_BEHIND';

/** A change's commit time in microseconds, as text: the same however the session's time zone is set. */
const STAMP = '(extract(epoch from at) * 1000000)::bigint::text';

const WRITE_LOCK = 7_000_001;
const MIGRATE_LOCK = 7_000_002;

/**
 * Versioned migrations, applied in order at start-up, once per database. Nodes of this release
 * and the one before share the database during a rolling upgrade: a migration only adds what
 * older nodes ignore, and removes only what the release before already stopped using, raising
 * `schema_readable_from` when it does (schema-version.ts, docs/operating.md "Upgrading a cluster").
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE plinth_meta (key text PRIMARY KEY, value text NOT NULL);
   CREATE TABLE plinth_changes (seq bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), origin text NOT NULL, writes jsonb NOT NULL);
   CREATE TABLE plinth_records (db text NOT NULL, key text NOT NULL, value jsonb NOT NULL, PRIMARY KEY (db, key));
   CREATE TABLE plinth_counters (scope text NOT NULL, window_start bigint NOT NULL, hits integer NOT NULL, PRIMARY KEY (scope, window_start));`,
];

/** The newest schema version this Plinth knows: that of its last migration. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A failure to use PostgreSQL at all, with its cause in the message (start-up and the log show it). */
function unavailable(err: unknown, url: string): Error {
  return Object.assign(new Error(describePostgresFailure(err, url), { cause: err }), { code: RECORDS_UNAVAILABLE_CODE });
}

/** Keys are stored as their JSON text: LMDB keys here are strings, numbers and arrays of them. */
const keyText = (key: Key): string => JSON.stringify(key);

export async function openRecordsLog(options: RecordsLogOptions): Promise<RecordsLog> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 4, connectionTimeoutMillis: 5000 });
  // An idle connection that breaks (the server restarting) must not take the process down.
  pool.on('error', () => undefined);
  const origin = options.origin ?? `${process.pid}`;

  let errors = 0;
  const withClient = async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      errors++;
      throw unavailable(err, options.url);
    }
    // The server can end a connection between two queries (a restart): the client then emits
    // 'error' while it is checked out, which would take the process down without a listener.
    let broken = false;
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    try {
      return await fn(client);
    } catch (err) {
      broken ||= isConnectionError(err);
      // Refusals of ours thrown inside a transaction (a replica too far behind) are not the database's.
      if (broken || isDatabaseError(err)) errors++;
      throw broken ? unavailable(err, options.url) : err;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  };

  let schema: DatabaseSchema = { version: 0 };
  const clusterId = await withClient(async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS plinth_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM plinth_migrations')).rows.map((row) => row.version));
      schema = await readSchema(client, done);
      const refusal = checkSchema(schema, MIGRATIONS.length);
      if (refusal) throw refusal;
      for (const [index, sql] of MIGRATIONS.entries()) {
        const version = index + 1;
        if (done.has(version)) continue;
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO plinth_migrations (version) VALUES ($1)', [version]);
        if (version === 1) await client.query("INSERT INTO plinth_meta (key, value) VALUES ('cluster_id', $1)", [randomUUID()]);
        await client.query('COMMIT');
      }
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]);
    }
    return (await client.query<{ value: string }>("SELECT value FROM plinth_meta WHERE key = 'cluster_id'")).rows[0]!.value;
  });

  const readLogStart = async (client: pg.PoolClient): Promise<number> =>
    Number((await client.query<{ value: string }>("SELECT value FROM plinth_meta WHERE key = 'log_start'")).rows[0]?.value ?? 0);

  const fetchChanges = async (client: pg.PoolClient, seq: number, limit = 1000): Promise<Change[]> => {
    if (seq < (await readLogStart(client))) {
      throw Object.assign(new Error(`This replica (at change ${seq}) is older than the change log PostgreSQL still keeps; it must be rebuilt.`), {
        code: REPLICA_BEHIND,
      });
    }
    const rows = await client.query<{ seq: string; stamp: string; writes: Array<[ReplicatedDb, string, unknown]> }>(
      `SELECT seq, ${STAMP} AS stamp, writes FROM plinth_changes WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [seq, limit],
    );
    return rows.rows.map((row) => ({
      seq: Number(row.seq),
      stamp: row.stamp,
      writes: row.writes.map(([db, key, value]) => [db, JSON.parse(key) as Key, value] as RecordWrite),
    }));
  };

  return {
    clusterId,
    schema: { database: Math.max(schema.version, MIGRATIONS.length), known: MIGRATIONS.length },

    commit: (catchUp, after, prepare) =>
      withClient(async (client) => {
        await client.query('BEGIN');
        try {
          await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
          for (;;) {
            const behind = await fetchChanges(client, after());
            if (behind.length === 0) break;
            await catchUp(behind);
          }
          const { result, writes } = prepare();
          if (writes.length === 0) {
            await client.query('COMMIT');
            return { result };
          }
          // The last write of a key wins, as it did in the transaction.
          const last = new Map<string, RecordWrite>();
          for (const write of writes) last.set(`${write[0]}\u0000${keyText(write[1])}`, write);
          const puts = [...last.values()].filter((write) => write[2] !== null);
          const removes = [...last.values()].filter((write) => write[2] === null);
          const logged = writes.map(([db, key, value]) => [db, keyText(key), value]);
          const inserted = await client.query<{ seq: string; stamp: string }>(
            `INSERT INTO plinth_changes (origin, writes) VALUES ($1, $2) RETURNING seq, ${STAMP} AS stamp`,
            [origin, JSON.stringify(logged)],
          );
          if (puts.length > 0) {
            await client.query(
              `INSERT INTO plinth_records (db, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
               ON CONFLICT (db, key) DO UPDATE SET value = excluded.value`,
              [puts.map((w) => w[0]), puts.map((w) => keyText(w[1])), puts.map((w) => JSON.stringify(w[2]))],
            );
          }
          if (removes.length > 0) {
            await client.query('DELETE FROM plinth_records WHERE (db, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))', [
              removes.map((w) => w[0]),
              removes.map((w) => keyText(w[1])),
            ]);
          }
          const seq = Number(inserted.rows[0]!.seq);
          await client.query("SELECT pg_notify('plinth_changes', $1)", [String(seq)]);
          await client.query('COMMIT');
          return { result, change: { seq, stamp: inserted.rows[0]!.stamp, writes } };
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),

    changesSince: (seq, limit) => withClient((client) => fetchChanges(client, seq, limit)),

    logStart: () => withClient(readLogStart),

    stampOf: (seq) =>
      withClient(
        async (client) => (await client.query<{ stamp: string }>(`SELECT ${STAMP} AS stamp FROM plinth_changes WHERE seq = $1`, [seq])).rows[0]?.stamp,
      ),

    pruneChanges: (before) =>
      withClient(async (client) => {
        await client.query('BEGIN');
        try {
          // Under the write lock, so the newest change cannot be committed between the two statements.
          await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
          const pruned = await client.query<{ count: number; last: string }>(
            `WITH gone AS (DELETE FROM plinth_changes WHERE at < to_timestamp($1 / 1000.0) AND seq < (SELECT max(seq) FROM plinth_changes) RETURNING seq)
             SELECT count(*)::int AS count, coalesce(max(seq), 0) AS last FROM gone`,
            [before],
          );
          const { count, last } = pruned.rows[0]!;
          if (count > 0) {
            await client.query("INSERT INTO plinth_meta (key, value) VALUES ('log_start', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [last]);
          }
          await client.query('COMMIT');
          return count;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),

    snapshot: (each) =>
      withClient(async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          const last = (await client.query<{ seq: string; stamp: string }>(`SELECT seq, ${STAMP} AS stamp FROM plinth_changes ORDER BY seq DESC LIMIT 1`))
            .rows[0];
          await readAllRecords(client, each);
          await client.query('COMMIT');
          return last ? { seq: Number(last.seq), stamp: last.stamp } : { seq: 0 };
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),

    importRecords: (batches, verify) =>
      withClient(async (client) => {
        await client.query('BEGIN');
        try {
          await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
          if ((await client.query('SELECT 1 FROM plinth_records LIMIT 1')).rows.length > 0) {
            throw Object.assign(new Error('The cluster at PLINTH_DATABASE_URL already holds records: records move only into an empty cluster.'), {
              code: CLUSTER_NOT_EMPTY,
            });
          }
          let records = 0;
          let changes = 0;
          let last = 0;
          for await (const writes of batches) {
            if (writes.length === 0) continue;
            const inserted = await client.query<{ seq: string }>('INSERT INTO plinth_changes (origin, writes) VALUES ($1, $2) RETURNING seq', [
              `${origin}/import`,
              JSON.stringify(writes.map(([db, key, value]) => [db, keyText(key), value])),
            ]);
            await client.query(
              `INSERT INTO plinth_records (db, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
               ON CONFLICT (db, key) DO UPDATE SET value = excluded.value`,
              [writes.map((w) => w[0]), writes.map((w) => keyText(w[1])), writes.map((w) => JSON.stringify(w[2]))],
            );
            records += writes.length;
            changes++;
            last = Number(inserted.rows[0]!.seq);
          }
          await verify((each) => readAllRecords(client, async (batch) => each(batch)));
          if (last > 0) await client.query("SELECT pg_notify('plinth_changes', $1)", [String(last)]);
          await client.query('COMMIT');
          return { records, changes };
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),

    async listen(wake) {
      let client: pg.Client | undefined;
      let stopped = false;
      const connect = async (): Promise<void> => {
        if (stopped) return;
        const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5000 });
        next.on('error', () => undefined);
        next.on('notification', () => wake());
        // A lost connection is dropped; the next poll of the replica keeps it current meanwhile.
        next.on('end', () => {
          if (client === next) client = undefined;
          if (!stopped) setTimeout(() => void connect().catch(() => undefined), 1000).unref();
        });
        try {
          await next.connect();
          await next.query('LISTEN plinth_changes');
          client = next;
        } catch {
          await next.end().catch(() => undefined);
        }
      };
      await connect();
      return async () => {
        stopped = true;
        await client?.end().catch(() => undefined);
      };
    },

    takeRateTokens: (checks, at) =>
      withClient(async (client) => {
        const keys = checks.map((check) => ({ scope: check.scope, start: at - (at % check.windowMs), hits: check.hits ?? 1, check }));
        await client.query('BEGIN');
        try {
          await client.query(
            'INSERT INTO plinth_counters (scope, window_start, hits) SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) ON CONFLICT DO NOTHING',
            [keys.map((k) => k.scope), keys.map((k) => k.start), keys.map(() => 0)],
          );
          // Locked in one order (scope, window) so two requests never wait on each other in a cycle.
          const ordered = [...keys].sort((a, b) => (a.scope === b.scope ? a.start - b.start : a.scope < b.scope ? -1 : 1));
          let retryAfterMs = 0;
          let refusedBy = '';
          for (const key of ordered) {
            const row = await client.query<{ hits: number }>('SELECT hits FROM plinth_counters WHERE scope = $1 AND window_start = $2 FOR UPDATE', [
              key.scope,
              key.start,
            ]);
            if ((row.rows[0]?.hits ?? 0) + key.hits > key.check.limit) {
              retryAfterMs = Math.max(retryAfterMs, key.start + key.check.windowMs - at);
              refusedBy ||= key.scope;
            }
          }
          if (retryAfterMs > 0) {
            await client.query('ROLLBACK');
            return { allowed: false, retryAfterMs, refusedBy };
          }
          for (const key of keys) {
            await client.query('UPDATE plinth_counters SET hits = hits + $3 WHERE scope = $1 AND window_start = $2', [key.scope, key.start, key.hits]);
          }
          await client.query('COMMIT');
          return { allowed: true };
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),

    pruneCounters: (before) =>
      withClient(async (client) => (await client.query('DELETE FROM plinth_counters WHERE window_start < $1', [before])).rowCount ?? 0),

    alone: (task, fn) =>
      withClient(async (client) => {
        const key = hashTask(task);
        const got = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key])).rows[0]!.ok;
        if (!got) return undefined;
        try {
          return await fn();
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
        }
      }),

    get errors() {
      return errors;
    },
    close: () => pool.end(),
  };
}

/** The database's schema: its newest applied migration, and what its migrations said older nodes may do. */
async function readSchema(client: pg.PoolClient, applied: ReadonlySet<number>): Promise<DatabaseSchema> {
  const version = Math.max(0, ...applied);
  if (version === 0) return { version };
  const row = (await client.query<{ value: string }>('SELECT value FROM plinth_meta WHERE key = $1', [READABLE_FROM_KEY])).rows[0];
  return row === undefined ? { version } : { version, readableFrom: Number(row.value) };
}

/** Reads `plinth_records` through a cursor, in batches, inside the caller's transaction. */
async function readAllRecords(client: pg.PoolClient, each: (batch: Array<[ReplicatedDb, Key, unknown]>) => Promise<void>): Promise<void> {
  await client.query('DECLARE plinth_records_cursor NO SCROLL CURSOR FOR SELECT db, key, value FROM plinth_records');
  for (;;) {
    const batch = await client.query<{ db: ReplicatedDb; key: string; value: unknown }>('FETCH 2000 FROM plinth_records_cursor');
    if (batch.rows.length === 0) break;
    await each(batch.rows.map((row) => [row.db, JSON.parse(row.key) as Key, row.value]));
  }
}

/** A lock number for a task name (`alone`'s): advisory locks take integers. */
export function hashTask(task: string): number {
  let hash = 7_100_000;
  for (const char of task) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return hash;
}

/** An error PostgreSQL (or the driver talking to it) raised: it carries a SQLSTATE or a system error code. */
function isDatabaseError(err: unknown): boolean {
  return err instanceof pg.DatabaseError || isConnectionError(err);
}

/** Errors of the connection itself (the server gone, refused, reset), not of a query. */
function isConnectionError(err: unknown): boolean {
  const code = String((err as { code?: unknown } | undefined)?.code ?? '');
  const message = String((err as { message?: unknown } | undefined)?.message ?? '');
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006'].includes(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message)
  );
}
