// Writes one accepted file to the blob store and returns its path-index entry.
import { createHash } from 'node:crypto';
import { ENCODINGS, wantsVariants, type Encoding } from '../rules/index.js';
import type { BlobStore, FileEntry } from '../store/index.js';
import { sizeIfExists } from '../store/blobs-entry.js';

export const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * What a deploy may compress before its answer: bytes of text left (a proxy for time that does
 * not depend on what else the machine runs), and the largest file worth it.
 */
export interface CompressBudget {
  leftBytes: number;
  maxFileBytes: number;
}

/**
 * Made before the answer: gzip at its fast level compresses several times faster than brotli at
 * its (about 7 ms against 13 ms for 400 KB of text here), and every browser takes it. Brotli
 * follows with the variants made after the commit.
 */
const BEFORE_ANSWER: readonly Encoding[] = ['gzip'];

export interface StoredFile {
  entry: FileEntry;
  /** Compressible, but its variants do not exist yet: they are made after the commit. */
  needsVariants: boolean;
  /** False for a new blob whose file was not written (see `deferNew`). */
  written?: false;
}

/**
 * Writes the blob synchronously (this worker thread has nothing else to do, and a thousand small
 * files would otherwise cost thousands of round trips through libuv's shared thread pool),
 * without per-file fsyncs: the worker flushes the whole deploy once. A small text file gets its
 * gzip variant here while `budget` lasts, so its first visitors get it compressed; the other
 * variants are made after the site is live. Redeploys mostly resend files the store already
 * has; blobs are immutable and addressed by hash, so those are reused with their variants.
 * `sha256`: the bytes' hash when the caller has it already.
 */
export async function storeFile(
  blobs: BlobStore,
  bytes: Uint8Array,
  type: string,
  sha256 = sha256Of(bytes),
  budget?: CompressBudget,
  /** Write no new blob (its bytes wait in the blob journal, written after the answer): `written` says which were not. */
  deferNew = false,
): Promise<StoredFile> {
  const compress = wantsVariants(type, bytes.byteLength);
  const entry: FileEntry = { sha256, size: bytes.byteLength, type };
  if (deferNew && !blobs.reuseSync(sha256)) return { entry, needsVariants: compress, written: false };
  if (!deferNew && blobs.writeSync(bytes, sha256)) {
    if (!compress || budget === undefined || bytes.byteLength > budget.leftBytes || bytes.byteLength > budget.maxFileBytes)
      return { entry, needsVariants: compress };
    budget.leftBytes -= bytes.byteLength;
    const encodings = blobs.compressSync(sha256, bytes, BEFORE_ANSWER);
    return { entry: Object.keys(encodings).length > 0 ? { ...entry, encodings } : entry, needsVariants: true };
  }
  if (!compress) return { entry, needsVariants: false };
  const encodings: Partial<Record<Encoding, number>> = {};
  for (const encoding of ENCODINGS) {
    const variantSize = await sizeIfExists(blobs.pathOf(sha256, encoding));
    if (variantSize !== undefined) encodings[encoding] = variantSize;
  }
  if (Object.keys(encodings).length === 0) return { entry, needsVariants: true };
  return { entry: { ...entry, encodings }, needsVariants: false };
}
