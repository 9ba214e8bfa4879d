import type { Logger } from '../log.js';
import type { BlobStore } from '../store/index.js';

/** How often each node brings its blob cache back within `PLINTH_BLOB_CACHE_MB`. */
const CACHE_TRIM_INTERVAL_MS = 60_000;

/**
 * This node's cache upkeep: every minute, least recently used blob files go until the cache is
 * within its budget (between two passes it may run over by what arrived). One per node, on the
 * main thread; never two passes at once. Returns a stop function that waits for a pass in progress.
 */
export function startCacheTrimmer(options: { blobs: BlobStore; log: Logger; intervalMs?: number }): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = options.blobs
      .trimCache()
      .then(
        (evicted) => {
          if (evicted.files > 0) options.log.info({ ...evicted }, 'blobs.cache_trimmed');
        },
        (err: unknown) => options.log.error({ err }, 'blobs.cache_trim_failed'),
      )
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs ?? CACHE_TRIM_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
