import { join } from 'node:path';
import { createBlobStore } from './blob-store.js';
import { openMetadata } from './metadata.js';
import type { BlobStore, Store, StoreOptions } from './types.js';

/**
 * Opens the LMDB index at `<dir>/meta` and the blob store at `<dir>/blobs` (both created if
 * missing). Synchronous; open one per thread that needs it and `close()` it on shutdown.
 * Leftover temp files are not swept here: call `blobs.sweepTemp` with your own policy.
 */
export function openStore(options: StoreOptions): Store {
  const now = options.now ?? Date.now;
  const blobs = createBlobStore({ dir: join(options.dir, 'blobs'), now });
  return { blobs, ...openMetadata(join(options.dir, 'meta'), now, blobs) };
}

/**
 * The blob store alone, for threads that write blobs but must not open LMDB (ingest workers).
 * Same layout as `openStore(options).blobs`; nothing to close.
 */
export function openBlobStore(options: StoreOptions): BlobStore {
  return createBlobStore({ dir: join(options.dir, 'blobs'), now: options.now ?? Date.now });
}
