import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openBlobs } from './blobs-entry.js';
import { openMetadataDbs, type MetadataDbs } from './metadata-dbs.js';
import { openMetadata, type Store } from './metadata.js';
import { openRecordsLog } from './records-log.js';
import { bootstrapReplica, canResume, clusterOfReplica, followsCluster, replicaTag } from './replica.js';
import type { ClusterStoreOptions, StoreOptions } from './types.js';

/**
 * Opens the LMDB index at `<dir>/meta` and the blob store at `<dir>/blobs` (both created if
 * missing); with `bucket`, blobs live in that bucket and `<dir>/blobs` is this node's cache of
 * them. Synchronous; open one per thread that needs it and `close()` it on shutdown. Never a
 * second one on the same directory in a thread whose first is still open: opening takes LMDB's
 * write lock synchronously (lmdb-js opens each table in a write transaction), and when the first
 * store's writer holds that lock for a transaction whose callback must run on this same thread,
 * each waits for the other for good.
 * Leftover temp files are not swept here: call `blobs.sweepTemp` with your own policy.
 */
export function openStore(options: StoreOptions): Store {
  makeDataDir(options.dir);
  const now = options.now ?? Date.now;
  const blobs = openBlobs(options, now);
  return { blobs, ...openMetadata(join(options.dir, 'meta'), now, blobs) };
}

/**
 * Opens the store in a cluster: records in PostgreSQL (migrated to the current schema first),
 * the LMDB at `<dir>/meta` as this node's replica of them. With `bootstrap` the replica is built
 * from a snapshot when it does not follow this database yet; without, it must already (one thread
 * per node bootstraps before the others connect). With `startWithoutDatabase`, a complete replica
 * opens while PostgreSQL cannot be reached. Embedded options open the embedded store.
 */
export async function connectStore(options: StoreOptions | ClusterStoreOptions): Promise<Store> {
  if (!('databaseUrl' in options) || !options.databaseUrl) return openStore(options);
  makeDataDir(options.dir);
  const base = options.now ?? Date.now;
  const metaPath = join(options.dir, 'meta');
  const replicaOf = options.startWithoutDatabase ? await withDbs(metaPath, (dbs) => clusterOfReplica(dbs)) : undefined;
  const records = await openRecordsLog({
    url: options.databaseUrl,
    origin: options.origin,
    replica: replicaTag(metaPath),
    maxConnections: options.maxConnections,
    now: base,
    onClockOffset: options.onClockOffset,
    ...(replicaOf !== undefined ? { offline: { clusterId: replicaOf, resumable: (log) => withDbs(metaPath, (dbs) => canResume(dbs, log)) } } : {}),
  });
  try {
    await withDbs(metaPath, async (dbs) => {
      // Offline, the replica is checked once PostgreSQL answers (see RecordsLogOptions.offline).
      if (!records.connected()) return;
      if (options.bootstrap) await bootstrapReplica(dbs, records);
      else if (!followsCluster(dbs, records.clusterId))
        throw new Error(`${metaPath} does not follow the cluster at PLINTH_DATABASE_URL yet; the main thread builds it at start-up.`);
    });
  } catch (err) {
    await records.close();
    throw err;
  }
  // The node judges time by PostgreSQL's clock (database-clock.ts).
  const now = (): number => base() + records.clockOffsetMs();
  const blobs = openBlobs(options, now, records.bucketLedger);
  const store: Store = { blobs, ...openMetadata(metaPath, now, blobs, records) };
  // Offline, both wait for PostgreSQL: catching up as the node follows it, the lift for the next start.
  if (records.connected()) {
    await store.cluster!.catchUp();
    // Records of a former layout are moved through PostgreSQL, once, by whichever thread comes first.
    await store.liftLegacyDomains();
  }
  return store;
}

async function withDbs<T>(metaPath: string, fn: (dbs: MetadataDbs) => T | Promise<T>): Promise<T> {
  const dbs = openMetadataDbs(metaPath);
  try {
    return await fn(dbs);
  } finally {
    await dbs.env.close();
  }
}

/**
 * Makes the data directory, if missing, readable by its owner alone: it holds the records (the
 * service's secrets in clear among them) and the blobs of every site, those of password-protected
 * and members-only sites too, whose files are written under the umask (`0644` under the usual
 * 022). A directory that exists keeps the mode its operator gave it (the shipped unit makes it
 * `0750`, for a backup group).
 */
export function makeDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}
