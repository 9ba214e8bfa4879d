import type pg from 'pg';
import { BULK_QUERY_MS, timeBound } from './records-connections.js';

/**
 * Where a cluster's packed objects live. A deploy's small blobs (and their variants) go to the
 * bucket not one object each but appended to a pack object, `packs/<uuid>`, and this table says
 * which byte range of which pack holds each key. Unlike the bucket ledger (a hint), it is the only
 * record of these objects: its rows are written after their pack's PUT, before the deploy's commit
 * or by it (`CommitInput.packRows`, in the same transaction as the records that name them), so a
 * row never points to a pack that was not written; a pack is deleted only once no row points to
 * it (bucket-gc.ts).
 *
 * A pack's key is random, never its contents' hash: two deploys that made the same bytes would
 * otherwise write one key twice, and garbage collection could delete the first while the second
 * was about to point rows at it.
 */
export interface PackLedger {
  /** The rows of these keys (absent: not packed). */
  find(keys: readonly string[]): Promise<Map<string, PackedObject>>;
  /** Points these keys at their ranges of a pack just written (a key packed again moves to the newer pack). */
  record(entries: ReadonlyArray<PackedObject & { key: string }>): Promise<void>;
  /**
   * Renews these keys' rows to `at`, so garbage collection spares them until the commit that
   * reuses them; resolves the keys renewed. A key missing from the answer was deleted meanwhile
   * (garbage collection got there first): the caller packs it anew.
   */
  renew(keys: readonly string[], at: number): Promise<Set<string>>;
  /** Rows not renewed since `before` (garbage collection's candidates). */
  olderThan(before: number): Promise<Array<{ key: string; pack: string }>>;
  /**
   * Deletes these keys' rows if they are still older than `before`: a renewal that got there
   * first (it holds the row's lock until its commit) keeps the row. Resolves how many went.
   */
  deleteOlderThan(keys: readonly string[], before: number): Promise<number>;
  /** Which of these packs some row still points to. */
  inUse(packs: readonly string[]): Promise<Set<string>>;
}

export interface PackedObject {
  /** The pack's key in the bucket. */
  pack: string;
  offset: number;
  size: number;
  /** When it was packed or last renewed (epoch ms, the node's clock). */
  touchedMs: number;
}

type WithClient = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Prefix of pack objects in the bucket: outside `blobs/`, so the blob listing never sees them. */
export const PACK_PREFIX = 'packs/';
const PACK_KEY = /^packs\/[0-9a-f-]{36}$/;

export const isPackKey = (key: string): boolean => PACK_KEY.test(key);

export function createPackLedger(withClient: WithClient): PackLedger {
  const query = <R extends pg.QueryResultRow>(sql: string, values: unknown[], prepared = false) =>
    withClient((client) => timeBound<R>(client, sql, values, BULK_QUERY_MS, prepared));
  return {
    async find(keys) {
      const found = new Map<string, PackedObject>();
      if (keys.length === 0) return found;
      const rows = await query<{ key: string; pack: string; byte_offset: string; size: string; touched_ms: string }>(
        'SELECT key, pack, byte_offset, size, touched_ms FROM plinth_packed_objects WHERE key = ANY($1::text[])',
        [keys],
      );
      for (const row of rows.rows) {
        found.set(row.key, { pack: row.pack, offset: Number(row.byte_offset), size: Number(row.size), touchedMs: Number(row.touched_ms) });
      }
      return found;
    },

    async record(entries) {
      if (entries.length === 0) return;
      const last = [...new Map(entries.map((entry) => [entry.key, entry])).values()];
      await query(
        `INSERT INTO plinth_packed_objects (key, pack, byte_offset, size, touched_ms)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
         ON CONFLICT (key) DO UPDATE SET pack = excluded.pack, byte_offset = excluded.byte_offset, size = excluded.size, touched_ms = excluded.touched_ms`,
        [last.map((e) => e.key), last.map((e) => e.pack), last.map((e) => e.offset), last.map((e) => e.size), last.map((e) => Math.floor(e.touchedMs))],
        // Written after each pack of a deploy: kept parsed and planned on each connection.
        true,
      );
    },

    async renew(keys, at) {
      if (keys.length === 0) return new Set();
      const rows = await query<{ key: string }>(
        'UPDATE plinth_packed_objects SET touched_ms = GREATEST(touched_ms, $2) WHERE key = ANY($1::text[]) RETURNING key',
        [keys, Math.floor(at)],
      );
      return new Set(rows.rows.map((row) => row.key));
    },

    async olderThan(before) {
      const rows = await query<{ key: string; pack: string }>('SELECT key, pack FROM plinth_packed_objects WHERE touched_ms < $1', [Math.floor(before)]);
      return rows.rows;
    },

    async deleteOlderThan(keys, before) {
      if (keys.length === 0) return 0;
      const rows = await query('DELETE FROM plinth_packed_objects WHERE key = ANY($1::text[]) AND touched_ms < $2', [keys, Math.floor(before)]);
      return rows.rowCount ?? 0;
    },

    async inUse(packs) {
      if (packs.length === 0) return new Set();
      const rows = await query<{ pack: string }>('SELECT DISTINCT pack FROM plinth_packed_objects WHERE pack = ANY($1::text[])', [packs]);
      return new Set(rows.rows.map((row) => row.pack));
    },
  };
}
