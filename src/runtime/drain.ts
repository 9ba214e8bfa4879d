import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError } from '../errors.js';
import type { Store } from '../store/index.js';

/**
 * Pieces of a graceful stop for one HTTP thread: wait (bounded) for the responses still owed,
 * then make sure nothing cut off by that bound can still publish.
 */

const POLL_MS = 20;

/**
 * Resolves true once `pending` is empty, false when `graceMs` ran out first or `hurry` fired.
 * Polling keeps the hot path free of any completion callback; a stop can afford 20 ms.
 */
export async function waitForEmpty(pending: ReadonlySet<unknown>, graceMs: number, hurry?: AbortSignal): Promise<boolean> {
  const deadline = performance.now() + graceMs;
  while (pending.size > 0) {
    if (hurry?.aborted || performance.now() >= deadline) return false;
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - performance.now())));
  }
  return true;
}

/** True when `work` settles within `ms` (it keeps running either way). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  const timer = new AbortController();
  try {
    return await Promise.race([settled, sleep(Math.max(0, ms), false, { signal: timer.signal }).catch(() => false)]);
  } finally {
    timer.abort();
  }
}

export interface CommitGate {
  /** The same store, whose `commitRevision` refuses once sealed. */
  store: Store;
  /**
   * From now on every commit is refused (a deploy or rollback still running is not published);
   * resolves when the commits already under way have finished, so their answers can still go out.
   */
  seal(): Promise<void>;
}

/**
 * Wraps the store so that shutdown has a clear line: a commit that started before `seal` finishes
 * (its transaction is atomic and takes milliseconds), and none starts after it. Without the line,
 * a deploy whose connection was cut at the end of the grace period could still go live unseen.
 */
export function gateCommits(store: Store): CommitGate {
  let sealed = false;
  const running = new Set<Promise<unknown>>();
  const gated: Store = {
    ...store,
    commitRevision(input) {
      if (sealed) {
        return Promise.reject(
          new ServiceError('unavailable', 'The server is shutting down; nothing was published.', {
            agentMessage: 'The server restarted while this request ran. Nothing was published; send the same request again in a few seconds.',
            headers: { 'Retry-After': '5' },
          }),
        );
      }
      const commit = store.commitRevision(input);
      running.add(commit);
      const forget = (): void => void running.delete(commit);
      commit.then(forget, forget);
      return commit;
    },
  };
  return {
    store: gated,
    async seal() {
      sealed = true;
      await Promise.allSettled(running);
    },
  };
}
