// The plain-data contract between the HTTP side and the ingest worker. Only strings, numbers,
// booleans, arrays and plain objects (and the ports `announce` and `syncPort`, transferred): these
// values cross a thread boundary by structured clone.
import type { MessagePort } from 'node:worker_threads';
import type { RevisionExtras, RulesFileLimits } from '../rules/index.js';

export interface IngestLimits {
  /** Kept files in this request (the HTTP side checks the merged site of a patch). */
  maxFiles: number;
  /** Decompressed bytes of one file. */
  maxFileBytes: number;
  /** Decompressed bytes of all kept files in this request. */
  maxSiteBytes: number;
  /** Bytes `_redirects` and `_headers` may have on every plan (0: no cap), for the refusal's words. */
  maxRulesFileBytes?: number;
}

/**
 * Where the request body is: on disk (`spoolPath`, or only its bytes `range` of it; the worker
 * deletes it once read, before flushing blobs, and the HTTP side deletes it in every other case),
 * or its bytes (`body`, a body the HTTP thread received into memory; the pool transfers it to the
 * worker rather than copying).
 */
export type UnpackBody = { spoolPath: string; range?: ByteRange; body?: undefined } | { body: Uint8Array; spoolPath?: undefined };

/** `[start, end)` of a file, in bytes. */
export interface ByteRange {
  start: number;
  end: number;
}

export type UnpackTask = UnpackBody & UnpackOptions;

export interface UnpackOptions {
  /** Data directory; blobs go to `<dataDir>/blobs`. */
  dataDir: string;
  /** `json` when the request's Content-Type is application/json; archives are told apart by their bytes. */
  bodyKind: 'archive' | 'json';
  limits: IngestLimits;
  /** SPEC 4.1 rule 7: anonymous deploys may not publish executables or installers. */
  blockExecutables: boolean;
  /**
   * Only some files of a site (the missing contents of a digest deploy): no top-folder strip and
   * no index.html rule, as for a patch; the whole site is checked once it is assembled.
   */
  partial?: boolean;
  /**
   * For a manifest's part: every path each content it may carry (by sha256) will be published at.
   * The leak guard judges the bytes as each of those, not as the name the part gave them.
   */
  publishedAs?: Record<string, string[]>;
  /**
   * Text files up to `maxFileBytes` get their gzip variant while they are stored, until
   * `leftBytes` of them were compressed, so the deploy's first visitors get them compressed; the
   * other variants are made after the commit. Unset: all after.
   */
  compressBeforePublish?: { leftBytes: number; maxFileBytes: number };
  /**
   * A whole site in one body (not a patch, a part, or a body with references): its analysis (see
   * `AnalyzeTask`) is done in this task, while its blobs are being flushed, when the site is small
   * enough for one thread of `threads` to check its links alone (see `linkCheckShares`).
   */
  analyze?: { limits: SiteRulesLimits; threads: number };
  /**
   * A port the worker posts each blob to once it is stored, as an `Announcement` in a batch (see `ANNOUNCE_AT_ONCE`), so that a
   * node with a bucket starts its upload while the rest is unpacked. The one value here that is
   * not plain data: it is transferred, and the worker closes it when done.
   */
  announce?: MessagePort;
  /** Set by the pool: where the task asks for the filesystem sync of its blobs (see sync-port.ts). */
  syncPort?: MessagePort;
  /**
   * Blobs up to this many bytes are announced with their bytes (copied here into a buffer of
   * their own, which is transferred), so that a pack is built from memory rather than from the
   * files just written; unset or 0: none.
   */
  announceBytesMax?: number;
  /**
   * A site of up to this many bytes, all of them in the body, is not flushed: the result carries
   * every blob's bytes (`journal`). On one machine the commit makes them durable in its own
   * transaction, one sync where a flush and the commit made two; on a cluster node the bucket
   * holds them before the answer and the journal only carries them to the files written after
   * it. Unset or 0: flushed (a larger site would make the index write too much).
   */
  journalMaxBytes?: number;
  /**
   * With `journalMaxBytes`, only new blobs up to this many bytes have their files written after
   * the answer; larger ones are written as they are stored. A cluster node sets it to
   * `announceBytesMax`: it uploads those blobs from the bytes it was announced, and larger ones
   * from their files. Unset: any size.
   */
  deferMaxBytes?: number;
  /**
   * False: the blobs are not synced before the task returns. Set where they are durable
   * elsewhere before the deploy's answer (a cluster's bucket) and the local files are a cache
   * the power-loss guard covers (store/bucket-cache-guard.ts). Unset: synced, as the only copy.
   */
  syncBlobs?: boolean;
}

