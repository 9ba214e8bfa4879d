/**
 * Work of a kind that runs on libuv's thread pool, bounded across a process's threads. The pool
 * has four threads for everything of the kind (file reads, compression, hashing, name lookups);
 * work that holds one for long, and that a visitor or a user can start at will, gets a bound of
 * its own so the rest of the process keeps some: site password hashes (scrypt, about 70 ms and
 * 16 MB each) and outbound name lookups (getaddrinfo, which waits half a minute and more for a
 * DNS server that does not answer, and is not given back when its caller stops waiting). Each
 * kind is one Int32 in a SharedArrayBuffer that the main thread makes and every HTTP thread takes.
 */
export interface ProcessSlots {
  passwordHashes: SharedArrayBuffer;
  outboundLookups: SharedArrayBuffer;
}

export function createProcessSlots(): ProcessSlots {
  return { passwordHashes: new SharedArrayBuffer(4), outboundLookups: new SharedArrayBuffer(4) };
}

/** A count of one kind of work running at once; `tryTake` is false when the bound is reached. */
export interface Slots {
  tryTake(): boolean;
  give(): void;
}

/** The slots of one kind, counted in `shared` (a thread of its own without it); `limit` 0 means no bound. */
export function slotsOf(limit: number, shared: SharedArrayBuffer = new SharedArrayBuffer(4)): Slots {
  if (limit <= 0) return { tryTake: () => true, give: () => undefined };
  const running = new Int32Array(shared, 0, 1);
  return {
    tryTake() {
      for (;;) {
        const seen = Atomics.load(running, 0);
        if (seen >= limit) return false;
        if (Atomics.compareExchange(running, 0, seen, seen + 1) === seen) return true;
      }
    },
    give: () => void Atomics.sub(running, 0, 1),
  };
}
