// The Piscina worker: one `unpack` task turns a request body (spooled, or received into memory)
// into blobs plus a manifest.
// It opens only the blob store, never LMDB (only HTTP threads write the index), and returns
// expected failures as data; a throw here is a real fault (disk full, a bug) and becomes a 500.
import { rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { buildBadgedPage, type BadgedPage } from '../badge/index.js';
import { isStorageFull, STORAGE_FULL } from '../errors.js';
import { openBlobStore, type BlobStore } from '../store/blobs-entry.js';
import { asBuffer, type BodySource } from './body-source.js';
import { createCollector } from './collector.js';
import { detectArchiveFormat } from './format.js';
import { readJsonDeploy } from './json-body.js';
import { rejudgeContents } from './leak-guard.js';
import { analyzeSite, linkCheckShares } from './site-analysis.js';
import { DeployRejected } from './rejection.js';
import { syncOverPort } from './sync-port.js';
import { readTar } from './tar-reader.js';
import { ANNOUNCE_AT_ONCE, ANNOUNCE_LAST_FEW } from './types.js';
import type {
  Announcement,
  AnalyzeResult,
  AnalyzeTask,
  BadgeTask,
  CompressReply,
  CompressResult,
  CompressTask,
  IngestedFile,
  IngestError,
  JournaledBlob,
  JsonDeployFields,
  LastAnnouncements,
  SiteFile,
  UnpackReply,
  UnpackResult,
  UnpackTask,
} from './types.js';
import { readZip } from './zip-reader.js';

// Deploy work yields the CPU to serving threads: a visitor's request must not wait behind an
// unpack. On Linux the nice value is per thread, so this lowers only this worker thread.
const WORKER_NICE = 10;
try {
  setPriority(0, WORKER_NICE);
} catch {
  // Not permitted here (some containers); deploys then run at normal priority.
}

const blobStores = new Map<string, BlobStore>();

function blobsFor(dataDir: string): BlobStore {
  let blobs = blobStores.get(dataDir);
  if (!blobs) {
    blobs = openBlobStore({ dir: dataDir });
    blobStores.set(dataDir, blobs);
  }
  return blobs;
}

/**
 * The body is fully read by now. Removing it before `finish` flushes the blobs means the
 * filesystem sync does not also write up to 90 MB of upload that is about to be deleted anyway
 * (the kernel drops an unlinked file's dirty pages). The HTTP side still removes it on failure.
 */
function dropSpool(task: UnpackTask): void {
  if (task.spoolPath !== undefined) rmSync(task.spoolPath, { force: true });
}

export async function unpack(task: UnpackTask): Promise<UnpackReply | ReturnType<typeof move>> {
  let result: UnpackResult;
  try {
    result = await unpackBody(task);
  } finally {
    task.announce?.close();
    task.syncPort?.close();
  }
  // Nothing here holds the body any more: its buffer goes back for the next body (see body-memory.ts).
  const body = task.body?.buffer instanceof ArrayBuffer ? task.body.buffer : undefined;
  // The journal's bytes share one buffer of their own (collector.ts): moved, not copied.
  const journal = result.ok ? result.journal?.[0]?.bytes.buffer : undefined;
  const moved = [body, journal].filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer);
  if (moved.length === 0) return { result };
  const reply: UnpackReply = body !== undefined ? { result, body } : { result };
  return move({ [transferableSymbol]: moved, [valueSymbol]: reply });
}

