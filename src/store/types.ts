/**
 * The store's public record shapes and operations. Times are epoch milliseconds; the API edge turns
 * them into ISO strings. The store throws no ServiceError: absent records are `undefined`, expected
 * refusals are result objects, and only I/O faults throw.
 */

import type { DomainStatus, Encoding, Plan, RevisionExtras, Role } from '../rules/index.js';
import type { RunSync } from './filesystem-sync.js';
import type { ReplicaStatus } from './replica-health.js';
import type { PackedObject, PackLedger } from './bucket-packs.js';

export type { Encoding, Plan, RevisionExtras, ReplicaStatus, Role };

/** Stored state; `expired` is never stored, it is decided at read time from `expiresAt`. */
export type SiteState = 'active' | 'deleted' | 'taken_down';

export interface SiteRecord {
  /** Immutable internal id (`site_…`); names can change, ids never do. */
  id: string;
  /** Current name. */
  name: string;
  plan: Plan;
  state: SiteState;
  claimed: boolean;
  accountId?: string;
  createdAt: number;
  /** Set for unclaimed anonymous sites. */
  expiresAt?: number;
  /** Live revision id (`rev_…`); absent until the first commit. */
  liveRevision?: string;
  liveNumber: number;
  /** Highest revision number handed out so far. */
  lastNumber: number;
  siteTokenHash?: string;
  claimTokenHash?: string;
  /** Public key derived from the site token, to seal an account token for the claim poll. */
  claimKey?: string;
  stateChangedAt?: number;
  /** When a custom domain of the site was last added, removed or changed status (see domains.ts). */
  domainsChangedAt?: number;
  /** Who may see the site; absent means public (serving checks this one field). */
  access?: SiteAccessRecord;
  /**
   * Previews (`<number>--<name>`) of a public site kept to members and holders of a preview link;
   * absent: previews follow `access`. A protected site's previews always follow its own access.
   */
  previews?: PreviewAccessRecord;
}

/** A public site's previews kept to members (see site-access.ts). */
export interface PreviewAccessRecord {
  mode: 'members';
  /** When it was turned on: cookies and preview links from before no longer count. */
  since: number;
}

/** A protected site's access rule (see site-access.ts). */
export interface SiteAccessRecord {
  mode: 'password' | 'members';
  /** scrypt of the password: `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`; password mode only. */
  passwordHash?: string;
  /** When the rule was last set: access granted before it (cookies) no longer counts. */
  since: number;
  /**
   * Never stored: set on the rule serving derives for the previews of a public site kept to
   * members (`SiteRecord.previews`), whose preview links open them too.
   */
  previewLinks?: true;
}

/** A single-use ticket that carries a signed-in member from the app to a members-only site host. */
export interface AccessTicketRecord {
  siteId: string;
  accountId: string;
  /** The site host label it was made for (`<name>` or `<number>--<name>`). */
  host: string;
  expiresAt: number;
}

/** One row of a revision's path index. */
export interface FileEntry {
  sha256: string;
  size: number;
  /** Content type chosen at ingest (full header value, e.g. `text/html; charset=utf-8`). */
  type: string;
  /** Precompressed variants that exist in the blob store, with their sizes. */
  encodings?: Partial<Record<Encoding, number>>;
  /**
   * In a cluster, where the bucket holds the blob when it went up packed (bucket-packs.ts): its
   * pack's key and byte offset, `size` bytes from there. It travels with the records, so every
   * node can fetch the blob with PostgreSQL away; `plinth_packed_objects` stays the ledger for
   * garbage collection, which keeps a row (so its pack) while any revision references the blob.
   */
  pack?: FilePack;
}

/** See `FileEntry.pack`. */
export interface FilePack {
  key: string;
  offset: number;
}

/** Where a packed blob is, as `fetch` is told it: the pack's key, offset and the blob's size. */
export interface PackedRange extends FilePack {
  size: number;
}

/** The packed range of a file entry's blob, if the records hold one. */
export const packedRangeOf = (entry: Pick<FileEntry, 'pack' | 'size'>): PackedRange | undefined =>
  entry.pack === undefined ? undefined : { key: entry.pack.key, offset: entry.pack.offset, size: entry.size };

/** Blobs (by sha256) a publish left packed, and where: for the records of the commit after it. */
export type PackedBlobs = ReadonlyMap<string, FilePack>;

export interface ListedFile extends FileEntry {
  path: string;
}

export type RevisionKind = 'deploy' | 'patch' | 'rollback';

export interface RevisionRecord {
  id: string;
  siteId: string;
  number: number;
  createdAt: number;
  /** Who made it: the account's e-mail, `site_token`, `anonymous` or `admin`. */
  createdBy: string;
  kind: RevisionKind;
  rollbackOf?: string;
  files: number;
  bytes: number;
  /** Stored with `publish: false` and not made live since. */
  draft?: boolean;
  /**
   * Set when an owner deleted the revision: its files are gone and nothing resolves it by id; the
   * record stays (its number is never used again, its preview answers 410) until past the reach.
   */
  deletedAt?: number;
  /** Who deleted it: as `createdBy`. */
  deletedBy?: string;
}

