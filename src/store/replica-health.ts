/**
 * What a replica knows about how well it follows the change log, for `/readyz` and `/metrics`:
 * how far it got, how far the log is known to go, since when it has been behind, whether its
 * last try to apply changes failed (a full disk: the replica silently stopped following and the
 * node served 404 for new sites), and whether PostgreSQL answered its last poll. Kept by the
 * thread that follows the log; plain state, no I/O.
 */
export interface ReplicaStatus {
  /** The last change this replica applied. */
  applied: number;
  /** The newest change the log was seen to hold (at least `applied`). */
  head: number;
  /** Since when (epoch ms) the replica has known of changes it has not applied; undefined: it is at the head. */
  behindSince?: number;
  /** The last try to apply changes failed (and none has succeeded since). */
  applyFailure?: { message: string; code?: string; since: number };
  /** The last poll of PostgreSQL failed (and none has succeeded since). */
  databaseFailure?: { message: string; since: number };
  /** When PostgreSQL last answered a poll (epoch ms; 0: never). */
  lastContact: number;
  /** Writes to record families this release does not know, skipped since start, per family (none: absent). */
  skippedWrites?: Record<string, number>;
}

export interface ReplicaHealth {
  status(): ReplicaStatus;
  /** PostgreSQL answered: the log holds changes up to `head` (the replica is at `applied`). */
  polled(applied: number, head: number): void;
  /** PostgreSQL could not be asked. */
  pollFailed(err: unknown): void;
  /** Changes up to `applied` were applied. */
  applied(applied: number): void;
  /** Applying failed: the replica stays where it was. */
  applyFailed(err: unknown): void;
  /** Writes to unknown record families were skipped (a newer release wrote them). */
  skipped(writes: Record<string, number>): void;
}

export function createReplicaHealth(applied: number, now: () => number): ReplicaHealth {
  const state: ReplicaStatus = { applied, head: applied, lastContact: 0 };
  const settle = (): void => {
    if (state.head < state.applied) state.head = state.applied;
    if (state.applied >= state.head) delete state.behindSince;
    else state.behindSince ??= now();
  };
  return {
    status: () => ({ ...state, ...(state.skippedWrites ? { skippedWrites: { ...state.skippedWrites } } : {}) }),
    polled(at, head) {
      state.applied = Math.max(state.applied, at);
      state.head = Math.max(state.head, head);
      state.lastContact = now();
      delete state.databaseFailure;
      settle();
    },
    pollFailed(err) {
      state.databaseFailure ??= { message: messageOf(err), since: now() };
    },
    applied(at) {
      state.applied = Math.max(state.applied, at);
      delete state.applyFailure;
      settle();
    },
    applyFailed(err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      state.applyFailure = { message: messageOf(err), ...(typeof code === 'string' ? { code } : {}), since: state.applyFailure?.since ?? now() };
    },
    skipped(writes) {
      for (const [db, count] of Object.entries(writes)) {
        state.skippedWrites ??= {};
        state.skippedWrites[db] = (state.skippedWrites[db] ?? 0) + count;
      }
    },
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
