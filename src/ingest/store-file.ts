// Writes one accepted file to the blob store and returns its path-index entry.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { isCompressibleType } from '../content-types.js';
import type { BlobStore, Encoding, FileEntry } from '../store/index.js';

// Below 1 KB a precompressed variant saves a few hundred bytes at most, while each variant costs
// a compression, a file, an fsync and a rename at deploy time.
const MIN_COMPRESS_BYTES = 1024;

const ENCODINGS: readonly Encoding[] = ['br', 'gzip'];

async function sizeIfExists(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

// Redeploys mostly resend files the store already has. Blobs are immutable and addressed by
// hash, so an existing blob (and its variants) is reused without writing, fsyncing or
// compressing again. If a compressible blob has no variant yet (it was first stored under a
// type that is not compressed), `putFile` makes them.
async function reuseExisting(blobs: BlobStore, sha256: string, size: number, type: string, compress: boolean) {
  if (!blobs.has(sha256)) return undefined;
  const entry: FileEntry = { sha256, size, type };
  if (!compress) return entry;
  const encodings: Partial<Record<Encoding, number>> = {};
  for (const encoding of ENCODINGS) {
    const variantSize = await sizeIfExists(blobs.pathOf(sha256, encoding));
    if (variantSize !== undefined) encodings[encoding] = variantSize;
  }
  if (Object.keys(encodings).length === 0) return undefined;
  entry.encodings = encodings;
  return entry;
}

export interface StoredFile {
  entry: FileEntry;
  /** Compressible, but its variants do not exist yet: they are made after the commit. */
  needsVariants: boolean;
}

/**
 * Writes the blob without compressing it and without per-file fsyncs (the worker flushes the
 * whole deploy once). Variants are made after the site is live, so a deploy costs about what
 * unpacking and hashing cost; until then the file is served uncompressed.
 */
export async function storeFile(blobs: BlobStore, bytes: Uint8Array, type: string): Promise<StoredFile> {
  const compress = isCompressibleType(type) && bytes.byteLength >= MIN_COMPRESS_BYTES;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const existing = await reuseExisting(blobs, sha256, bytes.byteLength, type, compress);
  if (existing) return { entry: existing, needsVariants: false };
  // Synchronous: this worker thread has nothing else to do, and a thousand small files would
  // otherwise cost thousands of round trips through libuv's shared thread pool.
  blobs.writeSync(bytes, sha256);
  return { entry: { sha256, size: bytes.byteLength, type }, needsVariants: compress };
}
