/**
 * Work an operation starts and does not wait for (compressing a published deploy's text files,
 * noting when a token was last used). A stopping server waits for it before closing the store,
 * so nothing writes to a store that is already closed.
 */
export interface FollowUps {
  /** Keeps `work` until it settles; its outcome is the caller's to handle. */
  track(work: Promise<unknown>): void;
  /** Resolves once every piece of work tracked so far (and any tracked meanwhile) has settled. */
  settled(): Promise<void>;
  readonly size: number;
}

export function createFollowUps(): FollowUps {
  const running = new Set<Promise<unknown>>();
  return {
    track(work) {
      const forget = (): void => void running.delete(work);
      running.add(work);
      work.then(forget, forget);
    },
    async settled() {
      while (running.size > 0) await Promise.allSettled(running);
    },
    get size() {
      return running.size;
    },
  };
}