async function unpackBody(task: UnpackTask): Promise<UnpackResult> {
  const announcer = task.announce !== undefined ? createAnnouncer(task.announce, task.announceBytesMax ?? 0) : undefined;
  const collector = createCollector({
    blobs: blobsFor(task.dataDir),
    limits: task.limits,
    blockExecutables: task.blockExecutables,
    ...(task.publishedAs !== undefined ? { publishedAs: task.publishedAs } : {}),
    ...(task.compressBeforePublish !== undefined ? { compressBeforePublish: task.compressBeforePublish } : {}),
    ...(task.announce !== undefined
      ? {
          onStored: (sha256: string, bytes: Uint8Array, encodings: Announcement[2], yours: boolean) => announcer!.add(sha256, bytes, encodings, yours),
        }
      : {}),
    ...(task.syncPort !== undefined ? { runSync: syncOverPort(task.syncPort) } : {}),
    ...(task.journalMaxBytes !== undefined ? { journalMaxBytes: task.journalMaxBytes } : {}),
    ...(task.deferMaxBytes !== undefined ? { deferMaxBytes: task.deferMaxBytes } : {}),
    ...(task.syncBlobs === false ? { syncBlobs: false } : {}),
    ...(task.announce !== undefined ? { onAllStored: () => announcer!.end() } : {}),
  });
  const body: BodySource = task.body !== undefined ? { bytes: asBuffer(task.body) } : { path: task.spoolPath, ...(task.range ? { range: task.range } : {}) };
  try {
    let json: JsonDeployFields | undefined;
    if (task.bodyKind === 'json') {
      json = await readJsonDeploy(body, collector);
    } else {
      const format = await detectArchiveFormat(body);
      if (format === 'zip') await readZip(body, collector);
      else await readTar(body, format === 'tar.gz', collector, task.limits.maxSiteBytes);
    }
    dropSpool(task);
    const patch = json?.patch === true || task.partial === true;
    const { flushed, filesDeferred, ...site } = await collector.finish({ patch, flushLater: task.analyze !== undefined });
    const result = { ok: true as const, ...site, ...(json !== undefined ? { json } : {}) };
    // The analysis reads what was just written while the disk makes it durable (or, for blobs
    // whose files wait for the answer, the journal's bytes).
    let analysis: AnalyzeResult | undefined;
    try {
      if (task.analyze !== undefined && !patch && site.references === undefined) analysis = analyzeWhole(task, site.files, task.analyze, site.journal);
    } finally {
      await flushed;
    }
    if (analysis === undefined) {
      // An analysis task reads files: they are written now, still made durable by the commit.
      if (filesDeferred) writeJournaled(blobsFor(task.dataDir), site.journal!);
      return result;
    }
    return { ...result, analysis, ...(filesDeferred ? { filesDeferred } : {}) };
  } catch (err) {
    // Piscina must not report the task done while writes still run: the caller may delete the
    // spool file or shut down the pool right after.
    await collector.settle();
    if (err instanceof DeployRejected) return { ok: false, error: err.error };
    // A thrown error reaches the HTTP thread without its `code`, so a full disk travels as data.
    if (isStorageFull(err)) return { ok: false, error: storageFull() };
    throw err;
  }
}

function storageFull(): IngestError {
  const { code, message, agentMessage, details } = STORAGE_FULL;
  return { code, message, agentMessage, details: { ...details } };
}

/** Second task: precompressed variants for blobs of a revision that is already live. */
/** Places the badge in a page and compresses the result, off the serving thread. */
export function badge(task: BadgeTask): BadgedPage {
  const source = Buffer.from(task.source.buffer, task.source.byteOffset, task.source.byteLength);
  return buildBadgedPage(source, { siteName: task.siteName, reportUrl: task.reportUrl, compress: task.compress });
}

export async function compress(task: CompressTask): Promise<CompressReply | ReturnType<typeof move>> {
  const blobs = blobsFor(task.dataDir);
  const sizes: CompressResult = {};
  const bytes: NonNullable<CompressReply['bytes']> = [];
  let bytesLeft = task.variantBytesMax ?? 0;
  // A deploy answered before its files were written: they come first, the variants read them.
  if (task.write !== undefined) writeJournaled(blobs, task.write);
  for (const sha256 of task.sha256s) {
    const made = (encoding: 'br' | 'gzip', variant: Uint8Array): void => {
      if (variant.byteLength > bytesLeft) return;
      bytesLeft -= variant.byteLength;
      // Nothing here reads a variant again once its file is written: a buffer of its own moves.
      const whole = variant.buffer instanceof ArrayBuffer && variant.byteOffset === 0 && variant.byteLength === variant.buffer.byteLength;
      bytes.push([sha256, encoding, whole ? variant : new Uint8Array(variant)]);
    };
    sizes[sha256] = await blobs.compressBlob(sha256, { quality: 'fast', durable: false, ...(bytesLeft > 0 ? { made } : {}) });
  }
  if (task.sha256s.length > 0 || (task.write?.length ?? 0) > 0) await blobs.flush(task.syncPort && syncOverPort(task.syncPort));
  task.syncPort?.close();
  if (bytes.length === 0) return { sizes };
  return move({ [transferableSymbol]: bytes.map(([, , variant]) => variant.buffer), [valueSymbol]: { sizes, bytes } satisfies CompressReply });
}

/** Writes blobs' files (temp file and rename; existing ones are reused), with no sync. */
function writeJournaled(blobs: BlobStore, journal: readonly JournaledBlob[]): void {
  for (const blob of journal) blobs.writeSync(blob.bytes, blob.sha256);
}

/**
 * The analysis of a whole site just unpacked, when one thread checks its links alone (else
 * undefined), reading the journal's bytes where it has them (every blob of the site, when set).
 */
