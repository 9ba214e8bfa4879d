import type pg from 'pg';
import { createPackLedger, type PackedObject, type PackLedger } from './bucket-packs.js';
import { BULK_QUERY_MS, timeBound } from './records-connections.js';

/**
 * What the cluster's database knows of the bucket: each object a node uploaded or renewed, with
 * its size and when (by the node's clock, read before the request was sent, so the bucket's own
 * stamp is never older). A deploy asks this, in one query, instead of sending the bucket a HEAD
 * per blob; what was noted recently enough is in the bucket and young, so garbage collection,
 * which deletes only objects older than the whole grace period, spares it until the commit.
 * The table is a hint about the bucket, never the records: a row that is missing or old sends the
 * deploy back to the bucket itself.
 */
export interface BucketLedger {
  /** The rows of these keys (absent: never noted, or forgotten). */
  find(keys: readonly string[]): Promise<Map<string, LedgerEntry>>;
  /** Notes objects just uploaded or renewed (a newer note of a key replaces an older one). */
  note(entries: ReadonlyArray<LedgerEntry & { key: string }>): Promise<void>;
  /** Forgets keys deleted from the bucket. */
  forget(keys: readonly string[]): Promise<void>;
  /**
   * `find` and `packs.find` of these keys in one statement: a deploy asks both of each burst of
   * its blobs, and a round trip to PostgreSQL costs CPU on both ends.
   */
  findPlaced(keys: readonly string[]): Promise<{ uploaded: Map<string, LedgerEntry>; packed: Map<string, PackedObject> }>;
  /** Where packed objects live: not a hint, the only record of them (bucket-packs.ts). */
  readonly packs: PackLedger;
}

export interface LedgerEntry {
  size: number;
  /** When it was uploaded or renewed, at the latest (epoch ms, the node's clock). */
  touchedMs: number;
}

type WithClient = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

export function createBucketLedger(withClient: WithClient): BucketLedger {
  return {
    packs: createPackLedger(withClient),

    async find(keys) {
      const found = new Map<string, LedgerEntry>();
      if (keys.length === 0) return found;
      const rows = await withClient((client) =>
        timeBound<{ key: string; size: string; touched_ms: string }>(
          client,
          'SELECT key, size, touched_ms FROM plinth_bucket_objects WHERE key = ANY($1::text[])',
          [keys],
          BULK_QUERY_MS,
        ),
      );
      for (const row of rows.rows) found.set(row.key, { size: Number(row.size), touchedMs: Number(row.touched_ms) });
      return found;
    },

    async findPlaced(keys) {
      const uploaded = new Map<string, LedgerEntry>();
      const packed = new Map<string, PackedObject>();
      if (keys.length === 0) return { uploaded, packed };
      const rows = await withClient((client) =>
        timeBound<{ key: string; size: string; touched_ms: string; pack: string | null; byte_offset: string | null }>(
          client,
          `SELECT key, size, touched_ms, NULL::text AS pack, NULL::bigint AS byte_offset FROM plinth_bucket_objects WHERE key = ANY($1::text[])
           UNION ALL
           SELECT key, size, touched_ms, pack, byte_offset FROM plinth_packed_objects WHERE key = ANY($1::text[])`,
          [keys],
          BULK_QUERY_MS,
          // Asked once per 32 blobs of a deploy: kept parsed and planned on each connection.
          true,
        ),
      );
      for (const row of rows.rows) {
        const entry = { size: Number(row.size), touchedMs: Number(row.touched_ms) };
        if (row.pack === null) uploaded.set(row.key, entry);
        else packed.set(row.key, { ...entry, pack: row.pack, offset: Number(row.byte_offset) });
      }
      return { uploaded, packed };
    },

    async note(entries) {
      if (entries.length === 0) return;
      // One row per key, so the upsert never touches a row twice.
      const last = new Map(entries.map((entry) => [entry.key, entry]));
      const rows = [...last.values()];
      await withClient((client) =>
        timeBound(
          client,
          `INSERT INTO plinth_bucket_objects (key, size, touched_ms) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
           ON CONFLICT (key) DO UPDATE SET size = excluded.size, touched_ms = GREATEST(plinth_bucket_objects.touched_ms, excluded.touched_ms)`,
          [rows.map((r) => r.key), rows.map((r) => r.size), rows.map((r) => Math.floor(r.touchedMs))],
          BULK_QUERY_MS,
        ),
      );
    },

    async forget(keys) {
      if (keys.length === 0) return;
      await withClient((client) => timeBound(client, 'DELETE FROM plinth_bucket_objects WHERE key = ANY($1::text[])', [keys], BULK_QUERY_MS));
    },
  };
}
