import { prefixRange, type ManifestPartKey, type MetadataDbs } from './metadata-dbs.js';
import type { ManifestPart, ManifestRecord } from './types.js';

/**
 * Digest-deploy manifests and the contents that have arrived for them, one row per content
 * (`[manifestId, sha256]`), so a part adds small rows and never rewrites the manifest (which lists
 * every file of the site). A manifest lives until `expiresAt`, renewed by each part to its own
 * lifetime after that part; its parts' blobs are kept from garbage collection while it lives.
 */
export interface ManifestRecords {
  /** Stores a digest-deploy manifest until it is published (or expires). */
  putManifest(id: string, record: ManifestRecord): Promise<void>;
  /** The manifest (refused and taken ones too), unless it expired; `expiresAt` counts its parts. */
  getManifest(id: string): ManifestRecord | undefined;
  /** The contents that have arrived for a manifest, by sha256. */
  listManifestParts(id: string): Map<string, ManifestPart>;
  /**
   * Records arrived contents of a live, open manifest (neither refused nor taken), in one
   * transaction, and answers every content arrived so far; `undefined` when it is not open.
   */
  addManifestParts(id: string, parts: ReadonlyArray<{ sha256: string; size: number; compress?: boolean }>): Promise<Map<string, ManifestPart> | undefined>;
  /** Marks an open manifest as refused for good and drops its parts; false when it was not open. */
  refuseManifest(id: string, refusal: NonNullable<ManifestRecord['refused']>): Promise<boolean>;
  /**
   * Marks an open manifest as being published: true only for the one call that took it, so one
   * manifest never publishes twice. Its parts stay (and their blobs with them) until `deleteManifest`.
   */
  takeManifest(id: string): Promise<boolean>;
  /** Gives a taken manifest back (its publish failed for a reason that may pass), so it can publish later. */
  untakeManifest(id: string): Promise<void>;
  /** Removes the manifest and its parts; true only for the one call that removed it. */
  deleteManifest(id: string): Promise<boolean>;
  /** Live manifests of one owner (for the cap on unpublished uploads). */
  listOwnerManifests(owner: string): Array<{ id: string; record: ManifestRecord }>;
  /** sha256 of every content a live manifest holds or reuses: garbage collection keeps these. */
  manifestBlobs(): Set<string>;
}

export function manifestOps(dbs: MetadataDbs, now: () => number): ManifestRecords {
  const parts = (id: string): Map<string, ManifestPart> => {
    const found = new Map<string, ManifestPart>();
    const range = prefixRange(id);
    if (!range) return found;
    for (const { key, value } of dbs.manifestParts.getRange(range)) found.set(key[1], value);
    return found;
  };
  const live = (id: string): ManifestRecord | undefined => {
    const record = dbs.manifests.get(id);
    if (!record) return undefined;
    const expiresAt = expiryOf(record, parts(id).values());
    return expiresAt > now() ? { ...record, expiresAt } : undefined;
  };
  const isOpen = (record: ManifestRecord | undefined): record is ManifestRecord =>
    record !== undefined && record.refused === undefined && record.takenAt === undefined;
  const partKeys = (id: string): ManifestPartKey[] => {
    const range = prefixRange(id);
    return range ? Array.from(dbs.manifestParts.getKeys(range)) : [];
  };

  return {
    async putManifest(id, record) {
      await dbs.transact(() => void dbs.manifests.put(id, record));
    },
    getManifest: live,
    listManifestParts: parts,
    async addManifestParts(id, arrived) {
      // Expiry (which needs the parts) is judged before; inside the write only plain gets, so no
      // cursor is opened in a write transaction.
      if (!live(id)) return undefined;
      const added = await dbs.transact((): boolean => {
        if (!isOpen(dbs.manifests.get(id))) return false;
        const at = now();
        for (const part of arrived) {
          const row: ManifestPart = part.compress ? { size: part.size, at, compress: true } : { size: part.size, at };
          void dbs.manifestParts.put([id, part.sha256], row);
        }
        return true;
      });
      return added ? parts(id) : undefined;
    },
    async refuseManifest(id, refusal) {
      const record = live(id);
      if (!isOpen(record)) return false;
      const keys = partKeys(id);
      return dbs.transact((): boolean => {
        const stored = dbs.manifests.get(id);
        if (!isOpen(stored)) return false;
        // Renewed once more, so the refusal can be read back for a while; its blobs may go.
        void dbs.manifests.put(id, { ...stored, refused: refusal, expiresAt: record.expiresAt });
        for (const key of keys) void dbs.manifestParts.remove(key);
        return true;
      });
    },
    async takeManifest(id) {
      if (!isOpen(live(id))) return false;
      return dbs.transact((): boolean => {
        const stored = dbs.manifests.get(id);
        if (!isOpen(stored)) return false;
        void dbs.manifests.put(id, { ...stored, takenAt: now() });
        return true;
      });
    },
    untakeManifest: (id) =>
      dbs.transact((): void => {
        const stored = dbs.manifests.get(id);
        if (stored?.takenAt === undefined) return;
        const { takenAt: _taken, ...open } = stored;
        void dbs.manifests.put(id, open);
      }),
    async deleteManifest(id) {
      // Parts recorded after this read are orphans; pruneManifests drops those.
      const keys = partKeys(id);
      return dbs.transact((): boolean => {
        if (dbs.manifests.get(id) === undefined) return false;
        void dbs.manifests.remove(id);
        for (const key of keys) void dbs.manifestParts.remove(key);
        return true;
      });
    },
    listOwnerManifests(owner) {
      // The ids first, in one finished scan; then each manifest with its parts (no cursor inside another).
      const ids: string[] = [];
      for (const { key, value } of dbs.manifests.getRange()) if (value.owner === owner) ids.push(key);
      const found: Array<{ id: string; record: ManifestRecord }> = [];
      for (const id of ids) {
        const record = live(id);
        if (record) found.push({ id, record });
      }
      return found;
    },
    manifestBlobs: () => manifestBlobs(dbs, now()),
  };
}

