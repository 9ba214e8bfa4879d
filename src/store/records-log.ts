import type pg from 'pg';
import type { Key } from 'lmdb';
import { BUCKET_UNAVAILABLE_CODE, RECORDS_UNAVAILABLE_CODE } from '../errors.js';
import { exceedsCap, rateWindow } from '../rules/index.js';
import { createBucketLedger, type BucketLedger } from './bucket-ledger.js';
import { CLOCK_COLUMN, createDatabaseClock } from './database-clock.js';
import {
  boundedClientClass,
  BULK_QUERY_MS,
  DATABASE_ANSWER_MS,
  connectionSettings,
  openConnections,
  rollback,
  timeBound,
  WRITE_LOCK_QUERY_MS,
} from './records-connections.js';
import type { AnalyticsRecords } from './analytics.js';
import { clusterAnalytics } from './records-analytics.js';
import { migrateSchema, SCHEMA_VERSION } from './records-schema.js';
import type { RecordWrite, ReplicatedDb } from './replicated-dbs.js';
import { inlineValues } from './sql-literals.js';
import { SCHEMA_TOO_NEW, type DatabaseSchema } from './schema-version.js';
import type { PackRows, RateCheck, RateResult } from './types.js';

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
  /**
   * Names the replica this handle's commits are applied to (replica.ts, `replicaTag`): each
   * commit's notification carries it, and `listen` is not woken by commits that name its own
   * replica, which the committing thread applies itself (the poll still finds any it did not).
   */
  replica?: string;
  /** This node's own clock (injectable for tests); PostgreSQL's is measured against it. */
  now?: () => number;
  /** Told each time the correction this node applies to its clock changes (0: none). */
  onClockOffset?: (offsetMs: number) => void;
  /**
   * A node whose replica is complete may start while PostgreSQL cannot be reached: the log then
   * belongs to the cluster the replica follows, and connects on first use. Once PostgreSQL
   * answers, the log checks that it is that cluster and that `resumable` holds (the replica's
   * position is in it), else every call fails with `REPLICA_BEHIND`.
   */
  offline?: { clusterId: string; resumable(log: Pick<RecordsLog, 'logStart' | 'stampOf'>): Promise<boolean> };
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
  /** The database's schema version as this handle last found it, and the newest this Plinth knows. */
  readonly schema: { database: number; known: number };
  /** False while a log opened `offline` has not reached PostgreSQL yet. */
  connected(): boolean;
  /** False while PostgreSQL is known to be silent (records-connections.ts): writes would fail at once too. */
  answering(): boolean;
  /**
   * PostgreSQL's clock less this node's (database-clock.ts): a node judges time by
   * `now() + clockOffsetMs()`, so that expiry, rate windows and single-use windows mean the same
   * on every node. Read at every catch-up and under the write lock.
   */
  clockOffsetMs(): number;
  /**
   * Runs `prepare` under the cluster-wide write lock after `catchUp` brought the replica to the
   * head of the log; commits what it returns as the next change. The lock is held until
   * PostgreSQL has committed, so no other writer can slip in between. `packRows`: rows of packs
   * already in the bucket, written by the change's statement (none when it writes nothing).
   * `ahead`: `prepare`'s outcome on the replica at an earlier position (`prepareAhead`), taken
   * instead of running it again when the log's last change is still that position under the lock.
   */
  commit<T>(
    catchUp: (changes: Change[]) => Promise<void>,
    after: () => number,
    prepare: () => { result: T; writes: RecordWrite[] },
    packRows?: PackRows,
    ahead?: PreparedChange<T>,
  ): Promise<{ result: T; change?: Change }>;
  /**
   * What `prepare` returned on the replica at change `at`, with its change statement made: for a
   * commit whose operation runs before the lock, while something it must wait for (its blobs
   * going up) is in flight.
   */
  prepareAhead<T>(at: number, prepared: { result: T; writes: RecordWrite[] }): PreparedChange<T>;
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
  /** What the bucket holds as the nodes uploaded it: a deploy asks this rather than the bucket. */
  readonly bucketLedger: BucketLedger;
  /** Runs `fn` with a connection of this handle, for tables beside the records (the webhook delivery queue). */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Site analytics in PostgreSQL's own tables, outside the change log (records-analytics.ts). */
  readonly analytics: AnalyticsRecords;
  /** Runs `fn` only if no other node is running a task of this name (a leader for upkeep). */
  alone<T>(task: string, fn: () => Promise<T>): Promise<T | undefined>;
  /** Calls that failed so far (PostgreSQL unreachable, or a query it refused), for operators' metrics. */
  readonly errors: number;
  close(): Promise<void>;
}

