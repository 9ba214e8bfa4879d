import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { storeFile, type CompressBudget } from '../../src/ingest/store-file.js';
import { openBlobStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Storing a deploy's file in the ingest worker: a small new text file gets its gzip variant at
 * once while the deploy's byte budget lasts (so the first visitor after the 201 gets it
 * compressed); brotli, and files past the budget or the size bound, wait for after the commit.
 */

const CSS = 'text/css; charset=utf-8';
const css = (bytes: number): Buffer =>
  Buffer.from(`.x{margin:0 auto;padding:${randomBytes(4).toString('hex')}}\n`.repeat(Math.ceil(bytes / 20)).slice(0, bytes));

describe('storeFile with a budget for compressing before the answer', () => {
  it.each([
    // [what, type, size, budget left, largest file, gzip made now, bytes left after]
    ['a small text file within the budget', CSS, 4000, 10_000, 256 * 1024, true, 6000],
    ['a text file past what is left of the budget', CSS, 4000, 3999, 256 * 1024, false, 3999],
    ['a text file over the size bound', CSS, 4000, 10_000, 3000, false, 10_000],
    ['an image', 'image/png', 4000, 10_000, 256 * 1024, false, 10_000],
    ['a text file too small to compress', CSS, 500, 10_000, 256 * 1024, false, 10_000],
  ])('%s', async (_what, type, size, leftBytes, maxFileBytes, gzipNow, leftAfter) => {
    const blobs = openBlobStore({ dir: tempDir('plinth-store-file-') });
    const bytes = type === CSS ? css(size) : randomBytes(size);
    const budget: CompressBudget = { leftBytes, maxFileBytes };
    const stored = await storeFile(blobs, bytes, type, undefined, budget);
    expect(stored.entry.encodings?.gzip !== undefined).toBe(gzipNow);
    expect(existsSync(blobs.pathOf(stored.entry.sha256, 'gzip'))).toBe(gzipNow);
    // Brotli is never made before the answer; a compressible file still has variants to come.
    expect(stored.entry.encodings?.br).toBeUndefined();
    expect(stored.needsVariants).toBe(type === CSS && size >= 1024);
    expect(budget.leftBytes).toBe(leftAfter);
    if (gzipNow) expect(gunzipSync(blobs.readSync(stored.entry.sha256, 'gzip'))).toEqual(bytes);
  });

  it('compresses nothing before the answer without a budget', async () => {
    const blobs = openBlobStore({ dir: tempDir('plinth-store-file-') });
    const stored = await storeFile(blobs, css(4000), CSS);
    expect(stored.entry.encodings).toBeUndefined();
    expect(stored.needsVariants).toBe(true);
  });
});