/** Fields for a site created in the same transaction as its first revision. */
export interface NewSite {
  name: string;
  plan: Plan;
  claimed: boolean;
  /** The owning account; it becomes the site's first owner in the same transaction. */
  accountId?: string;
  /** Sites `accountId` may own: counted inside the transaction (`over_limit` when reached). */
  maxOwnedSites?: number;
  expiresAt?: number;
  siteTokenHash?: string;
  claimTokenHash?: string;
  claimKey?: string;
}

export interface CommitInput {
  /** Existing site name, or the name for `create`. */
  site: string;
  /** Create the site in the same transaction. The name must never have been used. */
  create?: NewSite;
  /**
   * Revision the change is based on. For an update it must equal the live revision at commit
   * time, else the commit fails with `conflict` and changes nothing. `null` means "no check"
   * (used for create and for administrative commits).
   */
  baseRevision: string | null;
  /** The complete file set of the new revision (path → entry). Paths are already validated. */
  files: ReadonlyMap<string, FileEntry>;
  kind: RevisionKind;
  createdBy: string;
  /** A rollback's source revision: it must still exist at commit time (else `no_revision`). */
  rollbackOf?: string;
  /** What the deploy compiled and found besides the files (`_redirects`, `_headers`, link warnings). */
  extras?: RevisionExtras;
  /** `false`: store the revision as a draft and leave the live revision as it is. */
  publish?: boolean;
  /**
   * The audit event of this commit, made from the site and revision as committed and recorded in
   * the same transaction: it is durable exactly when the revision is, with one sync for both (and
   * in a cluster one round of PostgreSQL and the replica where two would each cost one).
   */
  event?: (site: SiteRecord, revision: RevisionRecord) => NewEvent;
  /**
   * Blobs of this revision written as files without a sync: their bytes go in the same
   * transaction, so the commit's sync makes them durable with it (blob-journal.ts). Embedded
   * stores only.
   */
  journal?: readonly JournaledBlob[];
  /**
   * In a cluster: rows of packs already in the bucket that this commit writes in its own
   * transaction, with the records that name their objects (`BlobPublisher.rowsForCommit`); read
   * once `uploads` has resolved.
   */
  packRows?: PackRows | (() => PackRows | undefined);
  /**
   * In a cluster: the revision's blobs still going up to the bucket (`BlobPublisher.finish`), with
   * their places already in `files` (`BlobPublisher.places`). The commit takes the write lock only
   * once it resolves (a rejection refuses the commit); meanwhile it runs against the replica as it
   * is, an outcome kept if the log has not moved by then.
   */
  uploads?: Promise<unknown>;
}

/**
 * Rows of a deploy's packs, uploaded before its commit, that the commit writes itself: one
 * statement and round trip fewer after the last upload than writing them first.
 */
export interface PackRows {
  rows: ReadonlyArray<PackedObject & { key: string }>;
  /**
   * Whether it is too late to write them: garbage collection deletes a pack no row points to once
   * it is older than the grace period, so rows are written within half of it from the upload.
   */
  expired(): boolean;
}

/** A blob whose bytes ride in a revision's transaction (`CommitInput.journal`, blob-journal.ts). */
export interface JournaledBlob {
  sha256: string;
  bytes: Uint8Array;
}

export type CommitResult =
  | { ok: true; site: SiteRecord; revision: RevisionRecord; event?: EventRecord }
  | { ok: false; reason: 'conflict'; liveRevision?: string }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'name_taken' }
  | { ok: false; reason: 'over_limit' }
  /** A rollback whose source revision was deleted meanwhile. */
  | { ok: false; reason: 'no_revision' };

export interface RevisionPage {
  revisions: RevisionRecord[];
  /** Pass as `before` to get the next page; absent at the end. */
  nextBefore?: number;
}

export interface PutFileOptions {
  compress: boolean;
  /** Compression effort for the variants; defaults to `'small'`. */
  quality?: 'fast' | 'small';
  /**
   * `false` skips the per-file fsyncs: the caller writes a batch and then calls `flush()` once
   * before anything refers to the blobs. Readers still never see a partial blob (temp + rename).
   */
  durable?: boolean;
}