/** An operation's outcome on the replica at change `at`, and its change statement (less any pack rows). */
export interface PreparedChange<T> {
  readonly at: number;
  readonly result: T;
  readonly writes: RecordWrite[];
  /** The statement's parts and values; pack rows are added under the lock, once their expiry is checked. */
  readonly parts: readonly string[];
  readonly values: readonly unknown[];
}

/** Raised when records are imported into a cluster that already holds some. */
export const CLUSTER_NOT_EMPTY = 'ECLUSTER_NOT_EMPTY';

/** Raised when a replica's position is older than the oldest change the log still holds. */
export const REPLICA_BEHIND = 'EREPLICA_BEHIND';

/** A change's commit time in microseconds, as text: the same however the session's time zone is set. */
const STAMP = '(extract(epoch from at) * 1000000)::bigint::text';

const WRITE_LOCK = 7_000_001;

/** Moving an install into a cluster copies every record in one transaction: its statements are not bounded. */
const IMPORT_QUERY_MS = 24 * 3600_000;
/** A snapshot for a new replica writes each batch to LMDB between two reads; it holds no lock. */
const SNAPSHOT_IDLE = '60s';

function behind(message: string): Error {
  return Object.assign(new Error(message), { code: REPLICA_BEHIND });
}

/** Keys are stored as their JSON text: LMDB keys here are strings, numbers and arrays of them. */
const keyText = (key: Key): string => JSON.stringify(key);

/** Changes a replica reads from the log at once. */
const CHANGES_READ_AT_ONCE = 1000;

/** A row of `plinth_changes` as read for a replica. */
interface ChangeRow {
  seq: string;
  stamp: string;
  writes: Array<[ReplicatedDb, string, unknown]>;
}

const changeOf = (row: ChangeRow): Change => ({
  seq: Number(row.seq),
  stamp: row.stamp,
  writes: row.writes.map(([db, key, value]) => [db, JSON.parse(key) as Key, value] as RecordWrite),
});

