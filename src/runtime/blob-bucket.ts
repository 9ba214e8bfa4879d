import type { Logger } from '../log.js';
import type { BlobStore } from '../store/index.js';

/** How often each node brings its blob cache back within `PLINTH_BLOB_CACHE_MB`. */
const CACHE_TRIM_INTERVAL_MS = 60_000;

export interface CacheTrimmer {
  /** Bytes the cache held after the last pass that measured it (undefined before one, or with no budget). */
  cachedBytes(): number | undefined;
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

/**
 * This node's cache upkeep: every minute, least recently used blob files go until the cache is
 * within its budget (between two passes it may run over by what arrived). One per node, on the
 * main thread; never two passes at once.
 */
export function startCacheTrimmer(options: { blobs: BlobStore; log: Logger; intervalMs?: number }): CacheTrimmer {
  let running: Promise<void> | undefined;
  let cachedBytes: number | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = options.blobs
      .trimCache()
      .then(
        (trim) => {
          cachedBytes = trim.cachedBytes ?? cachedBytes;
          if (trim.files > 0) options.log.info({ files: trim.files, bytes: trim.bytes }, 'blobs.cache_trimmed');
        },
        (err: unknown) => options.log.error({ err }, 'blobs.cache_trim_failed'),
      )
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs ?? CACHE_TRIM_INTERVAL_MS);
  timer.unref();
  return {
    cachedBytes: () => cachedBytes,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
