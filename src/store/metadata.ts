import { dirname, join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { accountOps } from './accounts.js';
import { embeddedAnalytics, type AnalyticsRecords } from './analytics.js';
import { domainOps, hasLegacyDomains, liftLegacyDomains } from './domains.js';
import type { Database } from 'lmdb';
import { journaledBytes, journaledCount, journaledShas, openBlobJournal, replayJournal, settleJournal, type JournalKey } from './blob-journal.js';
import { commitRevision } from './commit.js';
import { collectGarbage } from './gc.js';
import { manifestOps, pruneManifests, type ManifestRecords } from './manifests.js';
import { replayOps, type ReplayRecords } from './replays.js';
import { lifecycleOps } from './lifecycle.js';
import { membershipOps } from './memberships.js';
import { deleteRevision, pruneRevisions, type DeleteRevisionResult } from './prune.js';
import { oauthOps } from './oauth.js';
import { peopleOps } from './people.js';
import { siteAccessOps } from './site-access.js';
import { eventOps, type EventRecords } from './events.js';
import { webhookOps, type WebhookRecords } from './webhooks.js';
import { localDeliveryQueue, type DeliveryQueue } from './delivery-queue.js';
import { postgresDeliveryQueue } from './delivery-queue-pg.js';
import { isRunning } from './processes.js';
import type { AccountRecords } from './accounts.js';
import type { DomainRecords } from './domains.js';
import type { LifecycleRecords } from './lifecycle.js';
import type { MembershipRecords } from './memberships.js';
import type { OAuthRecords } from './oauth.js';
import { deviceGrantOps, type DeviceGrantRecords } from './device-grants.js';
import type { PeopleRecords } from './people.js';
import type { SiteAccessRecords } from './site-access.js';
import { isRecordsBusy, isRecordsUnavailable } from '../errors.js';
import { exceedsCap, MAX_PATH_BYTES, rateWindow } from '../rules/index.js';
import { REPLICA_BEHIND, type Change, type PreparedChange, type RecordsLog } from './records-log.js';
import { applyChanges, applyChangesSync, appliedSeq, clusterOf, recordingDbs } from './replica.js';
import { createReplicaHealth } from './replica-health.js';
import { createSiteChanges } from './site-changes.js';
import { isPlainId, openMetadataDbs, pathRangeEnd, type CounterKey, type MetadataDbs } from './metadata-dbs.js';
import type {
  BlobStore,
  ClusterControl,
  CommitInput,
  CommitResult,
  Encoding,
  FileEntry,
  ListedFile,
  RateCheck,
  RateResult,
  RevisionExtras,
  RevisionPage,
  RevisionRecord,
  SiteRecord,
  SiteState,
  StoreCounters,
  TokenRecord,
} from './types.js';

const DEFAULT_REVISION_PAGE = 50;

/** Sites, revisions and their path index, site tokens, names, rate counters, manifests, the change feed and upkeep. */
export interface SiteRecords extends ManifestRecords, ReplayRecords {
  readonly blobs: BlobStore;
  /**
   * The clock the store judges time by, for its callers to judge by too: in a cluster, this
   * node's corrected to PostgreSQL's (expiry, sessions and rate windows mean the same on every node).
   */
  now(): number;
  /** Site by current or former name. A former name returns the record whose `name` is the new one. */
  getSite(name: string): SiteRecord | undefined;
  getSiteById(id: string): SiteRecord | undefined;
  /** A revision by id; undefined once pruned or deleted. */
  getRevision(revisionId: string): RevisionRecord | undefined;
  /** A revision's compiled site rules and link warnings; undefined when it has none. Synchronous. */
  getRevisionExtras(revisionId: string): RevisionExtras | undefined;
  /** One path-index row; synchronous so the serving hot path never awaits. */
  getFile(revisionId: string, path: string): FileEntry | undefined;
  /** A revision's files in path order. */
  listFiles(revisionId: string): ListedFile[];
  /** Newest first, deleted revisions left out; `before` is an exclusive upper bound on `number`. */
  listRevisions(siteId: string, options?: { before?: number; limit?: number }): RevisionPage;
  /** Atomically check the base, write the revision and its path index, move the live pointer. */
  commitRevision(input: CommitInput): Promise<CommitResult>;
  /**
   * Drops the blob bytes commits carried (`CommitInput.journal`) once their files exist (written
   * here from the rows when the deploy's worker did not) and `flush`, a sync of the blob
   * filesystem started after that, has made them durable; returns how many blobs' rows went.
   * Nothing to do in a cluster.
   */
  settleBlobJournal(flush: () => Promise<void>): Promise<number>;
  /** Blobs whose bytes commits carried and no settle dropped yet. */
  journaledBlobs(): number;
  /**
   * Records precompressed variants made after a revision was committed, on the rows of that
   * revision whose blob they belong to, and tells serving threads. Content never changes.
   */
  recordEncodings(revisionId: string, encodings: ReadonlyMap<string, Partial<Record<Encoding, number>>>): Promise<number>;
  /** Records a lifecycle change (taken down, restored to active); a deleted site stays deleted. */
  setSiteState(name: string, state: SiteState): Promise<{ ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' | 'deleted' }>;
  /** The record for a token hash (see `hashToken`), if any. */
  findToken(tokenHash: string): TokenRecord | undefined;
  /** True if the name was ever used by any site (names are never reused). */
  isNameUsed(name: string): boolean;
  /**
   * Counts each check's hits (one unless it says `hits`) in one transaction, all or nothing: if
   * any check's window has no room for its hits, nothing is counted. Shared by all threads and
   * processes on the data directory.
   */
  takeRateTokens(checks: readonly RateCheck[]): Promise<RateResult>;
  /** Drops counter windows that started before `before` (pass a time past every window's end); returns how many. */
  pruneCounters(before: number): Promise<number>;
  /**
   * Calls `listener` whenever a site record changes through any store handle of this process
   * (commits, state changes): at once in this thread, within a turn in other threads. Returns an
   * unsubscribe function.
   */
  onSiteChanged(listener: (change: { siteId: string; name: string }) => void): () => void;
  /** What this handle counted so far (bucket calls and downloads, PostgreSQL errors, rate-limit refusals). */
  counters(): StoreCounters;
  /**
   * A value that changes whenever another process (the admin CLI) changes a site record, which
   * `onSiteChanged` does not report. Cheap enough to poll about once a second.
   */
  siteChangesElsewhere(): string;
  /**
   * Drops revisions of a site created before `before`, never the live one, with all their path
   * rows (in bounded transactions); their blobs are left to `collectGarbage`. Returns how many.
   */
  pruneRevisions(siteId: string, before: number): Promise<number>;
  /**
   * Deletes a revision of the site that is not live (`live` otherwise; `no_revision` for one that
   * is not the site's, or already deleted; `not_found` for a deleted or unknown site): from its
   * first transaction on, nothing resolves it by id, listings leave it out, its preview answers
   * 410 and every serving thread has been told; its path rows are gone when this resolves, and
   * its blobs are left to `collectGarbage`. Its number is never handed out again.
   */
  deleteRevision(siteId: string, revisionId: string, deletedBy: string): Promise<DeleteRevisionResult>;
  /** Drops expired manifests, replays, sessions and sign-ins (for the sweeper); returns how many. */
  pruneExpired(): Promise<number>;
  /** Every site id (for the sweeper). */
  listSiteIds(): string[];
  /**
   * Mark and sweep: deletes blob files (and variants) that no revision references and that are
   * older than `graceMs` (so blobs of deploys still in flight survive). Returns how many went.
   */
  collectGarbage(graceMs: number): Promise<number>;
  /**
   * Writes a consistent, compacted copy of the LMDB environment as `<dir>/data.mdb` (the folder is
   * created) while other threads and processes go on writing: the state of one committed transaction.
   */
  snapshot(dir: string): Promise<void>;
  close(): Promise<void>;
  /** Set in a cluster (records in PostgreSQL); undefined for the embedded store. */
  readonly cluster?: ClusterControl;
  /** Webhook deliveries: this machine's table, or in a cluster PostgreSQL's. */
  readonly deliveries: DeliveryQueue;
}

/**
 * The whole store, one record family per module (each family's contract sits next to its
 * implementation). Areas that need less ask for less: serving takes serve's `SiteReader`.
 */
export type Store = SiteRecords &
  AccountRecords &
  MembershipRecords &
  LifecycleRecords &
  PeopleRecords &
  OAuthRecords &
  DeviceGrantRecords &
  DomainRecords &
  SiteAccessRecords &
  EventRecords &
  WebhookRecords &
  AnalyticsRecords;

export type Metadata = Omit<Store, 'blobs'>;

/**
 * The LMDB index. Reads are synchronous `get`s against lmdb-js's cached read transaction: one
 * snapshot per event turn, so reads see whole commits only, and a commit made by another thread
 * becomes visible here once lmdb-js's setTimeout(0) renews the snapshot.
 */
export function openMetadata(path: string, now: () => number, blobs: BlobStore, records?: RecordsLog): Metadata {
  const raw = openMetadataDbs(path);
  if (!records && clusterOf(raw) !== undefined) {
    void raw.env.close();
    throw new Error(`${path} belongs to a cluster (its records live in PostgreSQL): start with PLINTH_DATABASE_URL set.`);
  }
  // Records of a former layout, moved before anything reads them (a cluster's go through
  // PostgreSQL once the replica has caught up: see connectStore).
  if (!records && hasLegacyDomains(raw)) raw.env.transactionSync(() => liftLegacyDomains(raw));
  // Blob files a power cut took from commits that carried their bytes, put back before anything reads them.
  const journal = records ? undefined : openBlobJournal(raw.env);
  const blobTmp = join(dirname(path), 'blobs', 'tmp');
  if (journal) {
    replayJournal(journal, blobs, blobTmp);
    // Until a small deploy's files are written, just after its answer, readers take them from here.
    blobs.attachJournal?.((sha256) => journaledBytes(journal, sha256));
  }
  const replica = records ? recordingDbs(raw) : undefined;
  const dbs = replica ? replica.dbs : raw;
  const changes = createSiteChanges(`plinth:site-changes:${path}`, () => raw.env.resetReadTxn());
  // Threads of this process hear of a change on the feed; other processes see this process's
  // mark move. Marks of processes that have ended are dropped, so the table stays a few rows.
  let marks = 0;
  const markWrites = new Set<Promise<unknown>>();
  const mark = (): void => {
    const write = dbs.siteMarks.put(process.pid, `${Date.now()}.${++marks}`).catch(() => undefined);
    markWrites.add(write);
    void write.finally(() => markWrites.delete(write));
  };
  for (const pid of dbs.siteMarks.getKeys({ snapshot: false })) {
    if (pid !== process.pid && !isRunning(pid)) void dbs.siteMarks.remove(pid).catch(() => undefined);
  }
  const announce = (site: SiteRecord | undefined): void => {
    if (!site) return;
    changes.publish({ siteId: site.id, name: site.name });
    mark();
  };

  let cluster: ClusterControl | undefined;
  if (records && replica) {
    // Changes other nodes made: applied in order, and the serving threads told of site records.
    // Wall-clock times for operators, whatever clock the records use.
    const health = createReplicaHealth(appliedSeq(raw), Date.now);
    // Told once per family, the first time this process skips writes to it (see applyChanges).
    let onUnknownFamily: ((db: string, writes: number) => void) | undefined;
    const told = new Set<string>();
    const applyRemote = async (found: Change[]): Promise<void> => {
      const { touchedSites, skipped } = await applyChanges(raw, found);
      for (const site of touchedSites) changes.publish({ siteId: site.id, name: site.name });
      health.skipped(skipped);
      for (const [db, writes] of Object.entries(skipped)) {
        if (told.has(db) || !onUnknownFamily) continue;
        told.add(db);
        onUnknownFamily(db, writes);
      }
    };
    dbs.transact = async (fn, options) => {
      // While what the commit waits for is in flight (a deploy's last blobs going up), the
      // operation runs against the replica as it is, and its change statement is made: under the
      // lock, that outcome stands if the log has not moved since (records-log.ts). One that throws
      // runs again under the lock, as it would have.
      let ahead: PreparedChange<ReturnType<typeof fn>> | undefined;
      if (options?.ready !== undefined) {
        try {
          const { result, writes } = replica.dryRun(() => ({ value: fn(), at: appliedSeq(raw) }));
          ahead = records.prepareAhead(result.at, { result: result.value, writes });
        } catch {
          ahead = undefined;
        }
        await options.ready;
      }
      const { result, change } = await records.commit(
        applyRemote,
        () => appliedSeq(raw),
        () => replica.dryRun(fn),
        options?.packRows?.(),
        ahead,
      );
      // This node serves its own change at once: applied before the caller hears of it, in this
      // event turn (the writes its dry run recorded, with no wait for LMDB's writer thread).
      if (change) applyChangesSync(raw, [change]);
      return result;
    };
    const catchUp = async (): Promise<number> => {
      for (;;) {
        const from = appliedSeq(raw);
        let found: Change[];
        try {
          found = await records.changesSince(from);
        } catch (err) {
          if (isRecordsUnavailable(err)) health.pollFailed(err);
          throw err;
        }
        health.polled(from, found.at(-1)?.seq ?? from);
        if (found.length === 0) return from;
        try {
          await applyRemote(found);
        } catch (err) {
          // A full disk, say: the replica stays where it was and the next poll tries again.
          health.applyFailed(err);
          throw err;
        }
        health.applied(appliedSeq(raw));
      }
    };
    cluster = {
      clusterId: records.clusterId,
      get schema() {
        return records.schema;
      },
      connected: () => records.connected(),
      answering: () => records.answering(),
      applied: () => appliedSeq(raw),
      catchUp,
      async follow(pollMs, onBehind, onUnknown) {
        onUnknownFamily = onUnknown;
        let running: Promise<unknown> | undefined;
        let again = false;
        const wake = (): void => {
          if (running) {
            again = true;
            return;
          }
          running = catchUp()
            .catch((err: unknown) => {
              if ((err as { code?: unknown }).code === REPLICA_BEHIND) onBehind?.();
            })
            .finally(() => {
              running = undefined;
              if (again) {
                again = false;
                wake();
              }
            });
        };
        const stopListening = await records.listen(wake);
        const timer = setInterval(wake, pollMs);
        timer.unref();
        wake();
        return async () => {
          clearInterval(timer);
          await stopListening();
          await running;
        };
      },
      alone: (task, fn) => records.alone(task, fn),
      pruneLog: (before) => records.pruneChanges(before),
      health: () => health.status(),
    };
  }

  const manifests = manifestOps(dbs, now);
  const rateLimited: Record<string, number> = {};
  const takeRateTokensSomewhere = async (checks: readonly RateCheck[]): Promise<RateResult> => {
    // Counters are this machine's own LMDB table when they are not in PostgreSQL.
    if (!records) return takeRateTokens(raw, checks, now());
    try {
      return await records.takeRateTokens(checks, now());
    } catch (err) {
      // PostgreSQL away, or a stalled node holding these counters: count on this node alone
      // rather than refuse every request.
      if (!isRecordsUnavailable(err) && !isRecordsBusy(err)) throw err;
      return takeRateTokens(raw, checks, now());
    }
  };

  function getSite(name: string): SiteRecord | undefined {
    const id = dbs.names.get(name);
    return id === undefined ? undefined : dbs.sites.get(id);
  }

  return {
    // Added to, never replaced: PostgreSQL's own tables in a cluster, this machine's LMDB otherwise.
    ...(records ? records.analytics : embeddedAnalytics(raw.env)),
    ...accountOps(dbs, now, announce),
    ...membershipOps(dbs, now),
    ...lifecycleOps(dbs, now, announce),
    ...peopleOps(dbs, now),
    ...oauthOps(dbs, now),
    ...deviceGrantOps(dbs, now),
    ...domainOps(dbs, now, announce),
    ...siteAccessOps(dbs, now, announce),
    ...eventOps(dbs, now),
    ...webhookOps(dbs, now),
    deliveries: records ? postgresDeliveryQueue(records) : localDeliveryQueue(raw),
    now,
    getSite,
    getSiteById: (id) => dbs.sites.get(id),
    getRevision(revisionId) {
      const key = dbs.revisionIds.get(revisionId);
      return key === undefined ? undefined : dbs.revisions.get(key);
    },
    getRevisionExtras: (revisionId) => dbs.revisionExtras.get(revisionId),
    // A request's path may be longer than any stored one; as a key it could overflow lmdb-js's
    // key buffer (a RangeError, not a miss). Each UTF-16 unit is at least one UTF-8 byte.
    getFile: (revisionId, path) => (path.length > MAX_PATH_BYTES ? undefined : dbs.paths.get([revisionId, path])),
    listFiles: (revisionId) => listFiles(dbs, revisionId),
    listRevisions(siteId, options = {}): RevisionPage {
      const limit = options.limit ?? DEFAULT_REVISION_PAGE;
      const top = options.before === undefined ? Number.MAX_SAFE_INTEGER : options.before - 1;
      // One extra row tells whether another page exists without a second scan; tombstones of
      // deleted revisions are stepped over (the range is lazy, so it reads only what it keeps).
      const rows: RevisionRecord[] = [];
      for (const { value } of dbs.revisions.getRange({ start: [siteId, top], end: [siteId], reverse: true })) {
        if (value.deletedAt !== undefined) continue;
        rows.push(value);
        if (rows.length > limit) break;
      }
      const revisions = rows.slice(0, limit);
      const last = revisions[revisions.length - 1];
      return rows.length > limit && last ? { revisions, nextBefore: last.number } : { revisions };
    },
    async commitRevision(input) {
      const result = await commitRevision(dbs, input, now, journal);
      if (result.ok) {
        announce(result.site);
        // lmdb-js resolves a commit once it is visible and syncs it to disk just after
        // (overlappingSync). A deploy is answered only once it is durable, so that an
        // acknowledged revision survives a power cut too, not just a crash of the process. In a
        // cluster it is durable once PostgreSQL committed it: the replica is a copy, and one that
        // lost its last changes in a power cut applies them again from the log, so the answer
        // does not wait for the replica's sync.
        if (!records) await dbs.env.flushed;
      }
      return result;
    },
    settleBlobJournal: (flush) => (journal ? settleJournal(raw.env, journal, blobs, blobTmp, flush) : Promise.resolve(0)),
    journaledBlobs: () => (journal ? journaledCount(journal) : 0),
    async recordEncodings(revisionId, encodings) {
      const key = dbs.revisionIds.get(revisionId);
      if (key === undefined || !isPlainId(revisionId)) return 0;
      const updated = await recordEncodings(dbs, revisionId, encodings);
      if (updated > 0) announce(dbs.sites.get(key[0]));
      return updated;
    },
    async setSiteState(name, state) {
      const result = await setSiteState(dbs, name, state, now);
      if (result.ok) announce(result.site);
      return result;
    },
    isNameUsed: (name) => dbs.names.get(name) !== undefined,
    ...manifests,
    ...replayOps(dbs, now),
    pruneExpired: () => pruneExpired(dbs, now()),
    findToken: (tokenHash) => dbs.tokens.get(tokenHash),
    async takeRateTokens(checks) {
      const result = await takeRateTokensSomewhere(checks);
      if (!result.allowed) {
        const kind = capKind(result.refusedBy);
        rateLimited[kind] = (rateLimited[kind] ?? 0) + 1;
      }
      return result;
    },
    async pruneCounters(before) {
      const local = await pruneCounters(raw, before);
      return records ? local + (await records.pruneCounters(before)) : local;
    },
    counters: () => ({ ...blobs.counters(), databaseErrors: records?.errors ?? 0, rateLimited: { ...rateLimited } }),
    onSiteChanged: (listener) => changes.subscribe(listener),
    siteChangesElsewhere() {
      let marksOfOthers = '';
      for (const { key, value } of dbs.siteMarks.getRange()) if (key !== process.pid) marksOfOthers += `${key}=${value};`;
      return marksOfOthers;
    },
    // Not a site change: the live revision is never pruned, and only live content is cached.
    pruneRevisions: (siteId, before) => pruneRevisions(dbs, siteId, before),
    deleteRevision: (siteId, revisionId, deletedBy) => deleteRevision(dbs, siteId, revisionId, { deletedBy, at: now() }, announce),
    listSiteIds: () => Array.from(dbs.sites.getKeys({ snapshot: false })),
    collectGarbage: (graceMs) => collectGarbage(dbs, blobs, graceMs, now, () => keptBlobs(manifests.manifestBlobs(), journal)),
    async snapshot(dir) {
      if (records) throw new Error('In a cluster, back up PostgreSQL (pg_dump, or its point-in-time recovery) and the bucket, not a node.');
      mkdirSync(dir, { recursive: true });
      // mdb_env_copy2 with MDB_CP_COMPACT: reads one snapshot, writes only the pages in use, into
      // `<dir>/data.mdb` (the environment has a folder of its own, so the copy is a folder too).
      await dbs.env.backup(dir, true);
    },
    async close() {
      changes.close();
      // A CLI process exits right after its change: its mark must be written first.
      await Promise.all(markWrites);
      await raw.env.close();
      await records?.close();
    },
    cluster,
  };
}

function listFiles(dbs: MetadataDbs, revisionId: string): ListedFile[] {
  // Ids we hand out always qualify; anything else cannot name a revision, and the byte-level range
  // end would be wrong for it.
  if (!isPlainId(revisionId)) return [];
  const range = dbs.paths.getRange({ start: [revisionId], end: pathRangeEnd(revisionId) });
  return Array.from(range, ({ key, value }) => ({ path: key[1], ...value }));
}

function takeRateTokens(dbs: MetadataDbs, checks: readonly RateCheck[], at: number): Promise<RateResult> {
  return dbs.transact((): RateResult => {
    const windows = checks.map((check) => rateWindow(at, check.windowMs));
    const keys = checks.map((check, i) => [check.scope, windows[i]!.start] as CounterKey);
    let retryAfterMs = 0;
    let refusedBy = '';
    checks.forEach((check, i) => {
      if (exceedsCap(dbs.counters.get(keys[i]!) ?? 0, check.hits ?? 1, check.limit)) {
        retryAfterMs = Math.max(retryAfterMs, windows[i]!.retryAfterMs);
        refusedBy ||= check.scope;
      }
    });
    if (retryAfterMs > 0) return { allowed: false, retryAfterMs, refusedBy };
    keys.forEach((key, i) => void dbs.counters.put(key, (dbs.counters.get(key) ?? 0) + (checks[i]!.hits ?? 1)));
    return { allowed: true };
  });
}

/** A cap's kind for metrics: its scope up to the colon (`api-network:203.0.113.0/24` → `api-network`), never the key. */
function capKind(scope: string): string {
  const colon = scope.indexOf(':');
  return colon === -1 ? scope : scope.slice(0, colon);
}

function pruneCounters(dbs: MetadataDbs, before: number): Promise<number> {
  return dbs.transact(() => {
    let removed = 0;
    for (const { key } of dbs.counters.getRange({ snapshot: false })) {
      if (key[1] < before) {
        void dbs.counters.remove(key);
        removed++;
      }
    }
    return removed;
  });
}

function recordEncodings(dbs: MetadataDbs, revisionId: string, encodings: ReadonlyMap<string, Partial<Record<Encoding, number>>>): Promise<number> {
  return dbs.transact(() => {
    let updated = 0;
    for (const { key, value } of dbs.paths.getRange({ start: [revisionId], end: pathRangeEnd(revisionId) })) {
      const found = encodings.get(value.sha256);
      if (found === undefined || Object.keys(found).length === 0) continue;
      void dbs.paths.put(key, { ...value, encodings: { ...value.encodings, ...found } });
      updated++;
    }
    return updated;
  });
}

function setSiteState(dbs: MetadataDbs, name: string, state: SiteState, now: () => number) {
  return dbs.transact((): Awaited<ReturnType<Store['setSiteState']>> => {
    const id = dbs.names.get(name);
    const site = id === undefined ? undefined : dbs.sites.get(id);
    if (!site) return { ok: false, reason: 'not_found' };
    // Deletion is final: its name is never reused and its owner chose it.
    if (site.state === 'deleted') return { ok: false, reason: 'deleted' };
    const updated: SiteRecord = { ...site, state, stateChangedAt: now() };
    void dbs.sites.put(site.id, updated);
    return { ok: true, site: updated };
  });
}

/** Expired short-lived records, in one pass per table (sign-ins are kept a day for their "used" answer). */
function pruneExpired(dbs: MetadataDbs, at: number): Promise<number> {
  return dbs.transact(() => {
    let removed = 0;
    const drop = <K extends string>(
      db: { getRange(o: object): Iterable<{ key: K; value: { expiresAt: number } }>; remove(key: K): unknown },
      graceMs = 0,
    ): void => {
      for (const { key, value } of db.getRange({ snapshot: false })) {
        if (value.expiresAt + graceMs <= at) {
          void db.remove(key);
          removed++;
        }
      }
    };
    removed += pruneManifests(dbs, at);
    drop(dbs.sessions);
    drop(dbs.signIns, 24 * 3600_000);
    drop(dbs.accessTickets);
    drop(dbs.replays);
    return removed;
  });
}

/**
 * Blobs garbage collection keeps whatever the index says: parts of manifests still uploading, and
 * blobs whose bytes wait in the journal (a file written from a row must not go before the row).
 */
function keptBlobs(manifestBlobs: Set<string>, journal: Database<Buffer, JournalKey> | undefined): Set<string> {
  if (journal === undefined) return manifestBlobs;
  const kept = new Set(manifestBlobs);
  for (const sha256 of journaledShas(journal)) kept.add(sha256);
  return kept;
}