/** A blob whose bytes a commit carries (see `UnpackOptions.journalMaxBytes`). */
export interface JournaledBlob {
  sha256: string;
  bytes: Uint8Array;
}

/**
 * A stored blob as `UnpackTask.announce` tells it: its sha256, its bytes (up to
 * `announceBytesMax`), and its variants on disk with their sizes (as its file entry has them), so
 * the receiving thread need not look for them on disk, one `stat` per encoding and blob.
 */
export type Announcement = [sha256: string, bytes: Uint8Array | undefined, encodings: { br?: number; gzip?: number }];
/**
 * Announcements go on `UnpackTask.announce` in batches (an array of them per message) of this
 * many; one over `announceBytesMax` at once, and the last ones at the end, with the batch before
 * them when they are at most `ANNOUNCE_LAST_FEW`.
 */
export const ANNOUNCE_AT_ONCE = 32;
/** See `ANNOUNCE_AT_ONCE`: a message holds at most `ANNOUNCE_AT_ONCE + ANNOUNCE_LAST_FEW` announcements. */
export const ANNOUNCE_LAST_FEW = 8;
/**
 * The last message on `UnpackTask.announce`, once the site passed its checks: its last
 * announcements (perhaps none), and by its shape the word that nothing more is coming, so what the
 * receiver holds can go now, not at the task's end (a small site's analysis, in the task, then
 * overlaps the last upload). One message, not the last batch and then the word: the receiver
 * takes the last blobs knowing they are the last (a cluster node sends a new site's last burst
 * without asking PostgreSQL about it first; with the word a message later, it had asked already).
 */
export interface LastAnnouncements {
  readonly last: readonly Announcement[];
}
/** What `UnpackTask.announce` carries: batches of announcements, then one `LastAnnouncements`. */
export type AnnouncementMessage = readonly Announcement[] | LastAnnouncements;

export interface IngestedFile {
  /** Final site path (after top-folder stripping). */
  path: string;
  sha256: string;
  size: number;
  type: string;
  encodings?: { br?: number; gzip?: number };
}

/** A file sent by size and sha256 only, for content the site already has (digest deploys). */
export interface FileReference {
  path: string;
  sha256: string;
  size: number;
}

/** The fields of an inline JSON body other than `files`, validated. */
export interface JsonDeployFields {
  site?: string;
  base_revision?: string;
  patch?: boolean;
  /** `false`: store a draft, do not make it live. */
  publish?: boolean;
  /** Normalised by the same path rules as files. */
  deleted?: string[];
  /** The digest deploy these files are a part of (must be the one the request names). */
  manifest?: string;
  /** MCP's idempotency key, honoured by the tool; REST takes it only as a header. */
  idempotency_key?: string;
}

/** `unavailable`: the blobs could not be written because storage is full (see `STORAGE_FULL`). */
export type IngestErrorCode = 'bad_request' | 'too_large' | 'blocked_secret' | 'unavailable';

export interface IngestError {
  code: IngestErrorCode;
  message: string;
  agentMessage?: string;
  details?: Record<string, unknown>;
}