/** Content-addressed blob files: `blobs/<aa>/<sha256>` (or `<aa>/<bb>/`, see `BlobLayout`) plus `.br` / `.gz` variants. */
export interface BlobStore {
  /** Absolute path of a blob (or of one of its precompressed variants). */
  pathOf(sha256: string, encoding?: Encoding): string;
  has(sha256: string): boolean;
  /**
   * Streams bytes into a temp file (fsynced), hashing on the way, then renames into place unless
   * a blob with that hash already exists (that one's mtime is renewed instead, so garbage
   * collection's grace period covers reused blobs too). Never exposes a partial blob.
   */
  write(source: AsyncIterable<Uint8Array> | Uint8Array): Promise<{ sha256: string; size: number }>;
  /**
   * Writes a blob and, when `compress` is set and compression saves space, its brotli and gzip
   * variants (made once, here). Returns the path-index entry for it. `quality: 'fast'` (brotli 5,
   * gzip 4) is for deploys, where time matters; the default `'small'` spends more CPU for size.
   */
  putFile(bytes: Uint8Array, type: string, options: PutFileOptions): Promise<FileEntry>;
  /**
   * Makes the precompressed variants of an existing blob (those that save space) and returns the
   * sizes of the variants that exist. Idempotent. `made`: told the bytes of each variant this
   * call made (not of one that existed), once its file is in place.
   */
  compressBlob(
    sha256: string,
    options?: { quality?: 'fast' | 'small'; durable?: boolean; made?: (encoding: Encoding, bytes: Uint8Array) => void },
  ): Promise<Partial<Record<Encoding, number>>>;
  /**
   * Writes a blob synchronously and without fsync (temp file + rename, so never partially
   * visible), for ingest worker threads that own their thread and flush a whole deploy at once
   * with `flush()`. Returns false when the blob already existed (its mtime is renewed, as in `write`).
   */
  writeSync(bytes: Uint8Array, sha256: string): boolean;
  /**
   * `writeSync`'s first half: renews the mtime of a blob already stored (reused, not written) and
   * says whether there was one. A deploy whose files wait in the blob journal writes the others later.
   */
  reuseSync(sha256: string): boolean;
  /**
   * Makes the blob's variants (`only` these encodings; default all) from its bytes on the calling
   * thread (fast settings, no fsync, as `writeSync`), each only if it pays off; returns their sizes.
   */
  compressSync(sha256: string, bytes: Uint8Array, only?: readonly Encoding[]): Partial<Record<Encoding, number>>;
  /**
   * Makes every blob written with `durable: false` (or `writeSync`) durable, with one filesystem
   * sync, run by `run` (the ingest pool's sync helper) or else by a fork of `sync -f`.
   */
  flush(run?: RunSync): Promise<void>;
  /**
   * Reads a whole blob (or variant) into memory; for small files only. Without a bucket, a blob
   * whose file is not written yet is read from its journal row (see `isLocal`).
   */
  readSync(sha256: string, encoding?: Encoding): Buffer;
  /**
   * Removes temp files left by writers that died: at once when the writing process is gone (with
   * `atStartup`, also those named after this process's pid, which an earlier process may have had),
   * otherwise once older than `olderThanMs`. Returns how many went.
   */
  sweepTemp(olderThanMs: number, options?: { atStartup?: boolean }): Promise<number>;
  /** Every blob file and variant (not temp files), in no particular order; for garbage collection. */
  listBlobFiles(): AsyncIterable<BlobFile>;
  /**
   * Keeps garbage collection, in every process on this data directory, from deleting any blob
   * until the returned function is called (or this process ends): a backup copies the blobs of
   * a snapshot that may stop referencing them while it runs.
   */
  pin(): () => void;
  /** True while some running process holds a pin. */
  isPinned(): boolean;
  /**
   * Whether a blob (or variant) is on this node, so `readSync` (and `pathOf`) can serve it now.
   * Without a bucket, one system call: a blob of a small deploy may wait in the blob journal for
   * its file until just after the deploy's answer (blob-journal.ts), readable all the same, unless
   * `asFile` asks for the file itself (its path is to be read); in an ingest worker (no index
   * open) true. With a bucket, one system call that also marks the file used, for the cache's
   * least-recently-used order.
   */
  isLocal(sha256: string, encoding?: Encoding, asFile?: boolean): boolean;
  /**
   * Gives an embedded store its index's blob journal, read by `isLocal` and `fetch` (blob-journal.ts).
   * Absent with a bucket (a cluster's blobs are in the bucket before the commit).
   */
  attachJournal?(read: (sha256: string) => Buffer | undefined): void;
  /**
   * With a bucket: keeps these blobs' bytes for this thread's readers (`isLocal`, `readSync`, and
   * `fetch`, which writes the file from them) until the returned function is called, once their
   * files are written: a cluster node answers a small deploy before it writes them (the bucket
   * holds them). Bounded: past the bound a blob is fetched from the bucket. Absent without one.
   */
  holdUnwritten?(blobs: readonly JournaledBlob[]): () => void;
  /**
   * Brings a blob (or variant) from the bucket into the local cache, checking it against its
   * sha256 before it is visible; callers asking for the same blob at once share one download.
   * Resolves at once when the file is local. Without a bucket, writes a journaled blob's file
   * from its row (see `isLocal`), and rejects when the blob is in neither. Rejects with `code`
   * `BUCKET_UNAVAILABLE` when the bucket cannot be reached, and with another error when the
   * bucket lacks the blob or sent other bytes. A small blob's variant the bucket lacks (not
   * uploaded yet: see `BlobPublisher.afterAnswer`) is made here from the blob. `packed`: where
   * the records say the blob itself is packed (`packedRangeOf`), read first, with no question to
   * PostgreSQL; without it, or when that range fails, PostgreSQL's ledger is asked.
   */
  fetch(sha256: string, encoding?: Encoding, packed?: PackedRange): Promise<void>;
  /**
   * Makes sure the bucket holds these blobs and every variant of them on the local disk, uploading
   * what it lacks (large blobs in parts) and renewing the age of what it has, so that bucket
   * garbage collection spares them until the commit that references them. Call after `flush()`
   * and before that commit. No-op without a bucket. Rejects as `fetch` does. Resolves where the
   * blobs that live packed are, for the commit's file records (`FileEntry.pack`). `known`: blobs
   * (among `sha256s` or not) whose size and variants the caller knows, not looked for on disk.
   */
  publish(sha256s: Iterable<string>, known?: ReadonlyMap<string, KnownBlob>): Promise<PackedBlobs>;
  /**
   * `publish` in steps, for a deploy whose blobs are stored one by one: `add` starts on a blob as
   * soon as it is stored (the ingest worker announces each), `finish` adds the rest and resolves
   * or rejects as `publish` of all of them would, but for the variants of small blobs, which
   * `afterAnswer` uploads. No-op without a bucket.
   */
  publisher(options?: PublisherOptions): BlobPublisher;
  /**
   * This node's step of cache upkeep: deletes the least recently used local blob files until the
   * cache is within its byte budget, never one the bucket does not hold yet, nor one used in the
   * last minute. No-op without a bucket, or with a budget of 0.
   */
  trimCache(): Promise<CacheTrim>;
  /** The bucket the blobs live in, for bucket garbage collection; undefined without one. */
  readonly bucket?: BlobBucket;
  /**
   * With a bucket: whether the local files are a cache the power-loss guard covers
   * (bucket-cache-guard.ts), so that a deploy, durable once its blobs are in the bucket, need not
   * sync them before its answer. Absent without a bucket: there the files are the only copy.
   */
  readonly cacheGuarded?: () => boolean;
  /** In a cluster, where packed objects live (bucket-packs.ts), for bucket garbage collection. */
  readonly packs?: PackLedger;
  /** What this handle did with the bucket so far (all 0 without one), for operators' metrics. */
  counters(): BlobCounters;
}

