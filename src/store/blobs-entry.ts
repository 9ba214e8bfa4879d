import { join } from 'node:path';
import { createBlobStore } from './blob-store.js';
import { createBucketBlobStore } from './bucket-blob-store.js';
import type { BucketLedger } from './bucket-ledger.js';
import type { BlobStore, StoreOptions } from './types.js';

export type { BlobStore } from './types.js';
export { createSyncHelper, type RunSync, type SyncHelper } from './filesystem-sync.js';
export { sizeIfExists } from './atomic-file.js';

/**
 * The store's second entry: the blob store alone, for the ingest threads. It loads neither LMDB
 * nor the PostgreSQL client, so a thread stopped while it starts (a pool closed as it grows)
 * never stops inside LMDB's native registration, which ends the whole process.
 */

/**
 * The blob store alone, for threads that write blobs but must not open LMDB (ingest workers).
 * Same layout as `openStore(options).blobs`; nothing to close.
 */
export function openBlobStore(options: StoreOptions): BlobStore {
  return openBlobs(options, options.now ?? Date.now);
}

export function openBlobs(options: StoreOptions, now: () => number, ledger?: BucketLedger): BlobStore {
  const dir = join(options.dir, 'blobs');
  return options.bucket === undefined ? createBlobStore({ dir, now }) : createBucketBlobStore({ dir, now, bucket: options.bucket, ledger });
}
