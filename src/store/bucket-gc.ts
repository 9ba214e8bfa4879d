import { forEachLimit } from './bucket.js';
import { describeOwner, sameOwner } from './bucket-owner.js';
import { isPackKey, PACK_PREFIX, type PackLedger } from './bucket-packs.js';
import type { Store } from './metadata.js';
import type { BucketOwner } from './types.js';

/** What bucket garbage collection reads: the bucket, and the records (through the Store interface). */
export type BucketGarbageStore = Pick<Store, 'blobs' | 'listSiteIds' | 'listRevisions' | 'listFiles' | 'manifestBlobs'>;

export interface BucketGarbageOptions {
  /** Objects written or renewed more recently than this are kept, referenced or not. */
  graceMs: number;
  /**
   * The sha256 of every blob a revision references. Default: `referencedBlobs(store)`, which
   * walks every revision of every site; a backend with a cheaper query may pass its own.
   */
  referenced?: () => Iterable<string> | Promise<Iterable<string>>;
  /**
   * This installation: nothing is deleted unless the bucket's marker names it (the node checked
   * at start-up; an operator may have handed the bucket to another installation since).
   */
  owner?: BucketOwner;
  now?: () => number;
}

const REVISION_PAGE = 200;
/** Objects looked at and deleted at once. */
const SWEEP_CONCURRENCY = 8;
/** Pack rows deleted, and packs asked about, per query. */
const PACK_BATCH = 1000;

/** The sha256 of every blob that any revision of any site references (every path row), or that a live manifest holds. */
export function referencedBlobs(store: Pick<Store, 'listSiteIds' | 'listRevisions' | 'listFiles' | 'manifestBlobs'>): Set<string> {
  const referenced = new Set<string>(store.manifestBlobs());
  for (const siteId of store.listSiteIds()) {
    let before: number | undefined;
    do {
      const page = store.listRevisions(siteId, { before, limit: REVISION_PAGE });
      for (const revision of page.revisions) for (const file of store.listFiles(revision.id)) referenced.add(file.sha256);
      before = page.nextBefore;
    } while (before !== undefined);
  }
  return referenced;
}

/**
 * Mark and sweep over the bucket: deletes the objects of blobs (with their variants) that no
 * revision references and that nothing wrote or renewed within `graceMs`. Returns how many went;
 * 0 without a bucket.
 *
 * Run it on one node at a time (hold a cluster-wide lock): it is not per node, unlike the local
 * cache's upkeep (`collectGarbage`, `blobs.trimCache`).
 *
 * Why the referenced set cannot miss a blob a commit needs, as in gc.ts: a hash becomes
 * referenced only through a commit, and every commit is preceded by `blobs.publish`, which
 * uploads what the bucket lacks and renews (a copy onto itself with a fresh stamp) every object
 * older than half the grace period. So an object a commit still in flight (or not yet on this
 * node's replica of the records) refers to is younger than the grace period and is kept. The
 * listing comes before the mark, so objects written during the run are never candidates; each
 * candidate is looked at again (HeadObject) right before its delete, since listings do not show
 * the renewal stamp; and deletes stop a quarter of the grace period after the mark, so a slow
 * run cannot act on a mark older than what `publish` covers.
 *
 * Packed objects (a cluster's, bucket-packs.ts) go the same way, by their rows: a row nobody
 * references and nobody packed or renewed within `graceMs` is deleted, in one statement that
 * re-checks its age, so a deploy's renewal of it either comes first (the row stays) or finds it
 * gone (and packs the object anew). Then a pack older than `graceMs` that no row points to is
 * deleted: its rows are written right after its upload, within half the grace period, so none
 * can appear once it is that old. A live pack keeps the bytes of its dead objects.
 */
export async function collectBucketGarbage(store: BucketGarbageStore, options: BucketGarbageOptions): Promise<number> {
  const bucket = store.blobs.bucket;
  if (bucket === undefined) return 0;
  if (options.owner !== undefined) {
    const marked = await bucket.readOwner();
    if (!sameOwner(marked, options.owner)) {
      throw new Error(
        `The bucket belongs to ${marked ? describeOwner(marked) : 'no installation (it has no marker)'}, not to ${describeOwner(options.owner)}: nothing was deleted from it.`,
      );
    }
  }
  const now = options.now ?? Date.now;
  const { graceMs } = options;

  const groups = new Map<string, { keys: string[]; touchedMs: number }>();
  for await (const object of bucket.list()) {
    const blob = bucket.parseKey(object.key);
    // Not ours (someone else's object under the prefix): never deleted.
    if (blob === undefined) continue;
    const group = groups.get(blob.sha256) ?? { keys: [], touchedMs: 0 };
    group.keys.push(object.key);
    group.touchedMs = Math.max(group.touchedMs, object.touchedMs);
    groups.set(blob.sha256, group);
  }

  const referenced: ReadonlySet<string> = new Set(await (options.referenced ?? (() => referencedBlobs(store)))());
  const deadline = now() + graceMs / 4;
  const candidates = [...groups].filter(([sha256, group]) => !referenced.has(sha256) && group.touchedMs < now() - graceMs);

  let deleted = 0;
  await forEachLimit(candidates, SWEEP_CONCURRENCY, async ([, group]) => {
    if (now() > deadline) return;
    const heads = await Promise.all(group.keys.map((key) => bucket.head(key)));
    if (heads.some((found) => found !== undefined && found.touchedMs >= now() - graceMs)) return;
    // The blob's own object last: were the run cut off half-way, a variant never outlives it.
    for (const key of [...group.keys].sort((a, b) => b.length - a.length)) {
      await bucket.delete(key);
      deleted++;
    }
  });
  const packs = store.blobs.packs;
  if (packs !== undefined) deleted += await collectPacks(store.blobs.bucket!, packs, referenced, { now, graceMs, deadline });
  return deleted;
}

/** The packed half of `collectBucketGarbage`: rows first, then the packs no row points to; resolves the packs deleted. */
async function collectPacks(
  bucket: NonNullable<BucketGarbageStore['blobs']['bucket']>,
  packs: PackLedger,
  referenced: ReadonlySet<string>,
  { now, graceMs, deadline }: { now: () => number; graceMs: number; deadline: number },
): Promise<number> {
  const unreferenced = (await packs.olderThan(now() - graceMs))
    .map((row) => row.key)
    .filter((key) => {
      const blob = bucket.parseKey(key);
      return blob !== undefined && !referenced.has(blob.sha256);
    });
  for (let start = 0; start < unreferenced.length && now() <= deadline; start += PACK_BATCH) {
    await packs.deleteOlderThan(unreferenced.slice(start, start + PACK_BATCH), now() - graceMs);
  }

  const listed: string[] = [];
  for await (const object of bucket.list(PACK_PREFIX)) if (isPackKey(object.key) && object.touchedMs < now() - graceMs) listed.push(object.key);
  let deleted = 0;
  for (let start = 0; start < listed.length && now() <= deadline; start += PACK_BATCH) {
    const batch = listed.slice(start, start + PACK_BATCH);
    const inUse = await packs.inUse(batch);
    await forEachLimit(
      batch.filter((key) => !inUse.has(key)),
      SWEEP_CONCURRENCY,
      async (key) => {
        if (now() > deadline) return;
        await bucket.delete(key);
        deleted++;
      },
    );
  }
  return deleted;
}
