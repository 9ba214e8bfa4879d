import { existsSync, statSync, utimesSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createHash, randomUUID } from 'node:crypto';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { publishTemp, sizeIfExists, writeTemp } from './atomic-file.js';
import { createBlobStore, VARIANT_ON_DEMAND_MAX_BYTES, variantFromBlob } from './blob-store.js';
import { cacheGuarded } from './bucket-cache-guard.js';
import { createS3Bucket, limiter, NOT_IN_BUCKET, type S3Bucket } from './bucket.js';
import { BUCKET_UNAVAILABLE_CODE } from '../errors.js';
import { ENCODINGS, type Encoding } from '../rules/index.js';
import type { BucketLedger, LedgerEntry } from './bucket-ledger.js';
import { PACK_PREFIX, type PackedObject } from './bucket-packs.js';
import type {
  BlobFile,
  BlobPublisher,
  BlobStore,
  BucketOptions,
  CacheTrim,
  FilePack,
  JournaledBlob,
  PackedBlobs,
  PackedRange,
  PublisherOptions,
} from './types.js';

/**
 * Blobs in an S3-compatible bucket, with `<dataDir>/blobs` as this node's cache of them, laid out
 * as without a bucket. Writers (the ingest workers) still write the local folder; `publish` puts
 * what a deploy wrote into the bucket before its commit. Readers serve local files; `fetch` brings
 * in the others. `trimCache` keeps the folder within its byte budget, least recently used out
 * first, where a use is a read from disk (`isLocal` renews a file's mtime; bodies a serving thread
 * holds in memory do not touch the disk).
 */

/**
 * Objects one `publish` checks or uploads at once: enough to keep a bucket's round trips
 * overlapped (each request waits mostly on the network), few enough for the SDK's 50 sockets.
 */
const PUBLISH_CONCURRENCY = 32;
/**
 * With a ledger, an object it does not know and at most this large is put without asking the
 * bucket first: one request either way. A larger one is asked about (HEAD), so that bytes the
 * bucket already holds (uploaded before the ledger existed) are not sent again.
 */
const PUT_UNASKED_BYTES = 1024 * 1024;
/**
 * A deploy's variants of blobs up to this size go to the bucket after its answer, not before: a
 * new site's small text files each have a gzip variant made before the answer, about 40 of the
 * 140 objects of a 100-file site, and every request costs CPU on the node's cores. A node asked for
 * such a variant before it is in the bucket makes it from the blob, as the deploy did (`fetch`).
 * Larger blobs' variants (made after the answer, and perhaps streamed by their recorded size)
 * still go up first.
 */
export const VARIANTS_AFTER_ANSWER_MAX_BYTES = VARIANT_ON_DEMAND_MAX_BYTES;
/**
 * Bytes of this thread's deploys whose blob files are written after the answer (`holdUnwritten`)
 * that it keeps to read them from meanwhile; past it, such a blob is fetched from the bucket.
 */
const UNWRITTEN_MAX_BYTES = 64 * 1024 * 1024;
/** Objects `trimCache` asks the bucket about at once before evicting their local copies. */
const TRIM_CONCURRENCY = 8;
const DEFAULT_MIN_IDLE_MS = 60_000;
const BLOB_CORRUPT = 'BLOB_CORRUPT';
/** Bound on the memory of which objects `publish` knows to be in the bucket and young. */
const MAX_KNOWN_FRESH = 100_000;
/**
 * A pack goes up once it holds this much: a few requests for a deploy of thousands of small
 * files, and a bounded body in memory (a pack holds at most this plus one object, and at most
 * `PACKS_AT_ONCE` packs of one deploy are read into memory and sent at once).
 */
const PACK_TARGET_BYTES = 8 * 1024 * 1024;
/** Packs of one deploy in flight at once: the bucket takes each in one request, so two keep it busy. */
const PACKS_AT_ONCE = 2;
/**
 * Bytes of one deploy's blobs held in memory for its packs (announced with their bytes, waiting
 * for the ledger's answer or in the pack being filled); past it, a pack reads the blob's file.
 */
const HELD_BYTES = 2 * PACK_TARGET_BYTES;
/**
 * While fewer than `PACKS_AT_ONCE` of the deploy's packs are in flight, one goes up as soon as a
 * burst placed leaves it holding this many objects, so that the uploads overlap the unpack and the
 * commit waits only for the last burst, not for every small file of the site in one request at the
 * end. (With one in flight, the next 32 once waited for the end: a small site whose files wait for
 * the answer unpacks before the packs are up, and sent them in two at the end.) A burst is not
 * split: the unpack's last announcements (its last full batch and the few after it) are one pack.
 */