export type UnpackResult =
  | {
      ok: true;
      files: IngestedFile[];
      /** Files sent by size and sha256 only; the HTTP side resolves them or refuses the deploy. */
      references?: FileReference[];
      /** Paths left out by SPEC 4.1 rule 5; a skipped folder is listed once, as `folder/`. */
      skipped: string[];
      /** The single top-level folder removed by SPEC 4.1 rule 2, with its trailing `/`. */
      strippedPrefix?: string;
      json?: JsonDeployFields;
      /** Blobs to compress once the revision is live (see `CompressTask`). */
      pendingVariants: string[];
      /** The site's analysis, when `analyze` asked for it and the body was a whole small site. */
      analysis?: AnalyzeResult;
      /** The blobs, not flushed, for the commit to carry (see `UnpackOptions.journalMaxBytes`). */
      journal?: JournaledBlob[];
      /**
       * How many new blobs of `journal` have no file yet: readers find them in the blob journal
       * once the commit put them there (with a bucket, in the memory of the thread that deployed,
       * or in the bucket), and their files are written after the answer (`CompressTask.write`).
       * Only with `analysis` (the site analysed from memory; a later analysis task reads files).
       */
      filesDeferred?: number;
    }
  | { ok: false; error: IngestError };

/**
 * What the worker answers an unpack: the result and, for a body it received in memory, that
 * body's buffer, moved back so the HTTP thread can receive its next body into it.
 */
export interface UnpackReply {
  result: UnpackResult;
  body?: ArrayBuffer;
}

/** Makes the precompressed variants of stored blobs, after their revision went live. */
export interface CompressTask {
  dataDir: string;
  sha256s: string[];
  /** Blobs whose files are written first (no sync of their own: the task's flush covers them), see `UnpackResult.filesDeferred`. */
  write?: JournaledBlob[];
  /** As `UnpackTask.syncPort`. */
  syncPort?: MessagePort;
  /**
   * Up to this many bytes of the variants made come back with the sizes (`CompressReply.bytes`),
   * moved rather than copied where their buffer is their own, so that the HTTP thread uploads
   * them to a bucket without reading their files; unset or 0: none.
   */
  variantBytesMax?: number;
}

/** sha256 → sizes of the variants that exist (an empty object when none pays off). */
export type CompressResult = Record<string, { br?: number; gzip?: number }>;

/** What a compression task answers: the sizes, and the bytes of variants made (see `CompressTask.variantBytesMax`). */
export interface CompressReply {
  sizes: CompressResult;
  bytes?: Array<[sha256: string, encoding: 'br' | 'gzip', bytes: Uint8Array]>;
}

/** A page of a site with a badge, to be served with it (see badge/page.ts). */
export interface BadgeTask {
  /** The page's bytes as stored. */
  source: Uint8Array;
  siteName: string;
  reportUrl: string;
  compress: boolean;
}

/** Caps on `_redirects` and `_headers`, and the link check's (0 turns a cap off). */
export interface SiteRulesLimits {
  redirects: RulesFileLimits;
  headers: RulesFileLimits;
  /** Warnings listed in a deploy's answer (all are counted). */
  maxWarnings: number;
}

/** One file of an assembled site, as the analysis needs it. */
export interface SiteFile {
  path: string;
  sha256: string;
  size: number;
  type: string;
}

/**
 * Third task: the whole site as it will be published (after a patch is merged, or a digest
 * deploy assembled), its rules files compiled and its links checked. Only `_redirects`,
 * `_headers`, HTML and CSS are read, from the blob store.
 */
export interface AnalyzeTask {
  dataDir: string;
  files: SiteFile[];
  limits: SiteRulesLimits;
  /** Check the links of these paths only (one share of a large site); all pages and style sheets when absent. */
  checkPaths?: string[];
  /** Stored contents to pass the leak guard first, each as the paths it will be published at (see `RejudgedContent`). */
  rejudge?: { contents: RejudgedContent[]; limits: Pick<IngestLimits, 'maxFileBytes' | 'maxSiteBytes'> };
}

/**
 * A content already in the blob store that the site now publishes at a path the leak guard reads
 * differently from the one it was checked as: reused by sha256 at a new `.br` path, say, where it
 * is read as brotli. Refused like an uploaded file if it holds a key there.
 */
export interface RejudgedContent {
  sha256: string;
  paths: string[];
}

export type AnalyzeResult = { ok: true; extras: RevisionExtras } | { ok: false; error: IngestError };