/**
 * What the caller of `publish` knows of a blob already (the compression that just made its
 * variants), so that nothing is looked for on disk: its size, and every variant it has with theirs.
 */
export interface KnownBlob {
  size?: number;
  encodings: Partial<Record<Encoding, number>>;
  /** The bytes of some of those variants, when the caller holds them, so a pack need not read their files. */
  variantBytes?: Partial<Record<Encoding, Uint8Array>>;
}

export interface PublisherOptions {
  /**
   * The caller commits right after `finish` (a deploy): the rows of the packs `finish` waits for
   * (up to a bound) are not written by the publisher but handed over (`rowsForCommit`) for the
   * commit's own transaction.
   */
  rowsToCommit?: boolean;
}

/** See `BlobStore.publisher`. */
export interface BlobPublisher {
  /**
   * `bytes`: the blob's own, when the caller holds them (up to `bytesWanted`), so a pack need not
   * read its file. `encodings`: its variants on disk with their sizes, when the caller knows them
   * (the unpack that stored it), so none is looked for on disk; unset: each is looked for.
   * `size`: the blob's, when known without its bytes (else read from its file). `variantBytes`: the
   * bytes of some of its variants, when the caller holds them (as `bytes` for the blob).
   */
  add(
    sha256: string,
    bytes?: Uint8Array,
    encodings?: Partial<Record<Encoding, number>>,
    size?: number,
    variantBytes?: Partial<Record<Encoding, Uint8Array>>,
  ): void;
  /** Blobs up to this size are worth handing to `add` with their bytes (packing); 0: none. */
  readonly bytesWanted: number;
  /**
   * Bytes of blobs handed to `add` that it holds at most (until each is packed or known not to
   * be); past it, a blob's file is read. A site within it may be added before its files exist.
   */
  readonly bytesHeld: number;
  /**
   * Every blob the unpack stores has been `add`ed: the blobs waiting are asked about now and the
   * pack being filled goes up, instead of at `finish`.
   */
  drain(): void;
  /** Resolves once the blobs, and the variants of large ones, are in the bucket: with where the packed blobs are (`publish`). */
  finish(sha256s: Iterable<string>): Promise<PackedBlobs>;
  /**
   * Once `finish` was called: where the packed blobs will be, as `finish` resolves with, as soon
   * as the last pack is cut, before it is in the bucket (a commit can be prepared meanwhile; only
   * `finish` says the blobs are there).
   */
  places?(): Promise<PackedBlobs>;
  /**
   * Uploads the variants of small blobs that `finish` left out (call it after the commit): until
   * they arrive, a node asked for one makes it from its blob (see `fetch`).
   */
  afterAnswer(): Promise<void>;
  /**
   * With `PublisherOptions.rowsToCommit`, once `finish` has resolved: the rows it left for the
   * commit (`CommitInput.packRows`); undefined when none.
   */
  rowsForCommit?(): PackRows | undefined;
  /** The commit wrote those rows: later deploys of this node may take their objects as placed without asking. */
  rowsCommitted?(): void;
}

/** One pass of cache upkeep: what went, and what the cache held after it (when it was measured). */
export interface CacheTrim {
  files: number;
  bytes: number;
  /** Bytes of blob files left in the cache; undefined when the pass did not list them (no budget). */
  cachedBytes?: number;
}

export interface BlobCounters {
  /** Blobs and variants downloaded from the bucket into the local cache, and their bytes. */
  downloads: number;
  downloadedBytes: number;
  /** Calls to the bucket that failed because it could not be reached or refused (not a missing object). */
  bucketErrors: number;
}