const PACK_EARLY_OBJECTS = 32;
/**
 * With packing on, the blobs the unpack announces are asked about (PostgreSQL: uploaded or packed
 * already?) once this many wait, not as each arrives: asked at once, a 1,000-file deploy made
 * about 600 questions of one or two blobs, each a round trip that cost PostgreSQL and this
 * thread CPU beside the unpack. The first burst (a deploy of one file: its only blob), and a
 * blob that goes up alone (larger than a pack takes), are asked about at once; the rest at `finish`.
 */
const ASK_AT_ONCE = PACK_EARLY_OBJECTS;
/**
 * With `PublisherOptions.rowsToCommit`, the rows of a deploy's packs are left to its commit while
 * they number at most this many (a small site's, all of them; a large site's first few packs):
 * a commit that writes them costs one statement fewer than writing them after each `PUT`, and the
 * last pack's rows no longer wait for a round trip of their own. (With every row of a 1,000-file
 * site, the commit was found longer: see bench/RESULTS.md.)
 */
const ROWS_IN_COMMIT = 128;
/**
 * A deploy's last burst of new content goes up unasked: when the database's answers about its
 * earlier bursts found none of them in the bucket (a new site's files) and this one holds at most
 * this many blobs and bytes, it is packed and sent at once, with no question whose round trip
 * was on the path to the commit (the places are known as soon as the pack is cut, so the commit
 * is prepared meanwhile). A wrong guess costs these bytes sent again, no more: the commit's rows
 * then name the fresh copy, and a record naming the older place reads there, or falls back to
 * the row, as any stale place does.
 */
const UNASKED_MAX_OBJECTS = 64;
const UNASKED_MAX_BYTES = 2 * 1024 * 1024;

export interface BucketBlobStoreOptions {
  /** `<dataDir>/blobs`, the local cache. */
  dir: string;
  now: () => number;
  bucket: BucketOptions;
  /** In a cluster, what the database knows of the bucket: `publish` asks it before the bucket. */
  ledger?: BucketLedger;
}