/** A manifest expires its lifetime after it was made or after its latest part, whichever is later. */
export function expiryOf(record: ManifestRecord, parts: Iterable<ManifestPart>): number {
  const lifetime = record.expiresAt - record.createdAt;
  let expiresAt = record.expiresAt;
  for (const part of parts) expiresAt = Math.max(expiresAt, part.at + lifetime);
  return expiresAt;
}

/** Latest arrival per manifest, in one scan of the parts. */
function latestParts(dbs: MetadataDbs): Map<string, number> {
  const latest = new Map<string, number>();
  for (const { key, value } of dbs.manifestParts.getRange({ snapshot: false })) {
    latest.set(key[0], Math.max(latest.get(key[0]) ?? 0, value.at));
  }
  return latest;
}

function effectiveExpiry(record: ManifestRecord, latest: number | undefined): number {
  return latest === undefined ? record.expiresAt : Math.max(record.expiresAt, latest + record.expiresAt - record.createdAt);
}

function manifestBlobs(dbs: MetadataDbs, at: number): Set<string> {
  const latest = latestParts(dbs);
  const liveIds = new Set<string>();
  const held = new Set<string>();
  for (const { key, value } of dbs.manifests.getRange({ snapshot: false })) {
    if (effectiveExpiry(value, latest.get(key)) <= at) continue;
    liveIds.add(key);
    // Reused contents too: a revision they came from may be pruned while the manifest waits.
    for (const sha256 of Object.keys(value.known)) held.add(sha256);
  }
  for (const { key } of dbs.manifestParts.getRange({ snapshot: false })) if (liveIds.has(key[0])) held.add(key[1]);
  return held;
}

/**
 * Drops expired manifests with their parts, and parts whose manifest is gone (inside the
 * caller's write transaction); returns how many manifests went.
 */
export function pruneManifests(dbs: MetadataDbs, at: number): number {
  const latest = latestParts(dbs);
  let removed = 0;
  for (const { key, value } of dbs.manifests.getRange({ snapshot: false })) {
    if (effectiveExpiry(value, latest.get(key)) > at) continue;
    void dbs.manifests.remove(key);
    removed++;
  }
  for (const { key } of dbs.manifestParts.getRange({ snapshot: false })) {
    if (dbs.manifests.get(key[0]) === undefined) void dbs.manifestParts.remove(key);
  }
  return removed;
}
