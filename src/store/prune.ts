import { pathRangeEnd, prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { RevisionRecord, SiteRecord } from './types.js';

/** A huge site must not make one giant write transaction that holds the writer lock for long. */
const PATH_ROWS_PER_TXN = 1000;

export type DeleteRevisionResult =
  { ok: true; site: SiteRecord; revision: RevisionRecord } | { ok: false; reason: 'not_found' | 'no_revision' } | { ok: false; reason: 'live' };

/**
 * Drops a site's revisions created before `before`, except the live one, with their path rows.
 * Revisions an owner deleted are finished too, whatever their age: their rows go (were a delete
 * cut off part-way), and their record once it is past `before`. Blobs are left to garbage
 * collection. Returns how many revision records went.
 */
export async function pruneRevisions(dbs: MetadataDbs, siteId: string, before: number): Promise<number> {
  const range = prefixRange(siteId);
  if (!range) return 0;
  const live = dbs.sites.get(siteId)?.liveRevision;
  const revisions = Array.from(dbs.revisions.getRange({ ...range, snapshot: false }), ({ value }) => value);
  for (const revision of revisions) if (revision.deletedAt !== undefined && revision.createdAt >= before) await removePathRows(dbs, revision.id);
  // Only a revision within reach can be made live again (promote), and callers prune only past
  // it; `dropRevision` re-checks the live pointer in the transaction that hides a revision.
  const doomed = revisions.filter((revision) => revision.createdAt < before && revision.id !== live);
  let pruned = 0;
  for (const revision of doomed) if (await dropRevision(dbs, revision)) pruned++;
  return pruned;
}

/**
 * An owner's deletion of a revision that is not live. The first transaction decides: it keeps
 * the record as a tombstone (`deletedAt`; its number stays used and its preview answers 410),
 * removes what resolves it by id (`revisionIds`, its compiled rules) and stamps the site record,
 * so serving caches on every thread and node drop it at once. Its path rows go after that, in
 * bounded batches; a crash part-way leaves the tombstone, and the next prune finishes the rows.
 * Blobs only it used are then collected by garbage collection. `onDecided` runs right after the
 * first transaction.
 */
export async function deleteRevision(
  dbs: MetadataDbs,
  siteId: string,
  revisionId: string,
  by: { deletedBy: string; at: number },
  onDecided: (site: SiteRecord) => void,
): Promise<DeleteRevisionResult> {
  const result = await dbs.transact((): DeleteRevisionResult => {
    const site = dbs.sites.get(siteId);
    if (!site || site.state === 'deleted') return { ok: false, reason: 'not_found' };
    const key = dbs.revisionIds.get(revisionId);
    const revision = key === undefined ? undefined : dbs.revisions.get(key);
    if (!revision || revision.siteId !== site.id || revision.deletedAt !== undefined) return { ok: false, reason: 'no_revision' };
    if (site.liveRevision === revision.id) return { ok: false, reason: 'live' };
    const tombstone: RevisionRecord = { ...revision, deletedAt: by.at, deletedBy: by.deletedBy };
    void dbs.revisions.put([site.id, revision.number], tombstone);
    void dbs.revisionIds.remove(revision.id);
    if (dbs.revisionExtras.get(revision.id) !== undefined) void dbs.revisionExtras.remove(revision.id);
    // Written unchanged: a site write is what tells every node's serving threads (replica.ts).
    void dbs.sites.put(site.id, site);
    return { ok: true, site, revision: tombstone };
  });
  if (!result.ok) return result;
  onDecided(result.site);
  await removePathRows(dbs, revisionId);
  return result;
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
    // A deleted revision is hidden already.
    if (dbs.revisionIds.get(revision.id) !== undefined) void dbs.revisionIds.remove(revision.id);
    if (dbs.revisionExtras.get(revision.id) !== undefined) void dbs.revisionExtras.remove(revision.id);
    return true;
  });
  if (!hidden) return false;
  await removePathRows(dbs, revision.id);
  await dbs.transact(() => void dbs.revisions.remove(key));
  return true;
}

/** A hidden revision's path rows, in bounded transactions. */
async function removePathRows(dbs: MetadataDbs, revisionId: string): Promise<void> {
  const end = pathRangeEnd(revisionId);
  const hasRows = (): boolean => Array.from(dbs.paths.getKeys({ start: [revisionId], end, limit: 1 })).length > 0;
  // Most tombstones have no rows left: no write transaction for them (in a cluster, a round trip).
  if (!hasRows()) return;
  for (;;) {
    const removed = await dbs.transact(() => {
      // Keys are collected before removing: no cursor is held across its own deletions.
      const keys = Array.from(dbs.paths.getKeys({ start: [revisionId], end, limit: PATH_ROWS_PER_TXN }));
      for (const pathKey of keys) void dbs.paths.remove(pathKey);
      return keys.length;
    });
    if (removed < PATH_ROWS_PER_TXN) break;
  }
}
