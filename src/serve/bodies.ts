import { buildBadgedPage, type BadgedPage, type BadgeOptions } from '../badge/index.js';
import type { ServeConfig } from '../config.js';
import { exactBytes } from '../http/index.js';
import { ENCODINGS, isCompressibleType, type Encoding } from '../rules/index.js';
import { packedRangeOf, variantFromBlob, type FileEntry, type PackedRange } from '../store/index.js';
import { withGetters } from './fast-object.js';
import { createLruCache } from './lru-cache.js';
import type { CachedSite, HeldBytes, Ready, SiteReader, Target } from './site-cache.js';

/**
 * Step three of serving a request: the body, held in memory within a byte budget. A stored blob
 * (or one of its precompressed forms), or a page of a site with a badge, built once per page and
 * site: small pages at once, larger ones in a worker thread while the serving thread goes on.
 * Bytes not on this node's disk (blobs in a bucket, not cached yet) stop the step with
 * `BlobNotLocal`, so that the request waits for them off the synchronous path.
 */

/**
 * Thrown by the body step, before anything is written, when the bytes it needs are not on this
 * node's disk (with a bucket, a blob not cached yet): the request is answered again once `fetch`
 * has brought them in.
 */
export class BlobNotLocal extends Error {
  constructor(
    readonly sha256: string,
    readonly encoding: Encoding | undefined,
    /** Where the records say the blob is packed, for `fetch`. */
    readonly packed: PackedRange | undefined,
  ) {
    super(`blob ${sha256}${encoding ? ` (${encoding})` : ''} is not on this node`);
  }
}

/**
 * Thrown by the body step, before anything is written, while the variant a request needs is being
 * made off this thread (`BodyCache.unrecorded`): the request is answered again once it is.
 */
export class VariantPending extends Error {
  constructor(readonly made: Promise<void>) {
    super('a compressed variant is being made');
  }
}

/** The bytes of a file's blob on this node's disk; `BlobNotLocal` when they are not (or went since). */
export function readLocal(store: SiteReader, entry: FileEntry, encoding?: Encoding): Buffer {
  if (!store.blobs.isLocal(entry.sha256, encoding)) throw new BlobNotLocal(entry.sha256, encoding, packedRangeOf(entry));
  try {
    return store.blobs.readSync(entry.sha256, encoding);
  } catch (err) {
    // Evicted between the check and the read: fetched again like any other miss.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotLocal(entry.sha256, encoding, packedRangeOf(entry));
    throw err;
  }
}

/** Builds a badged page off this thread; undefined when that is not possible now (queue full). */
export type BadgedPageBuilder = (source: Buffer, options: BadgeOptions & { compress: boolean }) => Promise<BadgedPage> | undefined;

export interface BodyCache {
  /**
   * A blob's bytes for a target's prepared representation, which then holds them (`ready.held`)
   * while they stay in the cache, if its target may (`keepsBodies`): later requests read them
   * there, with no lookup and no read of the cache's entry. A small body as its view of a shared
   * slab (`BodySlab`); a larger one as the whole `ArrayBuffer` of its cached `Buffer`
   * (`wholeBuffer`), the argument uWS reads cheapest (http/header-names.ts).
   */
  hold(ready: Ready, target: Target, encoding: Encoding | undefined): HeldBytes;
  /** Takes the bytes back from a target's representations (the site cache dropped the target). */
  release(target: Target): void;
  /** A blob's bytes, from the cache or the store (`BlobNotLocal` when not on this node). */
  blob(entry: FileEntry, encoding: Encoding | undefined): Buffer;
  /**
   * The variant of a file whose variants are not recorded yet (a deploy's compressor makes them
   * right after its answer, about a second later): the stored one if this node has it already,
   * else made from the blob by the compressor's own rule (`variantFromBlob`: the same bytes, so
   * the same ETag), and held like any body. Small blobs are compressed at once; larger ones off
   * this thread, the requests that come meanwhile sharing one compression (a promise). Null when
   * the compressor keeps none (the plain bytes are served). `BlobNotLocal` when the blob itself is
   * not on this node.
   */
  unrecorded(entry: FileEntry, encoding: Encoding): Buffer | null | Promise<void>;
  /** The page with its badge: at once when cached or small, else once a worker has built it. */
  badged(entry: FileEntry, options: BadgeOptions): BadgedPage | Promise<BadgedPage>;
  /** Drops the bodies of a site's targets (its live revision changed or it went away). */
  forget(cached: CachedSite): void;
  readonly weight: number;
  /** Badged pages a worker built so far. */
  readonly builtElsewhere: number;
  /** Variants made from their blob so far (`unrecorded`), one per file not yet compressed by its deploy. */
  readonly variantsMade: number;
}

