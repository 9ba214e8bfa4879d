/**
 * Which request bodies an HTTP thread may receive into memory instead of a spool file. Writing a
 * part of a large deploy to disk, reading it back in the ingest worker and unlinking it costs
 * more server time than unpacking it, and its pages also have to go through the sync that makes
 * the blobs durable; a body of known size that fits is therefore received straight into one
 * buffer. The budget bounds what all bodies in memory on this thread hold together; past it, or
 * for a body without a Content-Length, the body is spooled as before.
 */
export interface BodyMemoryOptions {
  /** Bytes all bodies held in memory on this thread may take together; 0 = always spool. */
  budgetBytes: number;
  /** Largest single body held in memory (a part of 16 MB plus its archive overhead fits). */
  maxBodyBytes: number;
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
  stats(): BodyMemoryStats;
}

export function createBodyMemory(options: BodyMemoryOptions): BodyMemory {
  const maxBodyBytes = Math.min(options.maxBodyBytes, options.budgetBytes);
  let heldBytes = 0;
  let heldBodies = 0;
  let bodiesInMemory = 0;
  let bodiesSpooled = 0;
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
    stats: () => ({ heldBytes, heldBodies, bodiesInMemory, bodiesSpooled }),
  };
}
