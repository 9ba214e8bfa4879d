import type { MetadataDbs } from './metadata-dbs.js';
import type { ReplayRecord } from './types.js';

/**
 * The first answer of a request that may be sent again (an `Idempotency-Key`, a digest deploy's
 * last part), kept a day so a retry gets it back instead of doing the work twice. Records are
 * keyed by a hash the caller's operation derives (never the key as sent), and the answer in them
 * is sealed by that operation; the store only keeps, claims and expires them.
 */
export interface ReplayRecords {
  /** The record unless it expired. */
  getReplay(id: string): ReplayRecord | undefined;
  /**
   * Claims `id` for a request that is about to run: stores `pending` and answers `undefined`,
   * unless a live record is there already, which is answered instead (and nothing is written).
   * Of requests racing for one id, exactly one gets `undefined`.
   */
  claimReplay(id: string, pending: ReplayRecord): Promise<ReplayRecord | undefined>;
  /** Stores (or replaces) the record: the answer of a request that went through. */
  putReplay(id: string, record: ReplayRecord): Promise<void>;
  /** Drops the record (a claimed request that failed leaves its key free for a retry). */
  dropReplay(id: string): Promise<void>;
}

export function replayOps(dbs: MetadataDbs, now: () => number): ReplayRecords {
  const live = (record: ReplayRecord | undefined, at: number): ReplayRecord | undefined => (record && record.expiresAt > at ? record : undefined);
  return {
    getReplay: (id) => live(dbs.replays.get(id), now()),
    claimReplay: (id, pending) =>
      dbs.transact((): ReplayRecord | undefined => {
        const found = live(dbs.replays.get(id), now());
        if (found) return found;
        void dbs.replays.put(id, pending);
        return undefined;
      }),
    async putReplay(id, record) {
      await dbs.transact(() => void dbs.replays.put(id, record));
    },
    async dropReplay(id) {
      await dbs.transact(() => {
        if (dbs.replays.get(id) !== undefined) void dbs.replays.remove(id);
      });
    },
  };
}
