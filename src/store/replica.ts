import { createHash, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';
import { TransactionFlags, type Database, type Key } from 'lmdb';
import type { MetadataDbs } from './metadata-dbs.js';
import type { RecordsLog } from './records-log.js';
import { REPLICATED_DBS, type RecordWrite } from './replicated-dbs.js';

/**
 * The local LMDB as a replica of PostgreSQL (DESIGN "Past one machine"). Every store operation is
 * written once, as a function that reads and writes the LMDB databases; in a cluster it runs
 * like this:
 *
 * 1. under PostgreSQL's cluster-wide write lock, the replica catches up with the change log;
 * 2. the function runs in a local LMDB write transaction that is always aborted (a dry run): its
 *    reads see its own writes as in any transaction, and every put and remove is recorded;
 * 3. the recorded writes go to PostgreSQL as one numbered change, in the same transaction as the
 *    records they change, and the lock is released;
 * 4. the replica applies the change like any other, and the function's result is returned.
 *
 * So the rules run identically on both backends, the change log is exactly each transaction's
 * writes, and every replica applies them verbatim, in order.
 */

/** Where a process keeps its own name; worker threads started after it was set inherit it. */
export const PROCESS_TAG_KEY = 'plinth:process-tag';

/** This process's random name, the same on every thread it starts after the first call. */
export function processTag(): string {
  const found = getEnvironmentData(PROCESS_TAG_KEY);
  if (typeof found === 'string') return found;
  const tag = randomUUID();
  setEnvironmentData(PROCESS_TAG_KEY, tag);
  return tag;
}

/**
 * Names the LMDB replica at `path` as this process opens it, the same on every thread of the
 * process: a commit's notification carries it, so that the thread that follows the log is not
 * woken to read back a change another thread of its process has just applied to the same files.
 * Worker threads inherit the process's tag from the thread that started them (the main thread
 * opens its store before it starts any); another process, or another replica, has another tag.
 */
export function replicaTag(path: string): string {
  return createHash('sha256')
    .update(`${processTag()}\u0000${resolve(path)}`)
    .digest('base64url')
    .slice(0, 16);
}

/** How often a replica looks for changes besides being woken by NOTIFY. */
export const REPLICA_POLL_MS = 250;

const ABORT = Symbol('dry run');

/**
 * Wraps the replicated databases so that writes are recorded during a dry run and refused
 * outside one: in a cluster, a write that bypassed PostgreSQL would fork this replica.
 */
export function recordingDbs(dbs: MetadataDbs): { dbs: MetadataDbs; dryRun<T>(fn: () => T): { result: T; writes: RecordWrite[] } } {
  let recording: RecordWrite[] | undefined;
  const wrapped = { ...dbs } as MetadataDbs;
  for (const name of REPLICATED_DBS) {
    const db = dbs[name] as unknown as Database<unknown, Key>;
    // Bound once: reads go through here too (on serving threads' cache misses).
    const methods = new Map<PropertyKey, unknown>([
      [
        'put',
        (key: Key, value: unknown) => {
          if (recording === undefined) throw new Error(`write to ${name} outside a transaction`);
          recording.push([name, key, value]);
          return db.put(key, value);
        },
      ],
      [
        'remove',
        (key: Key) => {
          if (recording === undefined) throw new Error(`write to ${name} outside a transaction`);
          recording.push([name, key, null]);
          return db.remove(key);
        },
      ],
    ]);
    (wrapped as unknown as Record<string, unknown>)[name] = new Proxy(db, {
      get(target, property, receiver) {
        const known = methods.get(property);
        if (known !== undefined) return known;
        const found = Reflect.get(target, property, receiver) as unknown;
        if (typeof found !== 'function') return found;
        const bound = (found as (...args: unknown[]) => unknown).bind(target);
        methods.set(property, bound);
        return bound;
      },
    });
  }
  return {
    dbs: wrapped,
    dryRun(fn) {
      let outcome: { result: ReturnType<typeof fn>; writes: RecordWrite[] } | undefined;
      try {
        dbs.env.transactionSync(() => {
          recording = [];
          try {
            outcome = { result: fn(), writes: recording };
          } finally {
            recording = undefined;
          }
          // Nothing of the dry run is kept: the writes are applied once PostgreSQL has them.
          throw ABORT;
        });
      } catch (err) {
        if (err !== ABORT) throw err;
      }
      return outcome!;
    },
  };
}

/**
 * Record families (replicated databases) this release knows. During a rolling upgrade the log
 * may hold writes to a family only a newer release has (a new kind of record): such a write is
 * skipped, not applied, so an older replica keeps following instead of stalling on it. The
 * replica remembers which families it skipped (`skipped:<db>` in its state, with the number of
 * writes); once upgraded to a release that knows one of them, it cannot resume and is rebuilt
 * from PostgreSQL at start-up (see `canResume`), so it never serves a family it has only part of.
 */
const KNOWN_DBS: ReadonlySet<string> = new Set(REPLICATED_DBS);
const SKIPPED_PREFIX = 'skipped:';

/** Writes skipped per unknown family, in one batch of changes. */
export type SkippedWrites = Record<string, number>;

function rememberSkipped(dbs: MetadataDbs, skipped: SkippedWrites): void {
  for (const [db, writes] of Object.entries(skipped)) {
    const before = dbs.replicaState.get(`${SKIPPED_PREFIX}${db}`);
    void dbs.replicaState.put(`${SKIPPED_PREFIX}${db}`, (typeof before === 'number' ? before : 0) + writes);
  }
}

/** The families this replica skipped writes to (an older release did) that `known` holds now. */
export function skippedFamiliesNowKnown(dbs: MetadataDbs, known: ReadonlySet<string> = KNOWN_DBS): string[] {
  return skippedKeys(dbs)
    .map((key) => key.slice(SKIPPED_PREFIX.length))
    .filter((db) => known.has(db));
}

const skippedKeys = (dbs: MetadataDbs): string[] => [...dbs.replicaState.getKeys({ start: SKIPPED_PREFIX, end: `${SKIPPED_PREFIX}\uffff`, snapshot: false })];

/**
 * Applies changes in order, each once: a change at or below `applied` is skipped. Writes to a
 * family this release does not know are skipped and counted (see KNOWN_DBS).
 */
export function applyChanges(dbs: MetadataDbs, changes: ReadonlyArray<ChangeToApply>): Promise<AppliedChanges> {
  return dbs.env.transaction(() => writeChanges(dbs, changes));
}

/**
 * `applyChanges` in a synchronous LMDB transaction, on this thread in this event turn: for the
 * change a commit has just made, whose writes its dry run recorded a moment ago. The answer waits
 * for it, and an asynchronous transaction waits its turn on LMDB's writer thread besides (on a
 * busy machine, often longer than the writes themselves take).
 */
export function applyChangesSync(dbs: MetadataDbs, changes: ReadonlyArray<ChangeToApply>): AppliedChanges {
  // Committed and visible at once, but not flushed to disk before it returns (LMDB's next sync
  // takes it): the change is durable once PostgreSQL has committed it, and a replica that loses
  // its last changes to a power cut loses its applied position with them (the same transaction),
  // so it applies them again from the log. The flush was most of this call's time on a busy disk.
  return dbs.env.transactionSync(() => writeChanges(dbs, changes), APPLY_FLAGS);
}

/** A synchronous transaction's default flags, and NO_SYNC_FLUSH. */
const APPLY_FLAGS = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT | TransactionFlags.NO_SYNC_FLUSH;

type ChangeToApply = { seq: number; stamp: string; writes: readonly RecordWrite[] };

function writeChanges(dbs: MetadataDbs, changes: ReadonlyArray<ChangeToApply>): AppliedChanges {
  let applied = appliedSeq(dbs);
  let stamp: string | undefined;
  const touchedSites: unknown[] = [];
  const skipped: SkippedWrites = {};
  for (const change of changes) {
    if (change.seq <= applied) continue;
    for (const [db, key, value] of change.writes) {
      if (!KNOWN_DBS.has(db)) {
        skipped[db] = (skipped[db] ?? 0) + 1;
        continue;
      }
      const target = dbs[db] as unknown as Database<unknown, Key>;
      if (value === null) void target.remove(key);
      else void target.put(key, value);
      if (db === 'sites' && value !== null) touchedSites.push(value);
    }
    applied = change.seq;
    stamp = change.stamp;
  }
  void dbs.replicaState.put('applied', applied);
  if (stamp !== undefined) void dbs.replicaState.put('appliedStamp', stamp);
  rememberSkipped(dbs, skipped);
  return { applied, touchedSites: touchedSites as AppliedChanges['touchedSites'], skipped };
}

export interface AppliedChanges {
  applied: number;
  /** Site records the changes wrote, for the feed that tells serving threads. */
  touchedSites: Array<{ id: string; name: string }>;
  /** Writes to families this release does not know, skipped, per family. */
  skipped: SkippedWrites;
}

/** The last change this replica applied (0: none). */
export function appliedSeq(dbs: MetadataDbs): number {
  return (dbs.replicaState.get('applied') as number | undefined) ?? 0;
}

/**
 * Makes the replica follow `log`'s cluster. Nothing to do if it already does and can resume:
 * the log still holds every change after its position, and the change at its position is the one
 * it applied (after PostgreSQL was restored to an earlier point, it is not, and the replica is
 * ahead of the record). Otherwise every replicated database is emptied and filled from a snapshot
 * of PostgreSQL, and the replica starts at the change that snapshot reflects.
 */
export async function bootstrapReplica(
  dbs: MetadataDbs,
  log: Pick<RecordsLog, 'clusterId' | 'logStart' | 'stampOf' | 'snapshot'>,
): Promise<'followed' | 'rebuilt'> {
  const clusterId = log.clusterId;
  if (dbs.replicaState.get('cluster') === clusterId && (await canResume(dbs, log))) return 'followed';
  // Rebuilding empties the replicated databases: never those of an embedded install whose
  // records are not in this cluster yet.
  if (dbs.replicaState.get('cluster') === undefined && dbs.replicaState.get('migratedTo') !== clusterId && holdsRecords(dbs)) {
    throw Object.assign(
      new Error(
        'PLINTH_DATA_DIR holds the records of an embedded install, which are not in the cluster at PLINTH_DATABASE_URL: ' +
          'move them there first with `plinth admin migrate --to-cluster` (into an empty database), or give this node an empty PLINTH_DATA_DIR.',
      ),
      { code: EMBEDDED_RECORDS },
    );
  }
  const snapshot = log.snapshot;
  await dbs.env.transaction(() => {
    for (const name of REPLICATED_DBS) void (dbs[name] as unknown as Database<unknown, Key>).clearAsync();
    for (const key of skippedKeys(dbs)) void dbs.replicaState.remove(key);
    void dbs.replicaState.remove('cluster');
    void dbs.replicaState.put('applied', 0);
    void dbs.replicaState.remove('appliedStamp');
  });
  const head = await snapshot((batch) =>
    dbs.env.transaction(() => {
      const skipped: SkippedWrites = {};
      for (const [db, key, value] of batch) {
        if (KNOWN_DBS.has(db)) void (dbs[db] as unknown as Database<unknown, Key>).put(key, value);
        else skipped[db] = (skipped[db] ?? 0) + 1;
      }
      rememberSkipped(dbs, skipped);
    }),
  );
  await dbs.env.transaction(() => {
    void dbs.replicaState.put('applied', head.seq);
    if (head.stamp !== undefined) void dbs.replicaState.put('appliedStamp', head.stamp);
    void dbs.replicaState.put('cluster', clusterId);
    void dbs.replicaState.remove('migratedTo');
  });
  return 'rebuilt';
}

/**
 * Whether the replica can go on from its position in `log`: the log still holds every change
 * after it, the change at it is the one the replica applied, and it skipped no writes to a family
 * this release knows (it ran an older release then).
 */
export async function canResume(dbs: MetadataDbs, log: Pick<RecordsLog, 'logStart' | 'stampOf'>): Promise<boolean> {
  // It skipped records of a family this release knows: it holds only part of that family.
  if (skippedFamiliesNowKnown(dbs).length > 0) return false;
  // The position and its stamp are read together, before any wait: another thread of this node
  // may apply changes meanwhile (a deploy's commit catches up), and a stamp read after that would
  // belong to a later position than the one compared.
  const applied = appliedSeq(dbs);
  const appliedStamp = dbs.replicaState.get('appliedStamp');
  const logStart = await log.logStart();
  if (applied < logStart) return false;
  // Nothing applied yet, or the change at the position was pruned (the log starts right after it).
  if (applied === 0 || applied === logStart) return true;
  return (await log.stampOf(applied)) === appliedStamp;
}

/** Raised instead of rebuilding a data directory that holds an embedded install's own records. */
export const EMBEDDED_RECORDS = 'EEMBEDDED_RECORDS';

function holdsRecords(dbs: MetadataDbs): boolean {
  return REPLICATED_DBS.some((db) => {
    for (const _key of (dbs[db] as unknown as Database<unknown, Key>).getKeys({ limit: 1 })) return true;
    return false;
  });
}

/**
 * Which cluster the data directory belongs to, if any: the one its replica follows, or the one
 * its embedded records were moved into. Opened without PLINTH_DATABASE_URL, such a directory
 * would take writes no other node ever sees.
 */
export function clusterOf(dbs: MetadataDbs): string | undefined {
  const id = dbs.replicaState.get('cluster') ?? dbs.replicaState.get('migratedTo');
  return typeof id === 'string' ? id : undefined;
}

/**
 * The cluster a complete replica follows: set only once a snapshot was copied in whole, so such
 * a replica can serve on its own while PostgreSQL is away.
 */
export function clusterOfReplica(dbs: MetadataDbs): string | undefined {
  const id = dbs.replicaState.get('cluster');
  return typeof id === 'string' ? id : undefined;
}

/** Whether the replica follows this cluster (a thread that does not bootstrap checks this). */
export function followsCluster(dbs: MetadataDbs, clusterId: string): boolean {
  return dbs.replicaState.get('cluster') === clusterId;
}
