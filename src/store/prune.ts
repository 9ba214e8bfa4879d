import { pathRangeEnd, prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { RevisionRecord } from './types.js';

/** A huge site must not make one giant write transaction that holds the writer lock for long. */
const PATH_ROWS_PER_TXN = 1000;

/**
 * Drops a site's revisions created before `before`, except the live one, with their path rows.
 * Blobs are left to garbage collection. Returns how many revisions went.
 */
export async function pruneRevisions(dbs: MetadataDbs, siteId: string, before: number): Promise<number> {
  const range = prefixRange(siteId);
  if (!range) return 0;
  const live = dbs.sites.get(siteId)?.liveRevision;
  // Only a revision within reach can be made live again (promote), and callers prune only past
  // it; `dropRevision` re-checks the live pointer in the transaction that hides a revision.
  const doomed = Array.from(dbs.revisions.getRange({ ...range, snapshot: false }), ({ value }) => value).filter(
    (revision) => revision.createdAt < before && revision.id !== live,
  );
  let pruned = 0;
  for (const revision of doomed) if (await dropRevision(dbs, revision)) pruned++;
  return pruned;
}

/**
 * In steps, each its own transaction: first the `revisionIds` row goes, so `getRevision` no longer
 * finds it and nothing new starts reading it; then its path rows in bounded batches; the
 * `revisions` record goes last. A crash part-way leaves that record behind, so the next prune
 * finds the revision again and finishes it, and no path row is orphaned for good (garbage
 * collection would otherwise keep its blobs forever).
 */
async function dropRevision(dbs: MetadataDbs, revision: RevisionRecord): Promise<boolean> {
  const key: [string, number] = [revision.siteId, revision.number];
  const hidden = await dbs.transact(() => {
    if (dbs.sites.get(revision.siteId)?.liveRevision === revision.id) return false;
    if (dbs.revisions.get(key) === undefined) return false;
    void dbs.revisionIds.remove(revision.id);
    if (dbs.revisionExtras.get(revision.id) !== undefined) void dbs.revisionExtras.remove(revision.id);
    return true;
  });
  if (!hidden) return false;
  const end = pathRangeEnd(revision.id);
  for (;;) {
    const removed = await dbs.transact(() => {
      // Keys are collected before removing: no cursor is held across its own deletions.
      const keys = Array.from(dbs.paths.getKeys({ start: [revision.id], end, limit: PATH_ROWS_PER_TXN }));
      for (const pathKey of keys) void dbs.paths.remove(pathKey);
      return keys.length;
    });
    if (removed < PATH_ROWS_PER_TXN) break;
  }
  await dbs.transact(() => void dbs.revisions.remove(key));
  return true;
}