// Pages up to this size get their badge on the serving thread (a few ms at most); larger ones
// would hold it for up to a second for 5 MB of hostile markup, so a worker builds them.
const BADGE_INLINE_MAX_BYTES = 64 * 1024;

// Blobs up to this size get a variant made on the serving thread (gzip's fast level: about 0.5 ms
// for 32 KB here, once per file and thread); larger ones on libuv's pool while the thread goes on.
const VARIANT_INLINE_MAX_BYTES = 32 * 1024;
// Files whose variant the compressor does not keep, remembered so as not to compress them again.
const MAX_NOT_WORTH = 1024;

const bodyKey = (sha256: string, encoding: Encoding | undefined): string => (encoding ? `${sha256}.${encoding}` : sha256);
const badgeKey = (sha256: string, siteName: string): string => `badge:${sha256}:${siteName}`;

/**
 * The bytes in a `Buffer` of their own (the whole of its `ArrayBuffer`), copied if need be: a small
 * file is read into a slice of Node's shared 8 KB pool, which a cached body would keep alive, and
 * the prepared path hands uWS the `ArrayBuffer` itself (http/header-names.ts `exactBytes`).
 */
function wholeBuffer(bytes: Buffer): Buffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : Buffer.from(exactBytes(bytes));
}

/** What a `Ready` holds of a body: a small one's view of its slab, a larger one's whole `ArrayBuffer`. */
/** A blob's bytes as a `Ready` holds them: the view of a slab as it is, else all of its own `ArrayBuffer` (`wholeBuffer`). */
const heldOf = (value: Buffer | BadgedPage): HeldBytes => {
  const bytes = value as Buffer;
  return bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes;
};

// Bodies up to a quarter of this size are copied side by side into shared slabs, one slab open at a
// time per thread. Across many pages, what uWS reads of such a body is then its view and its bytes:
// a body's own `ArrayBuffer` adds its extension, backing store and that store's count outside the
// JavaScript heap, each a cache miss once the rotation outgrows the caches (bench/RESULTS.md,
// "Serving back at the ceiling", twelfth and thirteenth passes). A slab lives as long as any body
// in it, so the cache counts it whole, from its first body until its last one leaves.
const BODY_SLAB_BYTES = 16 * 1024;
const SLABBED_MAX_BYTES = BODY_SLAB_BYTES / 4;
// A budget of fewer slabs than this keeps every body in its own buffer (a few slabs' worth of
// scattered survivors would otherwise fill it).
const MIN_SLABS_IN_BUDGET = 64;

/** A slab of small bodies: bytes written once, from the start; `live`: bodies in the cache in it. */
interface BodySlab {
  readonly bytes: Buffer;
  used: number;
  live: number;
}

