import type { Database } from 'lmdb';
import { putJournaled, type JournalKey } from './blob-journal.js';
import { putEvent } from './events.js';
import { newId } from './ids.js';
import { countOwned } from './memberships.js';
import { compact, MAX_KEY_BYTES, pathKeyBytes, type MetadataDbs, type TransactOptions } from './metadata-dbs.js';
import type { CommitInput, CommitResult, FileEntry, NewSite, RevisionRecord, SiteRecord } from './types.js';

/**
 * One lmdb-js `transaction()`: every check reads inside the write transaction, so a concurrent
 * commit from another thread or process is serialised by LMDB's writer lock, and readers see the
 * old live revision or the new one with all its path rows, never part of it.
 */
export async function commitRevision(dbs: MetadataDbs, input: CommitInput, now: () => number, journal?: Database<Buffer, JournalKey>): Promise<CommitResult> {
  if (input.create && input.create.name !== input.site) {
    throw new TypeError(`create.name ${input.create.name} differs from site ${input.site}`);
  }
  // Only an embedded index can carry blobs: a cluster's are in its bucket before the commit.
  if (input.journal !== undefined && journal === undefined) throw new TypeError('this store cannot journal blobs');
  const revisionId = newId('rev_');
  const rows: [string, FileEntry][] = [];
  let bytes = 0;
  for (const [path, entry] of input.files) {
    // A put that throws mid-transaction would commit the rows before it, so refuse up front.
    if (pathKeyBytes(revisionId, path) > MAX_KEY_BYTES) throw new RangeError(`path too long for the index: ${path.slice(0, 80)}…`);
    rows.push([path, compact({ sha256: entry.sha256, size: entry.size, type: entry.type, encodings: entry.encodings, pack: entry.pack })]);
    bytes += entry.size;
  }

  const { packRows, uploads } = input;
  const options: TransactOptions = {
    ...(packRows !== undefined ? { packRows: typeof packRows === 'function' ? packRows : () => packRows } : {}),
    ...(uploads !== undefined ? { ready: uploads } : {}),
  };
  return dbs.transact((): CommitResult => {
    const createdAt = now();
    let site: SiteRecord;
    if (input.create) {
      if (dbs.names.get(input.site) !== undefined) return { ok: false, reason: 'name_taken' };
      const { accountId, maxOwnedSites } = input.create;
      if (accountId !== undefined && maxOwnedSites !== undefined && countOwned(dbs, accountId) >= maxOwnedSites) return { ok: false, reason: 'over_limit' };
      site = newSiteRecord(input.create, createdAt);
    } else {
      const id = dbs.names.get(input.site);
      const found = id === undefined ? undefined : dbs.sites.get(id);
      if (!found) return { ok: false, reason: 'not_found' };
      site = found;
    }
    if (input.baseRevision !== null && input.baseRevision !== site.liveRevision) {
      const liveRevision = site.liveRevision;
      return liveRevision === undefined ? { ok: false, reason: 'conflict' } : { ok: false, reason: 'conflict', liveRevision };
    }
    // A rollback copied its source's rows before this transaction: if an owner deleted the source
    // since, garbage collection may already be deleting those blobs.
    if (input.rollbackOf !== undefined && dbs.revisionIds.get(input.rollbackOf) === undefined) return { ok: false, reason: 'no_revision' };

    const number = site.lastNumber + 1;
    const revision: RevisionRecord = compact({
      id: revisionId,
      siteId: site.id,
      number,
      createdAt,
      createdBy: input.createdBy,
      kind: input.kind,
      rollbackOf: input.rollbackOf,
      files: rows.length,
      bytes,
      draft: input.publish === false ? true : undefined,
    });
    const updated: SiteRecord =
      input.publish === false ? { ...site, lastNumber: number } : { ...site, liveRevision: revisionId, liveNumber: number, lastNumber: number };
    // Made before the first put: a throw after one would still commit what was put.
    const event = input.event?.(updated, revision);

    if (input.create) {
      void dbs.names.put(site.name, site.id);
      if (site.siteTokenHash) void dbs.tokens.put(site.siteTokenHash, { kind: 'site', siteId: site.id });
      if (site.claimTokenHash) void dbs.tokens.put(site.claimTokenHash, { kind: 'claim', siteId: site.id });
      if (site.accountId) {
        void dbs.members.put([site.id, site.accountId], { siteId: site.id, accountId: site.accountId, role: 'owner', addedAt: createdAt });
        void dbs.memberSites.put([site.accountId, site.id], 'owner');
      }
    }
    void dbs.revisions.put([site.id, number], revision);
    void dbs.revisionIds.put(revisionId, [site.id, number]);
    for (const [path, entry] of rows) void dbs.paths.put([revisionId, path], entry);
    if (input.journal !== undefined) putJournaled(journal!, revisionId, input.journal);
    if (input.extras !== undefined && Object.keys(input.extras).length > 0) void dbs.revisionExtras.put(revisionId, input.extras);
    void dbs.sites.put(site.id, updated);
    if (event === undefined) return { ok: true, site: updated, revision };
    return { ok: true, site: updated, revision, event: putEvent(dbs, event, createdAt) };
  }, options);
}

function newSiteRecord(create: NewSite, createdAt: number): SiteRecord {
  return compact({
    id: newId('site_'),
    name: create.name,
    plan: create.plan,
    state: 'active',
    claimed: create.claimed,
    accountId: create.accountId,
    createdAt,
    expiresAt: create.expiresAt,
    liveNumber: 0,
    lastNumber: 0,
    siteTokenHash: create.siteTokenHash,
    claimTokenHash: create.claimTokenHash,
    claimKey: create.claimKey,
  });
}
