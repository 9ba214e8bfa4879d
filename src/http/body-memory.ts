/**
 * Which request bodies an HTTP thread may receive into memory instead of a spool file. Writing a
 * part of a large deploy to disk, reading it back in the ingest worker and unlinking it costs
 * more server time than unpacking it, and its pages also have to go through the sync that makes
 * the blobs durable; a body of known size that fits is therefore received straight into one
 * buffer. The budget bounds what all bodies in memory on this thread hold together; past it, or
 * for a body without a Content-Length, the body is spooled as before.
 *
 * Buffers of large bodies are kept for the next ones: the ingest worker hands each back once it
 * has unpacked it (see ingest/pool.ts). A fresh 16 MB buffer per part costs the page faults of
 * touching new memory here, and in the worker a garbage collection every few parts, which V8
 * starts when transferred buffers add up; a reused one costs neither.
 */
export interface BodyMemoryOptions {
  /** Bytes all bodies held in memory on this thread may take together; 0 = always spool. */
  budgetBytes: number;
  /** Largest single body held in memory (a part of 16 MB plus its archive overhead fits). */
  maxBodyBytes: number;
  /** Kept buffers are let go after this long without a body (default 10 s). */
  keepMs?: number;
}

export interface BodyMemoryStats {
  /** Bytes reserved by bodies held in memory right now. */
  heldBytes: number;
  /** Bodies held in memory right now. */
  heldBodies: number;
  /** Bodies received into memory since the thread started. */
  bodiesInMemory: number;
  /** Bodies spooled to disk since the thread started. */
  bodiesSpooled: number;
  /** Bytes of buffers kept for the next bodies. */
  keptBytes: number;
  /** Bodies received into a kept buffer since the thread started. */
  buffersReused: number;
}

export interface BodyMemory {
  /**
   * Reserves room for a body of `bytes`; false when it is larger than a body may be or the
   * budget would be exceeded (the body is then spooled). Each reservation is released once.
   */
  reserve(bytes: number): boolean;
  release(bytes: number): void;
  /** Counts a body that was spooled instead. */
  noteSpooled(): void;
  /** A buffer of `bytes` for a reserved body: a view of a kept one when one fits, else new. */
  take(bytes: number): Buffer;
  /** Whether `buffer` came from `take`: only such a buffer may move to a worker and come back. */
  owns(buffer: ArrayBufferLike): boolean;
  /** A buffer back from the worker, kept for the next body (within the budget) or let go. */
  recycle(buffer: ArrayBuffer): void;
  stats(): BodyMemoryStats;
}

/** Below this a body gets a buffer of its own: allocating it is cheap, keeping it is not worth it. */
const KEEP_MIN_BYTES = 1024 * 1024;
/** Kept buffers are sized in whole MiB, so parts of slightly different sizes share them. */
const SIZE_STEP = 1024 * 1024;
const DEFAULT_KEEP_MS = 10_000;

export function createBodyMemory(options: BodyMemoryOptions): BodyMemory {
  const maxBodyBytes = Math.min(options.maxBodyBytes, options.budgetBytes);
  const keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
  let heldBytes = 0;
  let heldBodies = 0;
  let bodiesInMemory = 0;
  let bodiesSpooled = 0;
  let buffersReused = 0;
  const ours = new WeakSet<ArrayBufferLike>();
  // Smallest first, so a body takes the smallest buffer that fits.
  const kept: ArrayBuffer[] = [];
  let keptBytes = 0;
  let idleTimer: NodeJS.Timeout | undefined;

  const letGo = (): void => {
    kept.length = 0;
    keptBytes = 0;
  };
  // An idle thread gives the memory back; any body activity keeps the buffers for another while.
  const touch = (): void => {
    clearTimeout(idleTimer);
    if (kept.length === 0) return;
    idleTimer = setTimeout(letGo, keepMs);
    idleTimer.unref();
  };

  return {
    reserve(bytes) {
      if (bytes <= 0 || bytes > maxBodyBytes || heldBytes + bytes > options.budgetBytes) return false;
      heldBytes += bytes;
      heldBodies++;
      bodiesInMemory++;
      return true;
    },
    release(bytes) {
      heldBytes -= bytes;
      heldBodies--;
    },
    noteSpooled() {
      bodiesSpooled++;
    },
    take(bytes) {
      if (bytes < KEEP_MIN_BYTES) return Buffer.allocUnsafeSlow(bytes);
      const index = kept.findIndex((buffer) => buffer.byteLength >= bytes);
      let buffer: ArrayBuffer;
      if (index >= 0) {
        buffer = kept.splice(index, 1)[0]!;
        keptBytes -= buffer.byteLength;
        buffersReused++;
      } else {
        buffer = Buffer.allocUnsafeSlow(Math.ceil(bytes / SIZE_STEP) * SIZE_STEP).buffer as ArrayBuffer;
      }
      ours.add(buffer);
      touch();
      return Buffer.from(buffer, 0, bytes);
    },
    owns: (buffer) => ours.has(buffer),
    recycle(buffer) {
      // A buffer still in use elsewhere arrives detached (length 0); a small one is not kept.
      if (buffer.byteLength < KEEP_MIN_BYTES || keptBytes + buffer.byteLength > options.budgetBytes) return;
      ours.add(buffer);
      const at = kept.findIndex((other) => other.byteLength >= buffer.byteLength);
      kept.splice(at < 0 ? kept.length : at, 0, buffer);
      keptBytes += buffer.byteLength;
      touch();
    },
    stats: () => ({ heldBytes, heldBodies, bodiesInMemory, bodiesSpooled, keptBytes, buffersReused }),
  };
}