export function createBodyCache(store: SiteReader, config: ServeConfig, buildOffThread?: BadgedPageBuilder): BodyCache {
  // A blob's bytes are held as the Buffer itself (its ETag is the target's): one object fewer to
  // read per answer across many pages. A badged page holds its forms with their own ETags.
  const bodies = createLruCache<Buffer | BadgedPage>(config.cacheBytes, (value) => {
    // The last body of a slab left: the slab is no longer counted (nor open to more bodies).
    const slab = value instanceof Buffer ? slabOf.get(value.buffer) : undefined;
    if (slab === undefined || --slab.live > 0) return;
    bodies.charge(-BODY_SLAB_BYTES, '');
    if (open === slab) open = undefined;
  });
  const slabOf = new WeakMap<ArrayBufferLike, BodySlab>();
  const slabbed = config.cacheBytes >= MIN_SLABS_IN_BUDGET * BODY_SLAB_BYTES;
  let open: BodySlab | undefined;

  /** Stores a blob's bytes under `key`: a small one copied into the open slab, a larger one in a buffer of its own. */
  const keepBytes = (key: string, bytes: Buffer): Buffer => {
    const length = bytes.byteLength;
    if (!slabbed || length === 0 || length > SLABBED_MAX_BYTES) {
      const own = wholeBuffer(bytes);
      bodies.set(key, own, own.byteLength);
      return own;
    }
    if (open === undefined || open.used + length > BODY_SLAB_BYTES) {
      open = { bytes: Buffer.allocUnsafeSlow(BODY_SLAB_BYTES), used: 0, live: 0 };
      slabOf.set(open.bytes.buffer, open);
    }
    const slab = open;
    const view = slab.bytes.subarray(slab.used, slab.used + length);
    bytes.copy(view);
    slab.used += length;
    // Counted before it is stored, so that a body it replaces cannot leave the slab empty meanwhile.
    const first = slab.live++ === 0;
    bodies.set(key, view, 0);
    if (first) bodies.charge(BODY_SLAB_BYTES, key);
    return view;
  };
  // Pages being built, so that visitors asking at once wait for one build.
  const building = new Map<string, Promise<BadgedPage>>();
  let builtElsewhere = 0;

  const blob = (entry: FileEntry, encoding: Encoding | undefined): Buffer => {
    const key = bodyKey(entry.sha256, encoding);
    let bytes = bodies.get(key) as Buffer | undefined;
    if (bytes === undefined) bytes = keepBytes(key, readLocal(store, entry, encoding));
    return bytes;
  };

  // Variants being made off this thread, and those not worth having (the plain bytes are served).
  const making = new Map<string, Promise<void>>();
  const notWorth = new Set<string>();
  let variantsMade = 0;

  const holdVariant = (key: string, made: Buffer | undefined): Buffer | null => {
    if (made !== undefined) return keepBytes(key, made);
    if (notWorth.size >= MAX_NOT_WORTH) notWorth.clear();
    notWorth.add(key);
    return null;
  };

  /** The stored variant if this node has it (the compressor may have written it, not recorded it yet). */
  const storedVariant = (entry: FileEntry, encoding: Encoding): Buffer | undefined => {
    try {
      return readLocal(store, entry, encoding);
    } catch (err) {
      if (err instanceof BlobNotLocal) return undefined;
      throw err;
    }
  };

  const keep = (key: string, page: BadgedPage): BadgedPage => {
    bodies.set(key, page, page.identity.bytes.byteLength + (page.br?.bytes.byteLength ?? 0) + (page.gzip?.bytes.byteLength ?? 0));
    return page;
  };

  const methods: Omit<BodyCache, 'weight' | 'builtElsewhere' | 'variantsMade'> = {
    blob,

    hold(ready, target, encoding) {
      const entry = target.entry!;
      const bytes = blob(entry, encoding);
      // Only a target the site cache keeps: it releases them when it drops the target, and the
      // cache takes them back from every holder when it drops the bytes, so the weight stays the truth.
      if (target.keepsBodies) bodies.hold(bodyKey(entry.sha256, encoding), ready, heldOf);
      return heldOf(bytes);
    },

    unrecorded(entry, encoding) {
      const key = bodyKey(entry.sha256, encoding);
      const kept = bodies.get(key) as Buffer | undefined;
      if (kept !== undefined) return kept;
      if (notWorth.has(key)) return null;
      const pending = making.get(key);
      if (pending !== undefined) return pending;
      const stored = storedVariant(entry, encoding);
      if (stored !== undefined) return holdVariant(key, stored);
      const made = variantFromBlob(blob(entry, undefined), encoding, VARIANT_INLINE_MAX_BYTES);
      variantsMade++;
      if (!(made instanceof Promise)) return holdVariant(key, made);
      // A compression that fails leaves the request to the plain bytes (it waits once only).
      const done = made.then(
        (bytes) => void holdVariant(key, bytes),
        () => undefined,
      );
      void done.finally(() => making.delete(key));
      making.set(key, done);
      return done;
    },

    release(target) {
      target.keepsBodies = false;
      if (target.identity !== undefined) bodies.release(target.identity);
      if (target.br !== undefined) bodies.release(target.br);
      if (target.gzip !== undefined) bodies.release(target.gzip);
    },

    badged(entry, options) {
      const key = badgeKey(entry.sha256, options.siteName);
      const cached = bodies.get(key) as BadgedPage | undefined;
      if (cached !== undefined) return cached;
      const pending = building.get(key);
      if (pending !== undefined) return pending;
      const source = readLocal(store, entry);
      const build = { ...options, compress: isCompressibleType(entry.type) };
      const offThread = source.byteLength > BADGE_INLINE_MAX_BYTES ? buildOffThread?.(source, build) : undefined;
      if (offThread === undefined) return keep(key, buildBadgedPage(source, build));
      // A worker that fails (the pool stopping) leaves the page to this thread: never unbadged.
      const done = offThread
        .then((page) => {
          builtElsewhere++;
          return page;
        })
        .catch(() => buildBadgedPage(source, build))
        .then((page) => keep(key, page))
        .finally(() => building.delete(key));
      building.set(key, done);
      return done;
    },

    // Bodies of a revision that is no longer live would otherwise sit in the cache until the byte
    // budget pushes them out, so a site deployed to all day fills every thread's budget with
    // superseded pages. Content another site shares is just read again on its next request.
    forget(cached) {
      for (const target of cached.targets.values()) {
        const sha256 = target.entry?.sha256;
        if (sha256 === undefined) continue;
        bodies.delete(sha256);
        for (const encoding of ENCODINGS) bodies.delete(bodyKey(sha256, encoding));
        bodies.delete(badgeKey(sha256, cached.site.name));
      }
    },
  };
  // Not `get weight()` in the literal: that would make the cache a slow object (fast-object.ts).
  return withGetters(methods, { weight: () => bodies.weight, builtElsewhere: () => builtElsewhere, variantsMade: () => variantsMade });
}