export async function openRecordsLog(options: RecordsLogOptions): Promise<RecordsLog> {
  const connections = openConnections(options.url, options.maxConnections ?? 4);
  const { withClient } = connections;
  const origin = options.origin ?? `${process.pid}`;
  const clock = options.now ?? Date.now;
  // Set while a log opened offline has not yet checked the cluster PostgreSQL holds.
  let reconnected = true;
  const databaseClock = createDatabaseClock({ now: clock, onOffset: options.onClockOffset, withClient, mayRead: () => reconnected });

  let clusterId: string;
  let pending: Promise<void> | undefined;
  let refusal: Error | undefined;
  // Until PostgreSQL answers, a log opened offline takes the schema for its own.
  let schema: DatabaseSchema = { version: SCHEMA_VERSION };
  // Whether the server compresses stored values with lz4 (PostgreSQL 14 and later, when built
  // with it): a change's document is compressed as it is stored, and pglz, the default, costs a
  // 1,000-file deploy's commit several ms more (bench/RESULTS.md). Readers decompress either.
  let lz4 = false;
  const migrate = async (client: pg.PoolClient): Promise<string> => {
    const id = await migrateSchema(client, (found) => (schema = found));
    lz4 = (await client.query("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")).rows.length > 0;
    return id;
  };
  try {
    clusterId = await withClient(migrate);
  } catch (err) {
    const offline = options.offline;
    if (offline === undefined || (err as { code?: unknown }).code !== RECORDS_UNAVAILABLE_CODE) {
      await connections.end();
      throw err;
    }
    clusterId = offline.clusterId;
    reconnected = false;
  }

  const readLogStart = async (client: pg.PoolClient): Promise<number> =>
    Number(
      (
        await databaseClock.query<{ value: string | null; clock: number }>(
          client,
          `SELECT (SELECT value FROM plinth_meta WHERE key = 'log_start') AS value, ${CLOCK_COLUMN}`,
          [],
          DATABASE_ANSWER_MS,
          true,
        )
      ).rows[0]!.value ?? 0,
    );

  /** Changes after `seq`, oldest first; the caller has checked the log still holds them. */
  const readChanges = async (client: pg.PoolClient, seq: number, limit = CHANGES_READ_AT_ONCE): Promise<Change[]> => {
    const rows = await timeBound<ChangeRow>(
      client,
      `SELECT seq, ${STAMP} AS stamp, writes FROM plinth_changes WHERE seq > $1 ORDER BY seq LIMIT $2`,
      [seq, limit],
      BULK_QUERY_MS,
      true,
    );
    return rows.rows.map(changeOf);
  };

  const checkLogStart = (seq: number, logStart: number): void => {
    if (seq < logStart) throw behind(`This replica (at change ${seq}) is older than the change log PostgreSQL still keeps; it must be rebuilt.`);
  };

  // The log's start is read first, in a query that moves no bulk: a PostgreSQL that hangs is
  // noticed within that query's bound (a replica's poll is how a node learns it).
  const fetchChanges = async (client: pg.PoolClient, seq: number, limit = 1000): Promise<Change[]> => {
    checkLogStart(seq, await readLogStart(client));
    return readChanges(client, seq, limit);
  };

  const stampOf = (seq: number): Promise<string | undefined> =>
    withClient(async (client) => (await client.query<{ stamp: string }>(`SELECT ${STAMP} AS stamp FROM plinth_changes WHERE seq = $1`, [seq])).rows[0]?.stamp);
  const logStart = (): Promise<number> => withClient(readLogStart);

  /**
   * Before anything else, a log opened offline checks what PostgreSQL holds once it answers: the
   * schema (migrated as at start-up), the cluster, and that the replica can resume from it.
   */
  const ready = async (): Promise<void> => {
    if (refusal) throw refusal;
    if (reconnected) return;
    pending ??= (async () => {
      const found = await withClient(migrate).catch((err: unknown) => {
        // Migrated past this Plinth while it ran without PostgreSQL: it writes nothing more.
        if ((err as { code?: unknown }).code === SCHEMA_TOO_NEW) refusal = err as Error;
        throw err;
      });
      if (found !== clusterId) {
        refusal = behind(`PostgreSQL now holds cluster ${found}, not ${clusterId} that this replica follows; it must be rebuilt.`);
      } else if (!(await options.offline!.resumable({ logStart, stampOf }))) {
        refusal = behind('This replica is not part of the change log PostgreSQL now holds (a database restored to an earlier point?); it must be rebuilt.');
      } else {
        reconnected = true;
      }
    })().finally(() => {
      pending = undefined;
    });
    await pending;
    if (refusal) throw refusal;
  };
  const withReadyClient = async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    await ready();
    return withClient(fn);
  };

  /**
   * A time `before` now by this node's clock, as that long before now by PostgreSQL's, never
   * later than `before`: upkeep that drops what is older than a cut-off never drops more because
   * this node's clock runs ahead.
   */
  const onDatabaseClock = async (client: pg.PoolClient, before: number): Promise<number> => {
    const { rows } = await databaseClock.query<{ clock: number }>(client, `SELECT ${CLOCK_COLUMN}`);
    return Math.min(before, before + Math.round(Number(rows[0]!.clock)) - (clock() + databaseClock.offsetMs()));
  };

  /**
   * The change statement of `writes`, as one prepared statement: the change's row, its records
   * and (see `commit`) its notification; made at change `at`, it writes nothing once the log has
   * moved past it.
   */
  const changeStatement = (writes: RecordWrite[], at: number): { parts: string[]; values: unknown[] } => {
    // The records are the change's own writes, the last of each key (as in the transaction):
    // PostgreSQL takes them from the change it has just parsed, rather than from a second copy of
    // every value in arrays that this thread would escape element by element (an array of jsonb
    // also costs PostgreSQL more to parse than the document). `superseded`: writes a later one of
    // the same key replaces (1-based, as WITH ORDINALITY counts).
    const logged = writes.map(([db, key, value]) => [db, keyText(key), value] as const);
    const lastAt = new Map<string, number>();
    const superseded: number[] = [];
    let puts = 0;
    for (const [i, [db, key, value]] of logged.entries()) {
      const at = lastAt.get(`${db}\u0000${key}`);
      if (at !== undefined) {
        superseded.push(at + 1);
        if (logged[at]![2] !== null) puts--;
      }
      lastAt.set(`${db}\u0000${key}`, i);
      if (value !== null) puts++;
    }
    const removes = lastAt.size - puts;
    const values: unknown[] = [origin, JSON.stringify(logged), at];
    const keep = superseded.length > 0 ? ` AND n <> ALL($${values.push(superseded)}::int[])` : '';
    const records = (removed: boolean): string =>
      `SELECT w->>0 AS db, w->>1 AS key, w->2 AS value FROM change, jsonb_array_elements(change.writes) WITH ORDINALITY AS e(w, n)
       WHERE jsonb_typeof(w->2) ${removed ? '=' : '<>'} 'null'${keep}`;
    // Every part of a WITH runs once, read or not; puts and removes never share a key. A part
    // with nothing to do is left out: planning it costs PostgreSQL more than the round trip it
    // saves (the DELETE's join, on a commit that removes nothing).
    // Written only while the log's last change is the one the operation saw (see `commitAhead`).
    const parts = [
      `change AS (INSERT INTO plinth_changes (origin, writes) SELECT $1, $2::jsonb WHERE coalesce((SELECT max(seq) FROM plinth_changes), 0) = $3 RETURNING seq, ${STAMP} AS stamp, writes)`,
    ];
    if (puts > 0) {
      parts.push(`put AS (INSERT INTO plinth_records (db, key, value) ${records(false)} ON CONFLICT (db, key) DO UPDATE SET value = excluded.value)`);
    }
    if (removes > 0) {
      parts.push(`gone AS (DELETE FROM plinth_records WHERE (db, key) IN (SELECT db, key FROM (${records(true)}) AS removed))`);
    }
    return { parts, values };
  };

  /** The change statement of `made`, with the pack rows (their expiry checked now) and its notification. */
  const statementOf = (made: PreparedChange<unknown>, packRows: PackRows | undefined): { text: string; values: unknown[] } => {
    const values = [...made.values];
    const parts = [...made.parts];
    // Told with the replica that applies it here, so that this process's own follower skips it.
    const told = options.replica === undefined ? 'seq::text' : `seq::text || ' ' || $${values.push(options.replica)}::text`;
    if (packRows !== undefined && packRows.rows.length > 0) {
      // Checked right before the statement is sent (with the lock held, or about to be taken by
      // the same round trip): see `PackRows.expired`.
      if (packRows.expired()) {
        throw Object.assign(new Error('the packs of this commit were uploaded over half the grace period ago'), { code: BUCKET_UNAVAILABLE_CODE });
      }
      parts.push(`packed AS (${packRowsInsert(values, packRows.rows)})`);
    }
    return { text: `WITH ${parts.join(',\n')} SELECT seq, stamp, pg_notify('plinth_changes', ${told}) FROM change`, values };
  };

  /**
   * A commit run ahead on the replica at the log's last change, in one round trip: the lock, the
   * change statement and COMMIT as one simple-protocol query, its values written in. The statement
   * writes only while the log's last change is still the one the operation saw, so when another
   * writer committed meanwhile it writes nothing and the commit goes the usual way (undefined).
   */
  const commitAhead = async <T>(
    client: pg.PoolClient,
    made: PreparedChange<T>,
    packRows: PackRows | undefined,
  ): Promise<{ result: T; change: Change } | undefined> => {
    const { text, values } = statementOf(made, packRows);
    try {
      const answers = (await timeBound(
        client,
        `BEGIN; ${lz4 ? "SET LOCAL default_toast_compression = 'lz4'; " : ''}SELECT pg_advisory_xact_lock(${WRITE_LOCK}); ${inlineValues(text, values)}; COMMIT`,
        [],
        WRITE_LOCK_QUERY_MS + BULK_QUERY_MS,
      )) as unknown as Array<pg.QueryResult<{ seq: string; stamp: string }>>;
      const row = answers.find((answer) => answer.fields.some((field) => field.name === 'stamp'))?.rows[0];
      return row === undefined ? undefined : { result: made.result, change: { seq: Number(row.seq), stamp: row.stamp, writes: made.writes } };
    } catch (err) {
      await rollback(client, err);
      throw err;
    }
  };

  const prepareAhead = <T>(at: number, { result, writes }: { result: T; writes: RecordWrite[] }): PreparedChange<T> => ({
    at,
    result,
    writes,
    ...(writes.length > 0 ? changeStatement(writes, at) : { parts: [], values: [] }),
  });

  return {
    clusterId,

    get schema() {
      return { database: Math.max(schema.version, SCHEMA_VERSION), known: SCHEMA_VERSION };
    },

    connected: () => reconnected,

    answering: () => connections.answering(),

    clockOffsetMs: () => databaseClock.offsetMs(),

    // One round trip for a commit prepared ahead whose log has not moved (`commitAhead`); else
    // three: BEGIN with the lock and a look at the log (the changes since the replica's read only
    // when there are some, then again after each catch-up), the change with its records and
    // notification in one prepared statement, COMMIT. Each round trip costs both ends CPU and
    // waits its turn on a busy machine, with the lock held.
    commit: (catchUp, after, prepare, packRows, ahead) =>
      withReadyClient(async (client) => {
        if (ahead !== undefined && ahead.writes.length > 0 && after() === ahead.at) {
          const committed = await commitAhead(client, ahead, packRows);
          if (committed !== undefined) return committed;
        }
        try {
          // One simple-protocol query (no parameters), several statements in one round trip: the
          // compression the change will be stored with (lz4 where the server has it), the lock,
          // then the log's start (it cannot move while the lock is held: pruning takes it too),
          // the last change's number (nearly always the replica's own position: nothing to catch
          // up, so no second round trip to look at the log) and PostgreSQL's clock, so that the
          // operation below takes its time from it.
          const start = await databaseClock.query<{ value: string | null; head: string | null; clock: number }>(
            client,
            `BEGIN; ${lz4 ? "SET LOCAL default_toast_compression = 'lz4'; " : ''}SELECT pg_advisory_xact_lock(${WRITE_LOCK}); SELECT (SELECT value FROM plinth_meta WHERE key = 'log_start') AS value, (SELECT max(seq) FROM plinth_changes) AS head, ${CLOCK_COLUMN}`,
            [],
            WRITE_LOCK_QUERY_MS,
          );
          const logStart = Number(start.rows[0]!.value ?? 0);
          const head = Number(start.rows[0]!.head ?? 0);
          // An operation run ahead on the replica at the change that is still the log's last saw
          // what it would see now: its outcome stands. Otherwise it runs again, caught up.
          let made = ahead !== undefined && ahead.at === head && after() === head ? ahead : undefined;
          if (made === undefined) {
            while (after() < head) {
              checkLogStart(after(), logStart);
              const behindBy = await readChanges(client, after());
              if (behindBy.length === 0) break;
              await catchUp(behindBy);
            }
            checkLogStart(after(), logStart);
            made = prepareAhead(after(), prepare());
          } else checkLogStart(after(), logStart);
          const { result, writes } = made;
          if (writes.length === 0) {
            await client.query('COMMIT');
            return { result };
          }
          const { text, values } = statementOf(made, packRows);
          const inserted = await timeBound<{ seq: string; stamp: string }>(client, text, values, BULK_QUERY_MS, true);
          if (inserted.rows.length === 0) throw new Error('the change log moved while the write lock was held');
          await timeBound(client, 'COMMIT', [], BULK_QUERY_MS);
          const seq = Number(inserted.rows[0]!.seq);
          return { result, change: { seq, stamp: inserted.rows[0]!.stamp, writes } };
        } catch (err) {
          await rollback(client, err);
          throw err;
        }
      }),

    prepareAhead,

    changesSince: (seq, limit) => withReadyClient((client) => fetchChanges(client, seq, limit)),

    logStart: async () => {
      await ready();
      return logStart();
    },

    stampOf: async (seq) => {
      await ready();
      return stampOf(seq);
    },

    pruneChanges: (before) =>
      withReadyClient(async (client) => {
        await client.query('BEGIN');
        try {
          // Under the write lock, so the newest change cannot be committed between the two statements.
          await timeBound(client, 'SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK], WRITE_LOCK_QUERY_MS);
          const pruned = await timeBound<{ count: number; last: string }>(
            client,
            `WITH gone AS (DELETE FROM plinth_changes WHERE at < to_timestamp($1 / 1000.0) AND seq < (SELECT max(seq) FROM plinth_changes) RETURNING seq)
             SELECT count(*)::int AS count, coalesce(max(seq), 0) AS last FROM gone`,
            [await onDatabaseClock(client, before)],
            BULK_QUERY_MS,
          );
          const { count, last } = pruned.rows[0]!;
          if (count > 0) {
            await client.query("INSERT INTO plinth_meta (key, value) VALUES ('log_start', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [last]);
          }
          await timeBound(client, 'COMMIT', [], BULK_QUERY_MS);
          return count;
        } catch (err) {
          await rollback(client, err);
          throw err;
        }
      }),

    snapshot: (each) =>
      withReadyClient(async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${SNAPSHOT_IDLE}'`);
          const last = (await client.query<{ seq: string; stamp: string }>(`SELECT seq, ${STAMP} AS stamp FROM plinth_changes ORDER BY seq DESC LIMIT 1`))
            .rows[0];
          await readAllRecords(client, each, BULK_QUERY_MS);
          await client.query('COMMIT');
          return last ? { seq: Number(last.seq), stamp: last.stamp } : { seq: 0 };
        } catch (err) {
          await rollback(client, err);
          throw err;
        }
      }),

    importRecords: (batches, verify) =>
      withReadyClient(async (client) => {
        // One transaction holds every record of the install being moved in: no statement bound,
        // and the write lock for as long as it takes (the cluster is empty).
        const q = (text: string, values: unknown[] = []) => timeBound(client, text, values, IMPORT_QUERY_MS);
        await q('BEGIN');
        try {
          await q('SET LOCAL statement_timeout = 0');
          await q('SET LOCAL lock_timeout = 0');
          await q("SET LOCAL idle_in_transaction_session_timeout = '10min'");
          await q('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK]);
          if ((await q('SELECT 1 FROM plinth_records LIMIT 1')).rows.length > 0) {
            throw Object.assign(new Error('The cluster at PLINTH_DATABASE_URL already holds records: records move only into an empty cluster.'), {
              code: CLUSTER_NOT_EMPTY,
            });
          }
          let records = 0;
          let changes = 0;
          let last = 0;
          for await (const writes of batches) {
            if (writes.length === 0) continue;
            const inserted = await q('INSERT INTO plinth_changes (origin, writes) VALUES ($1, $2) RETURNING seq', [
              `${origin}/import`,
              JSON.stringify(writes.map(([db, key, value]) => [db, keyText(key), value])),
            ]);
            await q(
              `INSERT INTO plinth_records (db, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
               ON CONFLICT (db, key) DO UPDATE SET value = excluded.value`,
              [writes.map((w) => w[0]), writes.map((w) => keyText(w[1])), writes.map((w) => JSON.stringify(w[2]))],
            );
            records += writes.length;
            changes++;
            last = Number((inserted.rows[0] as { seq: string }).seq);
          }
          await verify((each) => readAllRecords(client, async (batch) => each(batch), IMPORT_QUERY_MS));
          if (last > 0) await q("SELECT pg_notify('plinth_changes', $1)", [String(last)]);
          await q('COMMIT');
          return { records, changes };
        } catch (err) {
          await rollback(client, err);
          throw err;
        }
      }),

    async listen(wake) {
      let client: pg.Client | undefined;
      let stopped = false;
      const connect = async (): Promise<void> => {
        if (stopped) return;
        const next = new (boundedClientClass())(connectionSettings(options.url));
        next.on('error', () => undefined);
        // A change this replica's own process applied needs no read: see RecordsLogOptions.replica.
        next.on('notification', (message) => {
          if (options.replica === undefined || message.payload?.split(' ')[1] !== options.replica) wake();
        });
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

    takeRateTokens: (checks, fallbackAt) =>
      withReadyClient(async (client) => {
        await client.query('BEGIN');
        try {
          // Windows are PostgreSQL's, so every node counts in the same ones whatever its own clock says.
          const at = Math.round(Number((await databaseClock.query<{ clock: number }>(client, `SELECT ${CLOCK_COLUMN}`)).rows[0]!.clock)) || fallbackAt;
          const keys = checks.map((check) => ({ scope: check.scope, ...rateWindow(at, check.windowMs), hits: check.hits ?? 1, check }));
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
            if (exceedsCap(row.rows[0]?.hits ?? 0, key.hits, key.check.limit)) {
              retryAfterMs = Math.max(retryAfterMs, key.retryAfterMs);
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
          await rollback(client, err);
          throw err;
        }
      }),

    pruneCounters: (before) =>
      withReadyClient(async (client) => {
        const cutoff = await onDatabaseClock(client, before);
        return (await timeBound(client, 'DELETE FROM plinth_counters WHERE window_start < $1', [cutoff], BULK_QUERY_MS)).rowCount ?? 0;
      }),

    bucketLedger: createBucketLedger(withReadyClient),
    withClient: (fn) => withReadyClient(fn),
    analytics: clusterAnalytics(withReadyClient),

    alone: (task, fn) =>
      withReadyClient(async (client) => {
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
      return connections.errors();
    },
    close: () => connections.end(),
  };
}

/**
 * The upsert of pack rows (bucket-packs.ts `record`), its arrays appended to `values`: one row per
 * key (the last), so that it never touches a row twice.
 */
function packRowsInsert(values: unknown[], rows: PackRows['rows']): string {
  const last = [...new Map(rows.map((row) => [row.key, row])).values()];
  const at = (column: unknown[]): number => values.push(column);
  return `INSERT INTO plinth_packed_objects (key, pack, byte_offset, size, touched_ms)
     SELECT * FROM unnest($${at(last.map((r) => r.key))}::text[], $${at(last.map((r) => r.pack))}::text[], $${at(last.map((r) => r.offset))}::bigint[], $${at(last.map((r) => r.size))}::bigint[], $${at(last.map((r) => Math.floor(r.touchedMs)))}::bigint[])
     WHERE EXISTS (SELECT 1 FROM change)
     ON CONFLICT (key) DO UPDATE SET pack = excluded.pack, byte_offset = excluded.byte_offset, size = excluded.size, touched_ms = excluded.touched_ms`;
}

/** Reads `plinth_records` through a cursor, in batches, inside the caller's transaction. */
async function readAllRecords(
  client: pg.PoolClient,
  each: (batch: Array<[ReplicatedDb, Key, unknown]>) => Promise<void>,
  queryTimeoutMs: number,
): Promise<void> {
  await client.query('DECLARE plinth_records_cursor NO SCROLL CURSOR FOR SELECT db, key, value FROM plinth_records');
  for (;;) {
    const batch = await timeBound<{ db: ReplicatedDb; key: string; value: unknown }>(client, 'FETCH 2000 FROM plinth_records_cursor', [], queryTimeoutMs);
    if (batch.rows.length === 0) break;
    await each(batch.rows.map((row) => [row.db, JSON.parse(row.key) as Key, row.value]));
  }
}

/** A lock number for a task name: advisory locks take integers. */
export function hashTask(task: string): number {
  let hash = 7_100_000;
  for (const char of task) hash = (hash * 31 + char.charCodeAt(0)) | 0;
  return hash;
}