function analyzeWhole(
  task: UnpackTask,
  files: readonly IngestedFile[],
  options: NonNullable<UnpackTask['analyze']>,
  journal: readonly JournaledBlob[] | undefined,
): AnalyzeResult | undefined {
  const site: SiteFile[] = files.map((file) => ({ path: file.path, sha256: file.sha256, size: file.size, type: file.type }));
  if (linkCheckShares(site, options.threads)[0] !== undefined) return undefined;
  site.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const blobs = blobsFor(task.dataDir);
  const carried = new Map(journal?.map((blob) => [blob.sha256, blob.bytes]));
  return analyzeSite(
    site,
    (file) => {
      const bytes = carried.get(file.sha256);
      return bytes === undefined ? blobs.readSync(file.sha256) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    options.limits,
  );
}

/**
 * Passes reused contents through the leak guard as their new paths, then compiles the site's
 * `_redirects` and `_headers` and checks its links (see site-analysis.ts).
 */
export function analyze(task: AnalyzeTask): AnalyzeResult {
  const blobs = blobsFor(task.dataDir);
  if (task.rejudge !== undefined) {
    try {
      rejudgeContents(task.rejudge.contents, (sha256) => blobs.readSync(sha256), task.rejudge.limits);
    } catch (err) {
      if (err instanceof DeployRejected) return { ok: false, error: err.error };
      throw err;
    }
  }
  return analyzeSite(task.files, (file) => blobs.readSync(file.sha256), task.limits, task.checkPaths);
}

/** Bytes of announced blobs a batch holds at most before it is posted. */
const ANNOUNCE_BYTES_AT_ONCE = 4 * 1024 * 1024;

interface Announcer {
  add(sha256: string, bytes: Uint8Array, encodings: Announcement[2], yours: boolean): void;
  /** Posts what is left as the `LastAnnouncements`. */
  end(): void;
}

/**
 * Announcements posted to the HTTP thread. Each message wakes that thread, which then takes a
 * core from this one (the worker runs at a lower priority): they go in batches of
 * `ANNOUNCE_AT_ONCE`, the number its publisher asks PostgreSQL about at once anyway, or of
 * `ANNOUNCE_BYTES_AT_ONCE` (bytes this thread holds meanwhile); one that goes up alone (over
 * `bytesMax`) goes at once. A full batch waits for the next `ANNOUNCE_LAST_FEW` blobs: when the
 * archive ends among them, they go with it, so that the end of a deploy brings one question and
 * one pack, not a full one and then a few more (a 100-file site: 32, 32, 36, not 32, 32, 32, 4).
 */
function createAnnouncer(port: MessagePort, bytesMax: number): Announcer {
  let batch: Announcement[] = [];
  let moved: ArrayBuffer[] = [];
  let batchBytes = 0;
  let full: { batch: Announcement[]; moved: ArrayBuffer[] } | undefined;
  const take = (): { batch: Announcement[]; moved: ArrayBuffer[] } => {
    const taken = { batch, moved };
    batch = [];
    moved = [];
    batchBytes = 0;
    return taken;
  };
  const post = (taken: { batch: Announcement[]; moved: ArrayBuffer[] } | undefined): void => {
    if (taken !== undefined && taken.batch.length > 0) port.postMessage(taken.batch satisfies readonly Announcement[], taken.moved);
  };
  const postFull = (): void => {
    post(full);
    full = undefined;
  };
  return {
    add(sha256, bytes, encodings, yours) {
      const [announcement, buffer] = announce(bytesMax, sha256, bytes, encodings, yours);
      batch.push(announcement);
      if (buffer !== undefined) {
        moved.push(buffer);
        batchBytes += buffer.byteLength;
      }
      if (batch.length > ANNOUNCE_LAST_FEW) postFull();
      if (buffer === undefined || batchBytes >= ANNOUNCE_BYTES_AT_ONCE) {
        postFull();
        post(take());
      } else if (batch.length >= ANNOUNCE_AT_ONCE) {
        postFull();
        full = take();
      }
    },
    end() {
      let last = take();
      if (full !== undefined && last.batch.length <= ANNOUNCE_LAST_FEW) last = { batch: [...full.batch, ...last.batch], moved: [...full.moved, ...last.moved] };
      else postFull();
      full = undefined;
      port.postMessage({ last: last.batch } satisfies LastAnnouncements, last.moved);
    },
  };
}

/**
 * See `UnpackTask.announceBytesMax`. Bytes in a buffer the collector gives away (`yours`: most
 * files of an archive, joined from its chunks) move to the HTTP thread as they are; others (a view
 * of a larger buffer, or bytes the collector keeps) are copied into a buffer that moves.
 */
function announce(bytesMax: number, sha256: string, bytes: Uint8Array, encodings: Announcement[2], yours: boolean): [Announcement, ArrayBuffer | undefined] {
  if (bytes.byteLength > bytesMax) return [[sha256, undefined, encodings], undefined];
  const own = yours && bytes.buffer instanceof ArrayBuffer ? bytes : new Uint8Array(bytes);
  return [[sha256, own, encodings], own.buffer as ArrayBuffer];
}