/** What a store handle counted so far, for operators' metrics. */
export interface StoreCounters extends BlobCounters {
  /** Calls to PostgreSQL that failed (0 for the embedded store). */
  databaseErrors: number;
  /** Requests refused by a rate cap, by the cap's kind (its scope up to the colon: `api-network`, `anon-sites` …). */
  rateLimited: Record<string, number>;
}

export interface BlobFile {
  sha256: string;
  /** Set for a precompressed variant. */
  encoding?: Encoding;
  path: string;
  mtimeMs: number;
  size: number;
}

/** One object of the blob bucket, as listed or looked up. */
export interface BucketObject {
  key: string;
  size: number;
  /**
   * When it was last written or renewed: the newer of its `LastModified` and the time `publish`
   * stamped on it (listings show only `LastModified`).
   */
  touchedMs: number;
}

/** The blob bucket, as garbage collection sees it. */
export interface BlobBucket {
  /** Which installation the bucket belongs to, from its marker; undefined for a bucket without one. */
  readOwner(): Promise<BucketOwner | undefined>;
  /** Every blob object (key, size, age), page by page; with `prefix`, every object under it. */
  list(prefix?: string): AsyncIterable<BucketObject>;
  /** The object, or undefined when the bucket has none under `key`. */
  head(key: string): Promise<BucketObject | undefined>;
  delete(key: string): Promise<void>;
  /** The blob and its variant a key names, or undefined for a key that is not a blob's. */
  parseKey(key: string): { sha256: string; encoding?: Encoding } | undefined;
}

/**
 * The one Plinth installation a bucket's blobs belong to, named by the marker object the bucket
 * carries: a cluster (its id in PostgreSQL) or an embedded install (an id kept in its data
 * directory). Only the owner's sweeps may delete in it.
 */
export interface BucketOwner {
  kind: 'cluster' | 'install';
  id: string;
}

/** An S3-compatible bucket for blobs (AWS S3, R2, MinIO, Ceph RGW). */
export interface BucketOptions {
  bucket: string;
  /** Unset: AWS's endpoint for the region. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Byte budget of the local cache; 0 = no budget. */
  cacheBytes: number;
  /** The blob grace period: `publish` renews objects older than half of it. */
  graceMs: number;
  /** Blobs larger than this go up in parts (default 16 MB). */
  multipartThresholdBytes?: number;
  /** Size of each part (default 8 MB; S3 wants at least 5 MB but for the last). */
  partSizeBytes?: number;
  /** `trimCache` keeps files used within this long (default a minute). */
  minIdleMs?: number;
  /**
   * With a pack ledger (a cluster): new objects up to this size go up appended to pack objects,
   * not one request each (`PLINTH_BUCKET_PACK_MAX_BYTES`); unset or 0: never packed.
   */
  packMaxBytes?: number;
}

/** A custom domain attached to a site (keyed by the domain: one site at a time). */
export interface DomainRecord {
  /** Lower-case ASCII (punycode), no trailing dot. */
  domain: string;
  siteId: string;
  /** Id of this claim (`dom_…`): a check that started before a removal cannot touch a new claim. */
  claim: string;
  status: DomainStatus;
  /** Why the last check failed (kept on a pending domain too, as a hint). */
  reason?: string;
  /** The value the `_plinth-challenge.<domain>` TXT record must hold. */
  token: string;
  /** Of an apex/www pair, the one the other redirects to. */
  primary: boolean;
  /** With `primary`: the site's own address redirects here too. */
  redirectSite?: boolean;
  createdAt: number;
  verifiedAt?: number;
  checkedAt?: number;
  /** An active domain whose record went missing: since when (suspended after the grace period). */
  failingSince?: number;
}

export interface ClaimOptions {
  /** The claiming account may own at most this many sites (`over_limit` otherwise). */
  maxOwnedSites?: number;
  /**
   * An API token made for the agent that published the site: its record is added with the claim,
   * and `sealed` (the token encrypted so only the site token's holder can open it) waits on the
   * site token's record for the next claim poll.
   */
  accountToken?: { tokenHash: string; name: string; sealed: string };
}

export type ClaimResult =
  | { ok: true; site: SiteRecord; tokenId?: string; endedWebhooks: WebhookRecord[] }
  | { ok: false; reason: 'not_found' | 'already_claimed' | 'expired' | 'over_limit' };

/**
 * A request's first answer, kept for its retries (an `Idempotency-Key`, a digest deploy's last
 * part). Pending (no `status`) while the first request runs.
 */
export interface ReplayRecord {
  /** sha256 of what the request was (its target and body): the same key on another request does not replay. */
  fingerprint?: string;
  /** The answer's HTTP status; absent while the first request is still running. */
  status?: number;
  /** The answer's body, sealed by the operation that stored it (only a caller who can derive the key opens it). */
  sealed?: string;
  /** For a manifest's answer: who made the manifest (`ManifestRecord.owner`). */
  owner?: string;
  createdAt: number;
  expiresAt: number;
}

