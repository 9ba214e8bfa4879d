import { join } from 'node:path';
import { createBlobStore } from './blob-store.js';
import { createBucketBlobStore } from './bucket-blob-store.js';
import { openMetadataDbs } from './metadata-dbs.js';
import { openMetadata } from './metadata.js';
import { openRecordsLog } from './records-log.js';
import { bootstrapReplica, followsCluster } from './replica.js';
import type { BlobStore, ClusterStoreOptions, Store, StoreOptions } from './types.js';

/**
 * Opens the LMDB index at `<dir>/meta` and the blob store at `<dir>/blobs` (both created if
 * missing); with `bucket`, blobs live in that bucket and `<dir>/blobs` is this node's cache of
 * them. Synchronous; open one per thread that needs it and `close()` it on shutdown.
 * Leftover temp files are not swept here: call `blobs.sweepTemp` with your own policy.
 */
export function openStore(options: StoreOptions): Store {
  const now = options.now ?? Date.now;
  const blobs = openBlobs(options, now);
  return { blobs, ...openMetadata(join(options.dir, 'meta'), now, blobs) };
}

/**
 * Opens the store in a cluster: records in PostgreSQL (migrated to the current schema first),
 * the LMDB at `<dir>/meta` as this node's replica of them. With `bootstrap` the replica is built
 * from a snapshot when it does not follow this database yet; without, it must already (one thread
 * per node bootstraps before the others connect). Embedded options open the embedded store.
 */
export async function connectStore(options: StoreOptions | ClusterStoreOptions): Promise<Store> {
  if (!('databaseUrl' in options) || !options.databaseUrl) return openStore(options);
  const now = options.now ?? Date.now;
  const records = await openRecordsLog({ url: options.databaseUrl, origin: options.origin, maxConnections: options.maxConnections });
  const metaPath = join(options.dir, 'meta');
  try {
    const dbs = openMetadataDbs(metaPath);
    try {
      if (options.bootstrap) await bootstrapReplica(dbs, records);
      else if (!followsCluster(dbs, records.clusterId))
        throw new Error(`${metaPath} does not follow the cluster at PLINTH_DATABASE_URL yet; the main thread builds it at start-up.`);
    } finally {
      await dbs.env.close();
    }
  } catch (err) {
    await records.close();
    throw err;
  }
  const blobs = openBlobs(options, now);
  const store: Store = { blobs, ...openMetadata(metaPath, now, blobs, records) };
  await store.cluster!.catchUp();
  // Records of a former layout are moved through PostgreSQL, once, by whichever thread comes first.
  await store.liftLegacyDomains();
  return store;
}

/**
 * The blob store alone, for threads that write blobs but must not open LMDB (ingest workers).
 * Same layout as `openStore(options).blobs`; nothing to close.
 */
export function openBlobStore(options: StoreOptions): BlobStore {
  return openBlobs(options, options.now ?? Date.now);
}

function openBlobs(options: StoreOptions, now: () => number): BlobStore {
  const dir = join(options.dir, 'blobs');
  return options.bucket === undefined ? createBlobStore({ dir, now }) : createBucketBlobStore({ dir, now, bucket: options.bucket });
}