export function createBucketBlobStore(options: BucketBlobStoreOptions): BlobStore {
  const { now } = options;
  const local = createBlobStore({ dir: options.dir, now });
  const tmpDir = join(resolve(options.dir), 'tmp');
  const { ledger } = options;
  // Packed objects are read wherever a ledger is, written only where packing is on.
  const packs = ledger?.packs;
  const packMaxBytes = packs === undefined ? 0 : (options.bucket.packMaxBytes ?? 0);
  const bucket: S3Bucket = createS3Bucket(options.bucket, ledger && { onDeleted: (key) => ledger.forget([key]) });
  const { cacheBytes, graceMs } = options.bucket;
  const minIdleMs = options.bucket.minIdleMs ?? DEFAULT_MIN_IDLE_MS;
  const downloads = new Map<string, Promise<void>>();
  const downloaded = { count: 0, bytes: 0 };
  // Key → until when it is known to be in the bucket and young enough for garbage collection to
  // spare it, so a redeploy does not ask the bucket again about each of its unchanged files.
  const knownFresh = new Map<string, number>();
  // Blob key → where it is packed, for those of `knownFresh` that are: a redeploy's records carry
  // the places of its unchanged files without asking the database.
  const knownPacked = new Map<string, FilePack>();
  // Read once, at the first deploy: the node's start ran the guard before any thread opened this.
  let guarded: boolean | undefined;
  // Blobs of this thread's deploys answered before their files were written (the bucket holds
  // them): the local store reads them here as it reads a journal row, until they are written.
  const unwritten = new Map<string, Buffer>();
  let unwrittenBytes = 0;
  local.attachJournal?.((sha256) => unwritten.get(sha256));

  function isLocal(sha256: string, encoding?: Encoding, asFile = false): boolean {
    const path = local.pathOf(sha256, encoding);
    const at = now() / 1000;
    try {
      utimesSync(path, at, at);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return !asFile && encoding === undefined && unwritten.has(sha256);
      // Present, but not ours to touch (another user wrote it): still readable.
      if (code === 'EPERM' || code === 'EACCES') return existsSync(path);
      throw err;
    }
  }

  function fetch(sha256: string, encoding?: Encoding, packed?: PackedRange): Promise<void> {
    const path = local.pathOf(sha256, encoding);
    if (existsSync(path)) return Promise.resolve();
    // Written from the bytes this thread holds, as the embedded store writes a journaled blob's.
    if (encoding === undefined && unwritten.has(sha256)) return local.fetch(sha256);
    const key = bucket.keyOf(sha256, encoding);
    let pending = downloads.get(key);
    if (pending === undefined) {
      pending = download(sha256, encoding, key, path, packed).finally(() => downloads.delete(key));
      downloads.set(key, pending);
    }
    return pending;
  }

  /**
   * Into a temp file, synced (a cached file that a crash left short would be served as it is),
   * checked, then renamed into place: nobody ever reads bytes that do not hash to their name.
   */
  async function download(sha256: string, encoding: Encoding | undefined, key: string, path: string, packed: PackedRange | undefined): Promise<void> {
    if (encoding === undefined && packed !== undefined) {
      try {
        return await receive(sha256, encoding, key, path, await bucket.downloadRange(packed.key, packed.offset, packed.size));
      } catch (err) {
        // The records' place is where the blob was packed when they were written; garbage
        // collection keeps it while they reference the blob, but should it be gone (or hold other
        // bytes), the ledger has the last word.
        const code = (err as { code?: string }).code;
        if (code !== NOT_IN_BUCKET && code !== BLOB_CORRUPT) throw err;
      }
    }
    let body: AsyncIterable<Uint8Array>;
    try {
      const row = await packedAt(key);
      body = row === undefined ? await bucket.download(key) : await bucket.downloadRange(row.pack, row.offset, row.size);
    } catch (err) {
      if (encoding === undefined || (err as { code?: string }).code !== NOT_IN_BUCKET) throw err;
      return makeVariant(sha256, encoding, path, err, packed);
    }
    return receive(sha256, encoding, key, path, body);
  }

  async function receive(sha256: string, encoding: Encoding | undefined, key: string, path: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    const temp = await writeTemp(tmpDir, body, true);
    try {
      // A variant is checked by what it decodes to: the blob it is a variant of.
      const decoded = encoding === undefined ? temp.sha256 : await decodedHash(temp.path, encoding);
      if (decoded !== sha256) {
        throw Object.assign(new Error(`the bucket's ${key} does not hash to ${sha256}`), { code: BLOB_CORRUPT });
      }
      await publishTemp(temp.path, path, false);
      downloaded.count++;
      downloaded.bytes += temp.size;
    } catch (err) {
      await unlink(temp.path).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Where the key is packed, if it is. When the database cannot answer, the bucket is asked for
   * the object itself: one uploaded alone is found; a packed blob is read from the place its file
   * records carry (`download`), and a packed variant is made from its blob (`makeVariant`).
   */
  async function packedAt(key: string): Promise<PackedObject | undefined> {
    if (packs === undefined) return undefined;
    return (await packs.find([key]).catch(() => undefined))?.get(key);
  }

  /**
   * A variant the bucket does not hold (yet: the deploy that recorded it uploads its small blobs'
   * variants after its answer), made here from the blob by the rule serving uses for variants not
   * recorded yet (`variantFromBlob`), so the first visitor of a new deploy gets it compressed on
   * every node: this is the object the bucket is about to receive.
   */
  async function makeVariant(sha256: string, encoding: Encoding, path: string, missing: unknown, packed: PackedRange | undefined): Promise<void> {
    await fetch(sha256, undefined, packed);
    const made = await variantFromBlob(await readFile(local.pathOf(sha256)), encoding);
    if (made === undefined) throw missing;
    // Its bytes reach the disk before the rename, as a download's do: a crash must never leave
    // a short variant under the name readers trust (a lost rename only means making it again).
    const temp = await writeTemp(tmpDir, made, true);
    await publishTemp(temp.path, path, false);
  }

  /**
   * Whether a node that cannot learn where this blob's variant is packed (PostgreSQL away: a
   * variant's place travels with no record) can make it from the blob instead (`makeVariant`):
   * only such variants are packed.
   */
  function variantMadeWithoutRow(sha256: string, blobSize: number | undefined): boolean {
    const size = blobSize ?? statSync(local.pathOf(sha256), { throwIfNoEntry: false })?.size;
    return size !== undefined && size <= VARIANTS_AFTER_ANSWER_MAX_BYTES;
  }

  function remember(key: string, youngSinceMs: number, packedAs?: FilePack): void {
    if (knownFresh.size >= MAX_KNOWN_FRESH) {
      knownFresh.clear();
      knownPacked.clear();
    }
    knownFresh.set(key, youngSinceMs + graceMs / 2);
    if (packedAs === undefined) knownPacked.delete(key);
    else knownPacked.set(key, packedAs);
  }

  /**
   * One object of a deploy: uploaded when missing or when the bucket's copy has another size than
   * this node's (a blob written wrong elsewhere; a variant that another build of the compressor
   * made, so the record about to be committed describes the bytes the bucket holds), renewed when
   * older than half the grace period. `noted` is what the ledger says of it; with `ledgerKnows`,
   * no row means no node uploaded it lately. Resolves what was uploaded or renewed, for the ledger.
   * Bucket garbage collection deletes only objects older than the whole grace period, so whatever
   * this passes stays until its commit (right after) references it. A ledger row is taken as the
   * bucket's word only while younger than half the grace period: its time was read before the
   * upload, so the object is younger still.
   */
  async function ensureInBucket(
    sha256: string,
    encoding: Encoding | undefined,
    noted: LedgerEntry | undefined,
    ledgerKnows: boolean,
    /** The object's bytes, when the caller holds them: its file may not be written yet. */
    bytes?: Buffer,
  ): Promise<(LedgerEntry & { key: string }) | undefined> {
    const key = bucket.keyOf(sha256, encoding);
    const at = now();
    if ((knownFresh.get(key) ?? 0) > at) return undefined;
    const path = local.pathOf(sha256, encoding);
    const size = bytes?.byteLength ?? (await sizeIfExists(path));
    if (noted !== undefined && noted.touchedMs > at - graceMs / 2 && (size === undefined || noted.size === size)) {
      remember(key, noted.touchedMs);
      return undefined;
    }
    if (ledgerKnows && noted === undefined && size !== undefined && size <= PUT_UNASKED_BYTES) {
      await bucket.upload(key, path, size, bytes);
      remember(key, at);
      return { key, size, touchedMs: at };
    }
    const found = await bucket.head(key);
    if (found === undefined && size === undefined) {
      throw Object.assign(new Error(`blob ${key} is neither on this node nor in the bucket`), { code: NOT_IN_BUCKET });
    }
    if (found === undefined || (size !== undefined && found.size !== size)) {
      await bucket.upload(key, path, size!, bytes);
      remember(key, at);
      return { key, size: size!, touchedMs: at };
    }
    if (found.touchedMs < at - graceMs / 2) {
      await bucket.touch(key, at);
      remember(key, at);
      return { key, size: found.size, touchedMs: at };
    }
    remember(key, found.touchedMs);
    return { key, size: found.size, touchedMs: found.touchedMs };
  }

  /**
   * Blobs are taken as they come (`add`): a burst of them (the worker's announcements that
   * arrived together, `ASK_AT_ONCE` of them with packing on, or all of `finish`'s) shares one
   * question to the ledger, asked while no other is in flight, and their objects then go up
   * `PUBLISH_CONCURRENCY` at a time. The variants of small blobs wait for `afterAnswer`.
   *
   * With packing on (a cluster, `packMaxBytes` > 0), a new object up to that size is not sent
   * alone: it joins the deploy's current pack, which goes up once it holds `PACK_TARGET_BYTES`
   * (or, after a burst, `PACK_EARLY_OBJECTS` while fewer than `PACKS_AT_ONCE` are in flight) and at the end of each step (`finish`,
   * `afterAnswer`), its rows written after its PUT, so before the commit. An object already packed is not sent again: its row is renewed when older
   * than half the grace period (one query per burst), and one that garbage collection deleted
   * meanwhile is packed anew.
   */
  function publisher(options?: PublisherOptions): BlobPublisher {
    const taken = new Set<string>();
    // Pack rows left to the commit (see `ROWS_IN_COMMIT`), and what to remember once it wrote them.
    let rowsLeft = options?.rowsToCommit === true && packs !== undefined ? ROWS_IN_COMMIT : 0;
    const rowsForCommit: Array<PackedObject & { key: string }> = [];
    let rowsOldestMs = Infinity;
    // Blob sha256 → its size, as `add` learnt it; and the variants queued, `<sha256>.<encoding>`.
    const sizes = new Map<string, number | undefined>();
    const variantsTaken = new Set<string>();
    // Blob (and variant) to place, with its file's size when `add` has read it already.
    let waiting: Waiting[] = [];
    let later: Waiting[] = [];
    let asking: Promise<void> | undefined;
    const running: Array<Promise<void>> = [];
    // Of those, the ones that may still place blobs (`drain`'s): `places` waits for them.
    const placing: Array<Promise<void>> = [];
    const done: Array<LedgerEntry & { key: string }> = [];
    let failure: { err: unknown } | undefined;
    let ledgerAnswered = false;
    // Past `finish`, every blob waiting is asked about at once; before it, see `ASK_AT_ONCE`.
    let flushing = packMaxBytes === 0;
    let waitingAlone = false;
    let questions = 0;
    // Objects found in the bucket already (by an answer, or known to this node): with none found
    // once the ledger has answered, the last burst goes up unasked (`UNASKED_MAX_OBJECTS`).
    let foundInBucket = 0;
    const limited = limiter(PUBLISH_CONCURRENCY);
    const packLimited = limiter(PACKS_AT_ONCE);
    let pack = emptyPack();
    let packsInFlight = 0;
    // Blob sha256 → where it is packed, for the commit's file records.
    const packedBlobs = new Map<string, FilePack>();
    // Object key → its bytes, as the unpack (a blob) or the compression (a variant) handed them
    // over, until it is packed or known not to be.
    const held = new Map<string, Buffer>();
    let heldBytes = 0;
    const hold = (key: string, bytes: Uint8Array | undefined): void => {
      if (bytes === undefined || bytes.byteLength > packMaxBytes || heldBytes + bytes.byteLength > HELD_BYTES || held.has(key)) return;
      held.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      heldBytes += bytes.byteLength;
    };
    const release = (key: string): void => {
      const bytes = held.get(key);
      if (bytes === undefined) return;
      held.delete(key);
      heldBytes -= bytes.byteLength;
    };
    /** Where a blob (not a variant) went or is found: packed, or (undefined) as its own object. */
    const placed = (sha256: string, encoding: Encoding | undefined, at: FilePack | undefined): void => {
      if (encoding !== undefined) return;
      if (at === undefined) packedBlobs.delete(sha256);
      else packedBlobs.set(sha256, at);
    };

    const track = (task: Promise<void>): Promise<void> => {
      const tracked = task.catch((err: unknown) => void (failure ??= { err }));
      running.push(tracked);
      return tracked;
    };

    function single(sha256: string, encoding: Encoding | undefined, noted: LedgerEntry | undefined, ledgerKnows: boolean): void {
      // Taken now: the burst lets go of what it held once it has placed every object.
      const bytes = held.get(bucket.keyOf(sha256, encoding));
      track(
        limited(async () => {
          // Past a failure nothing new starts: `finish` rejects with it anyway.
          if (failure !== undefined) return;
          const entry = await ensureInBucket(sha256, encoding, noted, ledgerKnows, bytes);
          if (entry !== undefined) done.push(entry);
        }),
      );
    }

    function append(sha256: string, encoding: Encoding | undefined, key: string, path: string, size: number): void {
      // The bytes stay counted as held until the pack is read for sending.
      const bytes = held.get(key);
      if (bytes !== undefined) held.delete(key);
      pack.objects.push({ sha256, encoding, key, path, offset: pack.bytes, size, bytes });
      pack.bytes += size;
      if (pack.bytes >= PACK_TARGET_BYTES) sendPack();
    }

    /** After a burst is placed, not within it: the last burst of a deploy goes up as one pack. */
    function cutEarly(): void {
      if (packsInFlight < PACKS_AT_ONCE && pack.objects.length >= PACK_EARLY_OBJECTS) sendPack();
    }

    /**
     * The current pack to the bucket, then its rows to the database. Its objects come from the
     * bytes the unpack announced, or else from their files, read only now (so only packs in
     * flight, and `HELD_BYTES`, are held in memory).
     */
    function sendPack(): void {
      const { objects } = pack;
      pack = emptyPack();
      for (const object of objects) heldBytes -= object.bytes?.byteLength ?? 0;
      if (objects.length === 0) return;
      if (objects.length === 1) {
        // A pack of one is the object itself, with no row to write before the commit.
        const [{ sha256, encoding, key, path, size, bytes }] = objects as [(typeof objects)[number]];
        placed(sha256, encoding, undefined);
        track(
          limited(async () => {
            if (failure !== undefined) return;
            const at = now();
            await bucket.upload(key, path, size, bytes);
            remember(key, at);
            done.push({ key, size, touchedMs: at });
          }),
        );
        return;
      }
      // Its places are known from here (`places`), before it is in the bucket.
      const key = `${PACK_PREFIX}${randomUUID()}`;
      for (const object of objects) placed(object.sha256, object.encoding, { key, offset: object.offset });
      packsInFlight++;
      const rowsToCommit = objects.length <= rowsLeft;
      if (rowsToCommit) rowsLeft -= objects.length;
      track(
        packLimited(async () => {
          if (failure !== undefined) return;
          const bodies = await Promise.all(objects.map((object) => object.bytes ?? readFile(object.path)));
          for (const [i, body] of bodies.entries()) {
            if (body.byteLength !== objects[i]!.size) throw new Error(`${objects[i]!.path} changed size while it was packed`);
          }
          const at = now();
          await bucket.put(key, bodies);
          // Garbage collection deletes a pack no row points to once it is older than the grace
          // period; rows written later than half of it could point to a pack already gone.
          if (now() - at > graceMs / 2)
            throw Object.assign(new Error(`pack ${key} took over half the grace period to upload`), { code: BUCKET_UNAVAILABLE_CODE });
          const rows = objects.map(({ key: object, offset, size }) => ({ key: object, pack: key, offset, size, touchedMs: at }));
          if (rowsToCommit) {
            // Remembered once the commit has written them: until then no row points to the pack.
            rowsForCommit.push(...rows);
            rowsOldestMs = Math.min(rowsOldestMs, at);
            return;
          }
          await packs!.record(rows);
          for (const object of objects) remember(object.key, at, { key, offset: object.offset });
        }).finally(() => packsInFlight--),
      );
    }

    /** One burst: asks the ledgers, then packs, renews or uploads each object; bytes held for a blob not packed are let go. */
    async function place(objects: Waiting[]): Promise<void> {
      try {
        await placeHeld(objects);
        cutEarly();
      } finally {
        for (const [sha256, encoding] of objects) release(bucket.keyOf(sha256, encoding));
      }
    }

    async function placeHeld(objects: Waiting[]): Promise<void> {
      const at = now();
      const keyed = objects
        .map(([sha256, encoding, size]) => ({ sha256, encoding, size, key: bucket.keyOf(sha256, encoding) }))
        .filter(({ sha256, encoding, key }) => {
          if ((knownFresh.get(key) ?? 0) <= at) return true;
          placed(sha256, encoding, knownPacked.get(key));
          foundInBucket++;
          return false;
        });
      if (unasked(keyed)) return placeUnasked(keyed);
      const asked = keyed.map(({ key }) => key);
      // The ledger is a shortcut: when the database cannot say, the bucket is asked as without one.
      // The pack rows are the only record of packed objects: when the database cannot say, nothing
      // is packed. Both are asked in one statement.
      let noted: Map<string, LedgerEntry> | undefined = new Map<string, LedgerEntry>();
      let packed: Map<string, PackedObject> | undefined;
      if (ledger !== undefined && asked.length > 0) {
        if (packMaxBytes === 0) noted = await ledger.find(asked).catch(() => undefined);
        else {
          const found = await ledger.findPlaced(asked).catch(() => undefined);
          noted = found?.uploaded;
          packed = found?.packed;
        }
      }
      if (ledger !== undefined && noted !== undefined) ledgerAnswered = true;
      foundInBucket += (noted?.size ?? 0) + (packed?.size ?? 0);
      const ledgerKnows = noted !== undefined && ledger !== undefined;
      const renewing: typeof keyed = [];
      const packOrSend = ({ sha256, encoding, key }: (typeof keyed)[number], size: number | undefined, note: LedgerEntry | undefined): void => {
        if (size !== undefined && size <= packMaxBytes && (encoding === undefined || variantMadeWithoutRow(sha256, sizes.get(sha256)))) {
          append(sha256, encoding, key, local.pathOf(sha256, encoding), size);
        } else single(sha256, encoding, note, ledgerKnows);
      };
      for (const object of keyed) {
        const note = noted?.get(object.key);
        if (packed === undefined) {
          single(object.sha256, object.encoding, note, ledgerKnows);
          continue;
        }
        const size = object.size ?? statSync(local.pathOf(object.sha256, object.encoding), { throwIfNoEntry: false })?.size;
        const row = packed.get(object.key);
        const sameSize = (entry: { size: number } | undefined): boolean => entry !== undefined && (size === undefined || entry.size === size);
        if (sameSize(row)) {
          if (row!.touchedMs > at - graceMs / 2) {
            const where = { key: row!.pack, offset: row!.offset };
            remember(object.key, row!.touchedMs, where);
            placed(object.sha256, object.encoding, where);
          } else renewing.push(object);
        } else if (sameSize(note) && note!.touchedMs > at - graceMs / 2) {
          // Uploaded alone lately (before packing, or too large then): nothing to send.
          remember(object.key, note!.touchedMs);
          placed(object.sha256, object.encoding, undefined);
        } else packOrSend(object, size, note);
      }
      if (renewing.length === 0) return;
      const renewed = await packs!
        .renew(
          renewing.map(({ key }) => key),
          at,
        )
        .catch(() => new Set<string>());
      for (const object of renewing) {
        if (renewed.has(object.key)) {
          const row = packed!.get(object.key)!;
          const where = { key: row.pack, offset: row.offset };
          remember(object.key, at, where);
          placed(object.sha256, object.encoding, where);
        } else packOrSend(object, object.size ?? statSync(local.pathOf(object.sha256, object.encoding), { throwIfNoEntry: false })?.size, undefined);
      }
    }

    /** Whether this burst goes up without a question (see `UNASKED_MAX_OBJECTS`). */
    function unasked(keyed: ReadonlyArray<{ encoding: Encoding | undefined; size: number | undefined }>): boolean {
      if (!flushing || packs === undefined || ledger === undefined || !ledgerAnswered || foundInBucket > 0) return false;
      if (keyed.length < 2 || keyed.length > UNASKED_MAX_OBJECTS) return false;
      let bytes = 0;
      for (const { encoding, size } of keyed) {
        if (encoding !== undefined || size === undefined || size > packMaxBytes) return false;
        bytes += size;
      }
      // One pack: `append` cuts none before `placeUnasked` sends it.
      return bytes <= UNASKED_MAX_BYTES && pack.bytes + bytes < PACK_TARGET_BYTES;
    }

    /** The last burst of a deploy of new content: packed and sent at once, unasked. */
    function placeUnasked(keyed: ReadonlyArray<{ sha256: string; key: string; size: number | undefined }>): void {
      for (const { sha256, key, size } of keyed) append(sha256, undefined, key, local.pathOf(sha256), size!);
      sendPack();
    }

    /** Whether the blobs waiting are to be asked about now (see `ASK_AT_ONCE`). */
    const due = (): boolean => waiting.length > 0 && (flushing || waitingAlone || questions === 0 || waiting.length >= ASK_AT_ONCE);

    async function ask(): Promise<void> {
      // Blobs added together (a batch of announcements, `finish`'s) are taken before the first
      // question goes out: they are added in one event turn, so waiting for its end is enough (a
      // whole turn of the event loop was, while each blob came in a message of its own).
      await Promise.resolve();
      try {
        while (due()) {
          const objects = waiting;
          waiting = [];
          waitingAlone = false;
          questions++;
          await place(objects);
        }
      } catch (err) {
        failure ??= { err };
      } finally {
        asking = undefined;
      }
    }

    /** Until every object taken is in the bucket (or one failed): the last pack goes up too. */
    async function settle(): Promise<void> {
      do {
        while (asking !== undefined) await asking;
        sendPack();
        // Awaited one by one: the list may grow meanwhile.
        for (let i = 0; i < running.length; i++) await running[i];
      } while (asking !== undefined || pack.objects.length > 0);
    }

    function add(
      sha256: string,
      bytes?: Uint8Array,
      encodings?: Partial<Record<Encoding, number>>,
      knownSize?: number,
      variantBytes?: Partial<Record<Encoding, Uint8Array>>,
    ): void {
      if (!taken.has(sha256)) {
        taken.add(sha256);
        hold(bucket.keyOf(sha256), bytes);
        // Announced with its bytes, the blob's size is known without asking the file system.
        const size = bytes?.byteLength ?? knownSize ?? statSync(local.pathOf(sha256), { throwIfNoEntry: false })?.size;
        sizes.set(sha256, size);
        waiting.push([sha256, undefined, size]);
        if (size !== undefined && size > packMaxBytes) waitingAlone = true;
      } else if (encodings === undefined) return;
      // Variants the caller names are all there is; otherwise each is looked for on disk. A blob
      // named again (the same bytes at another path) may bring a variant the first did not.
      const size = sizes.get(sha256);
      for (const encoding of ENCODINGS) {
        if (variantsTaken.has(`${sha256}.${encoding}`)) continue;
        const variantSize = encodings !== undefined ? encodings[encoding] : statSync(local.pathOf(sha256, encoding), { throwIfNoEntry: false })?.size;
        if (variantSize === undefined) continue;
        variantsTaken.add(`${sha256}.${encoding}`);
        if (variantBytes?.[encoding]?.byteLength === variantSize) hold(bucket.keyOf(sha256, encoding), variantBytes[encoding]);
        if (size !== undefined && size <= VARIANTS_AFTER_ANSWER_MAX_BYTES) later.push([sha256, encoding, variantSize]);
        else waiting.push([sha256, encoding, variantSize]);
      }
      if (due()) asking ??= ask();
    }

    /** See `BlobPublisher.drain`: as `finish` does, without waiting for the uploads. */
    function drain(): void {
      flushing = true;
      let beside: Promise<void> | undefined;
      if (due() && asking !== undefined) {
        // The last blobs are asked about beside the question in flight, not after it: their pack
        // is the one the commit waits for.
        const objects = waiting;
        waiting = [];
        waitingAlone = false;
        questions++;
        beside = place(objects);
        placing.push(track(beside));
      } else if (due()) asking = ask();
      placing.push(
        track(
          (async () => {
            while (asking !== undefined) await asking;
            // Its failure is `finish`'s (tracked above): the pack goes up with what was placed.
            await beside?.catch(() => undefined);
            sendPack();
          })(),
        ),
      );
    }

    /** Until every object taken is placed: asked about, and the last pack cut (not yet up). */
    async function cutLast(): Promise<void> {
      do {
        while (asking !== undefined) await asking;
        for (let i = 0; i < placing.length; i++) await placing[i];
        sendPack();
      } while (asking !== undefined || pack.objects.length > 0);
    }
    let placesKnown: Promise<PackedBlobs> | undefined;

    return {
      add,
      drain,
      bytesWanted: packMaxBytes,
      bytesHeld: packMaxBytes > 0 ? HELD_BYTES : 0,
      async finish(sha256s) {
        flushing = true;
        for (const sha256 of sha256s) add(sha256);
        if (due()) asking ??= ask();
        placesKnown = cutLast().then(() => new Map(packedBlobs));
        await placesKnown;
        await settle();
        // Packs cut from here on (variants, after the answer) write their own rows.
        rowsLeft = 0;
        if (failure !== undefined) throw failure.err;
        return new Map(packedBlobs);
      },
      places() {
        if (placesKnown === undefined) throw new Error('places() before finish()');
        return placesKnown;
      },
      rowsForCommit() {
        if (rowsForCommit.length === 0) return undefined;
        const writableUntil = rowsOldestMs + graceMs / 2;
        return { rows: rowsForCommit, expired: () => now() > writableUntil };
      },
      rowsCommitted() {
        for (const row of rowsForCommit.splice(0)) remember(row.key, row.touchedMs, { key: row.pack, offset: row.offset });
      },
      async afterAnswer() {
        waiting.push(...later);
        later = [];
        try {
          asking ??= ask();
          await settle();
          if (failure !== undefined) throw failure.err;
        } finally {
          // Noted after the answer, for the blobs too: a note is a hint, and one that does not
          // arrive only costs the next deploy of these objects a question to the bucket.
          if (ledger !== undefined && ledgerAnswered) await ledger.note(done.splice(0)).catch(() => undefined);
        }
      },
    };
  }

  /** Whether the bucket holds this file's object, so the local copy may go; false when it cannot tell. */
  async function safeToEvict(file: BlobFile, packed: Map<string, PackedObject>): Promise<boolean> {
    const row = packed.get(bucket.keyOf(file.sha256, file.encoding));
    if (row !== undefined && (file.encoding !== undefined || row.size === file.size)) return true;
    try {
      const found = await bucket.head(bucket.keyOf(file.sha256, file.encoding));
      return found !== undefined && (file.encoding !== undefined || found.size === file.size);
    } catch {
      return false;
    }
  }

  async function trimCache(): Promise<CacheTrim> {
    const evicted = { files: 0, bytes: 0 };
    if (cacheBytes === 0) return evicted;
    const files: BlobFile[] = [];
    let total = 0;
    for await (const file of local.listBlobFiles()) {
      files.push(file);
      total += file.size;
    }
    if (total <= cacheBytes) return { ...evicted, cachedBytes: total };
    files.sort((a, b) => a.mtimeMs - b.mtimeMs);
    const idleBefore = now() - minIdleMs;
    for (let start = 0; start < files.length && total > cacheBytes; start += TRIM_CONCURRENCY) {
      const batch = files.slice(start, start + TRIM_CONCURRENCY).filter((file) => file.mtimeMs <= idleBefore);
      // Sorted oldest first: once a batch has nothing idle, nothing after it is either.
      if (batch.length === 0) break;
      const keys = batch.map((file) => bucket.keyOf(file.sha256, file.encoding));
      const packed = (await packs?.find(keys).catch(() => undefined)) ?? new Map<string, PackedObject>();
      const evictable = await Promise.all(batch.map((file) => safeToEvict(file, packed)));
      for (const [i, file] of batch.entries()) {
        if (total <= cacheBytes) break;
        if (!evictable[i]) continue;
        try {
          // Used since the listing (a serving thread touched it): it stays.
          if ((await stat(file.path)).mtimeMs > idleBefore) continue;
          await unlink(file.path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw err;
        }
        total -= file.size;
        evicted.files++;
        evicted.bytes += file.size;
      }
    }
    return { ...evicted, cachedBytes: total };
  }

  /** See `BlobStore.holdUnwritten`. */
  function holdUnwritten(blobs: readonly JournaledBlob[]): () => void {
    const mine: string[] = [];
    for (const { sha256, bytes } of blobs) {
      if (unwritten.has(sha256) || unwrittenBytes + bytes.byteLength > UNWRITTEN_MAX_BYTES) continue;
      unwritten.set(sha256, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      unwrittenBytes += bytes.byteLength;
      mine.push(sha256);
    }
    return () => {
      for (const sha256 of mine.splice(0)) {
        unwrittenBytes -= unwritten.get(sha256)!.byteLength;
        unwritten.delete(sha256);
      }
    };
  }

  return {
    ...local,
    isLocal,
    fetch,
    // A node with a bucket has its blobs in the bucket before its commit: no journal.
    attachJournal: undefined,
    holdUnwritten,
    async publish(sha256s, known) {
      const publishing = publisher();
      for (const [sha256, blob] of known ?? []) publishing.add(sha256, undefined, blob.encodings, blob.size, blob.variantBytes);
      const packedBlobs = await publishing.finish(sha256s);
      await publishing.afterAnswer();
      return packedBlobs;
    },
    publisher,
    trimCache,
    bucket,
    cacheGuarded: () => (guarded ??= cacheGuarded(options.dir)),
    ...(packs !== undefined ? { packs } : {}),
    counters: () => ({ downloads: downloaded.count, downloadedBytes: downloaded.bytes, bucketErrors: bucket.errors }),
  };
}

type Waiting = [sha256: string, encoding: Encoding | undefined, size: number | undefined];

function emptyPack(): {
  objects: Array<{ sha256: string; encoding: Encoding | undefined; key: string; path: string; offset: number; size: number; bytes: Buffer | undefined }>;
  bytes: number;
} {
  return { objects: [], bytes: 0 };
}

/** The sha256 of what a variant file decodes to ('' if it does not decode). */
export async function decodedHash(path: string, encoding: Encoding): Promise<string> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(path), encoding === 'br' ? createBrotliDecompress() : createGunzip(), async (decoded: AsyncIterable<Buffer>) => {
      for await (const chunk of decoded) hash.update(chunk);
    });
  } catch {
    // Not even a valid stream of its encoding: fails the check like a wrong hash.
    return '';
  }
  return hash.digest('hex');
}