/** The first half of a digest deploy: the whole site by hash, and what the caller must still send. */
export interface ManifestRecord {
  /** Who may finish it: `account:<id>`, `site_token:<token hash>`, or `anonymous` (with `secretHash`). */
  owner: string;
  /**
   * An anonymous maker's manifest secret, by its sha256: every later call for the manifest must
   * send the secret, since the id alone (in URLs and logs) proves nothing.
   */
  secretHash?: string;
  mode: 'create' | 'update';
  /** For an update: the site (by id, so a rename in between is harmless) and its base revision. */
  siteId?: string;
  baseRevision?: string;
  /** The target site's plan, whose limits the result must meet. */
  plan: Plan;
  /** The site as it will be published: final paths, sizes and hashes. */
  files: Array<{ path: string; size: number; sha256: string }>;
  skipped: string[];
  /** Contents the caller already has on this site, reusable without upload. */
  known: Record<string, { size: number; encodings?: Partial<Record<Encoding, number>> }>;
  /** Hashes whose bytes must be uploaded. */
  missing: string[];
  /** Bytes of `missing` together (what the manifest parks until it is published). */
  missingBytes?: number;
  /** An anonymous maker's network: anonymous manifests count against one cap per network. */
  network?: string;
  createdAt: number;
  /**
   * When it expires unless a part arrives: each part renews it to `createdAt`'s lifetime
   * (`expiresAt - createdAt`) after that part (see `ManifestPart.at`).
   */
  expiresAt: number;
  /** A part was refused for good (a secret): the deploy can never finish, and its parts are dropped. */
  refused?: { code: string; message: string; agentMessage?: string; details?: Record<string, unknown> };
  /** Set by the one request that publishes it; it is deleted once that publish is over. */
  takenAt?: number;
}

/** One content of a manifest that has arrived (its bytes are a blob). */
export interface ManifestPart {
  size: number;
  /** When it arrived: the manifest lives on after its latest part. */
  at: number;
  /** Worth precompressed variants once the site is live. */
  compress?: boolean;
}

export interface ApiTokenInfo {
  /** Public handle (`tok_…`) for listing and revoking; not a credential. */
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt?: number;
}

export interface SessionRecord {
  accountId: string;
  createdAt: number;
  expiresAt: number;
  /** Secret the session's CSRF tokens are derived from. */
  csrfSecret: string;
}

export interface SignInRecord {
  email: string;
  /** sha256 of the secret in the e-mailed link. */
  linkHash: string;
  /** sha256 of the secret in the cookie of the browser that asked (useless without the code). */
  browserHash: string;
  /** sha256 of the 6-digit code. */
  codeHash: string;
  createdAt: number;
  expiresAt: number;
  attempts: number;
  /** App path to return to after signing in. */
  next?: string;
  usedAt?: number;
}

/** What finishes a sign-in: the link's secret alone, or the browser's secret and the code. */
export type SignInProof = { kind: 'link'; secretHash: string } | { kind: 'browser'; secretHash: string; codeHash: string };

export type SignInOutcome =
  { ok: true; signIn: SignInRecord } | { ok: false; reason: 'not_found' | 'expired' | 'used' | 'locked' | 'wrong_code'; attemptsLeft?: number };

export interface ReportRecord {
  /** `rep_…` */
  id: string;
  site: string;
  reason: 'phishing' | 'malware' | 'spam' | 'copyright' | 'other';
  details: string;
  contact?: string;
  /** Network of the reporter (for abuse of the form itself), never the full address. */
  network: string;
  createdAt: number;
  status: 'open' | 'resolved';
  resolvedAt?: number;
  note?: string;
}

export interface InviteRecord {
  siteId: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  tokenHash: string;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

/** A pending two-step action. */
export type Confirmation =
  | { kind: 'remove_member'; siteId: string; accountId: string; requestedBy: string; expiresAt: number }
  /** The same two steps for an address that has only a pending invite: the invite is withdrawn. */
  | { kind: 'withdraw_invite'; siteId: string; email: string; requestedBy: string; expiresAt: number }
  | { kind: 'delete_site'; siteId: string; requestedBy: string; expiresAt: number; status: 'pending' | 'approved'; decidedAt?: number };

export type ApprovalOutcome =
  { ok: true; approval: Extract<Confirmation, { kind: 'delete_site' }> } | { ok: false; reason: 'not_found' | 'expired' | 'wrong_address' | 'already_decided' };

/** What a token (looked up by its sha256) grants. */
export type TokenRecord =
  | { kind: 'site'; siteId: string; sealedAccountToken?: string }
  | { kind: 'claim'; siteId: string }
  /** `clientId`: the OAuth client a device sign-in (RFC 8628) issued it to, which may revoke it (RFC 7009). */
  | { kind: 'api'; accountId: string; name: string; createdAt: number; id?: string; clientId?: string }
  /** An OAuth access (`pla_`) or refresh token: valid while unexpired and its grant stands. */
  | { kind: 'oauth_access' | 'oauth_refresh'; grantId: string; expiresAt: number };

/** An MCP app that may ask people for access: registered (RFC 7591) or named by its metadata URL. */
export interface OAuthClientRecord {
  /** `client_id`: `mcp_…` for registered clients, the https URL of a client metadata document otherwise. */
  id: string;
  kind: 'registered' | 'metadata_document';
  /** Self-asserted by the client; pages say so. */
  name: string;
  redirectUris: string[];
  clientUri?: string;
  createdAt: number;
  /** Metadata documents: when the document was last fetched. */
  fetchedAt?: number;
}

/** A pending authorization code (stored by its hash), bound to everything the token request must repeat. */
export interface AuthorizationCodeRecord {
  clientId: string;
  accountId: string;
  redirectUri: string;
  /** PKCE S256 challenge. */
  codeChallenge: string;
  /** RFC 8707 resource the tokens will be for. */
  resource: string;
  scope: string;
  expiresAt: number;
  usedAt?: number;
  /** The grant the code was exchanged for (revoked if the code is used again). */
  grantId?: string;
}

/**
 * A device sign-in (RFC 8628) waiting for, or past, a person's decision, stored in `oauthCodes` by
 * the hash of its device code: nodes of the release before replicate it there as any record and
 * prune it by `expiresAt`, so a rolling upgrade needs no new database.
 */
export interface DeviceGrantRecord {
  kind: 'device';
  clientId: string;
  /** The client's name, and the device's (its own, or the client's); the token is named after the device. */
  clientName: string;
  deviceName: string;
  scope: string;
  /** The network (IPv4 /24, IPv6 /64) that asked, shown to the person who decides. */
  network: string;
  /** Key in `oauthCodes` of the user code's index record. */
  userCodeKey: string;
  createdAt: number;
  /** After this the device code and user code answer `expired_token`. */
  expiresAt: number;
  /** Seconds the client must wait between polls; each `slow_down` adds 5 (RFC 8628 §3.5). */
  intervalS: number;
  lastPolledAt?: number;
  status: 'pending' | 'approved' | 'denied' | 'used';
  /** Who approved or denied, and when. */
  accountId?: string;
  decidedAt?: number;
  /** The API token the exchange made (`tok_…`). */
  tokenId?: string;
}

/** The user code's index in `oauthCodes`: the typed code leads to the device grant. */
export interface DeviceUserCodeRecord {
  kind: 'device_user_code';
  deviceCodeHash: string;
  expiresAt: number;
}

/** What `oauthCodes` holds: authorization codes (no `kind`), device grants and their user codes. */
export type OAuthCodeEntry = AuthorizationCodeRecord | DeviceGrantRecord | DeviceUserCodeRecord;

/** One person's approval of one MCP app: the tokens it holds hang off it, and stop when it goes. */
export interface OAuthGrantRecord {
  /** `grant_…` */
  id: string;
  accountId: string;
  clientId: string;
  clientName: string;
  /** Host of the redirect URI the approval went to, for people to recognise the app. */
  redirectHost: string;
  resource: string;
  scope: string;
  createdAt: number;
  /** Hash of the one refresh token that may be used next; any older one is a replay. */
  refreshHash: string;
  lastRefreshedAt?: number;
  revokedAt?: number;
  revokedReason?: 'disconnected' | 'refresh_reused' | 'code_reused' | 'revoked';
}

/** New tokens for a grant, by hash, with their expiry times. */
export interface IssuedTokens {
  accessHash: string;
  accessExpiresAt: number;
  refreshHash: string;
  refreshExpiresAt: number;
}

export type CodeRedemption = { ok: true; grant: OAuthGrantRecord } | { ok: false; reason: 'not_found' | 'expired' | 'mismatch' | 'reused' };

export type RefreshOutcome = { ok: true; grant: OAuthGrantRecord } | { ok: false; reason: 'not_found' | 'expired' | 'revoked' | 'mismatch' | 'reused' };

export interface AccountRecord {
  /** Immutable internal id (`acct_…`). */
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** A paid or Free plan; never `anonymous`. */
  plan: Exclude<Plan, 'anonymous'>;
  createdAt: number;
}

export interface Membership {
  siteId: string;
  accountId: string;
  role: Role;
  addedAt: number;
}

export interface RateCheck {
  /** What is counted, e.g. `anon-sites:203.0.113.0/24`. */
  scope: string;
  limit: number;
  windowMs: number;
  /**
   * How many hits this take counts (default 1): a JSON-RPC batch counts each of its calls. A
   * negative number gives hits back (a site password that turned out right).
   */
  hits?: number;
}

/** A refusal names the scope of (the first) cap that had no room. */
export type RateResult = { allowed: true } | { allowed: false; retryAfterMs: number; refusedBy: string };

export interface StoreOptions {
  /** Data directory; LMDB lives in `<dir>/meta`, blobs in `<dir>/blobs`. */
  dir: string;
  /** Clock, injectable so tests can move time. */
  now?: () => number;
  /** Keep blobs in this bucket, with `<dir>/blobs` as this node's cache of them. */
  bucket?: BucketOptions;
}

/** A store whose records live in PostgreSQL, with the local LMDB as its replica. */
export interface ClusterStoreOptions extends StoreOptions {
  /** `postgres://…` */
  databaseUrl: string;
  /**
   * Builds or rebuilds the replica when it does not follow this database (a new node, or a data
   * directory of another cluster). One thread per node does this before the others connect.
   */
  bootstrap?: boolean;
  /** Names this process in the change log. */
  origin?: string;
  maxConnections?: number;
  /**
   * Start even while PostgreSQL cannot be reached, if the replica is complete (it follows a
   * cluster): reads are served from it, writes fail as unavailable until PostgreSQL answers, and
   * then the replica is checked against it and follows it. Without, the store does not open.
   */
  startWithoutDatabase?: boolean;
  /** Told each time the correction the node applies to its clock to match PostgreSQL's changes (0: none). */
  onClockOffset?: (offsetMs: number) => void;
}

/** What a store in a cluster adds: the replica's position and the cluster's upkeep lock. */
export interface ClusterControl {
  readonly clusterId: string;
  /**
   * The database's schema version and the newest this Plinth knows. The database is newer only
   * while a rolling upgrade is under way and its migrations said this version still works on it.
   */
  readonly schema: { database: number; known: number };
  /** False while a node that started without PostgreSQL (on its complete replica) has not reached it yet. */
  connected(): boolean;
  /**
   * False while PostgreSQL is known not to answer (its last call failed): a write would fail, so
   * an operation with costly work before its write (a deploy) refuses at once.
   */
  answering(): boolean;
  /** The last change of the log this replica applied. */
  applied(): number;
  /** Applies every change committed since; returns the position reached. */
  catchUp(): Promise<number>;
  /**
   * Keeps the replica current (LISTEN/NOTIFY, and polling every `pollMs`) until stopped. Calls
   * `onBehind` if the log no longer holds the changes this replica needs: it must be rebuilt,
   * which the next start does. Calls `onUnknownFamily` once per record family the log holds writes
   * to that this release does not know (a newer node wrote them during a rolling upgrade): they are
   * skipped, and the rest applied.
   */
  follow(pollMs: number, onBehind?: () => void, onUnknownFamily?: (db: string, writes: number) => void): Promise<() => Promise<void>>;
  /** Drops changes of the log older than `before` (epoch ms); replicas further behind are rebuilt at start-up. */
  pruneLog(before: number): Promise<number>;
  /** Runs `fn` unless another node is already running the task (returns undefined then). */
  alone<T>(task: string, fn: () => Promise<T>): Promise<T | undefined>;
  /** How well the replica follows the log, as the thread that follows it saw it (see `follow`). */
  health(): ReplicaStatus;
}

/**
 * Who made a change the audit log records: an account (by e-mail), the holder of a site token,
 * someone without a credential (with their network), the operator's command, or Plinth itself.
 */
export type EventActor =
  | { kind: 'account'; email: string; accountId?: string }
  | { kind: 'site_token'; accountId?: undefined }
  | { kind: 'anonymous'; network?: string; accountId?: undefined }
  | { kind: 'operator'; accountId?: undefined }
  /** Plinth itself: a notice of expiry, a webhook disabled after failures. */
  | { kind: 'system'; accountId?: undefined };

/** Facts of an event: plain values only, never a secret. */
export type EventDetails = Record<string, string | number | boolean>;

/** One entry of the audit log (events.ts). */
export interface EventRecord {
  id: string;
  /** `deploy.published`, `member.invited`, `token.created`, … (docs/audit-log.md lists them). */
  kind: string;
  at: number;
  actor: EventActor;
  /** The site it concerns, with its name at the time. */
  siteId?: string;
  siteName?: string;
  /** The account it concerns (its own changes: tokens, devices, sign-ins). */
  accountId?: string;
  details: EventDetails;
}

export type NewEvent = Omit<EventRecord, 'id' | 'at'>;

/** A site's webhook (webhooks.ts): where its events are sent, signed with `secret`. */
export interface WebhookRecord {
  id: string;
  siteId: string;
  url: string;
  /** The event types it receives (`deploy.published`, …). */
  events: string[];
  /** `whsec_<base64 key>`: the receiver's copy verifies each delivery's signature. */
  secret: string;
  createdAt: number;
  createdBy: string;
  /** Deliveries given up on in a row; reset by one that goes through. */
  failures: number;
  /** Set once the webhook is disabled: nothing more is queued for it (`webhookHears`). */
  disabledAt?: number;
  /**
   * Why: too many deliveries in a row given up on (absent on records from before there was a
   * second reason), or its site's claim ended the site token's reach, which registered it.
   */
  disabledFor?: WebhookDisabledFor;
}

export type WebhookDisabledFor = 'failures' | 'claim';

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event on its way to one webhook, with its attempts so far. */
export interface WebhookDelivery {
  /** `msg_…`: the `webhook-id` header, the same on every attempt. */
  id: string;
  webhookId: string;
  siteId: string;
  /** The event type. */
  event: string;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  createdAt: number;
  state: DeliveryState;
  /** Attempts started so far. */
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAt: number;
  /** An attempt in progress holds the delivery until then; past it, another may try. */
  leaseUntil?: number;
  lastAt?: number;
  /** The receiver's status of the last attempt, or why it had none (`timeout`, `refused address`, …). */
  lastStatus?: number;
  lastError?: string;
}

/** What an attempt came to: delivered, or failed with the time of the next attempt (none: given up). */
export type DeliveryOutcome =
  { delivered: true; status: number; at: number } | { delivered: false; status?: number; error?: string; at: number; retryAt?: number };
