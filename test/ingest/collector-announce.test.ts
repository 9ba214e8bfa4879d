// The collector tells `onStored` when a blob's buffer is its alone, so the worker moves it to the
// HTTP thread instead of copying it: the file's chunks joined into a buffer of its own, and no
// journal keeping the bytes.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCollector } from '../../src/ingest/collector.js';
import { createBlobStore } from '../../src/store/blob-store.js';
import { tempDir } from '../helpers/sites.js';
import { KB } from '../fixtures/ingest-pool.js';

const dir = tempDir('plinth-collector-announce-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function* chunksOf(bytes: Buffer, size: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

describe('the collector’s announcements', () => {
  it('gives away a buffer it joined from several chunks, and only that; the deploy completes with the buffer taken', async () => {
    const blobs = createBlobStore({ dir: join(dir, 'blobs'), now: Date.now });
    const told: Array<{ sha256: string; yours: boolean; hash: string }> = [];
    const collector = createCollector({
      blobs,
      limits: { maxFiles: 10, maxFileBytes: 512 * KB, maxSiteBytes: 2048 * KB },
      blockExecutables: false,
      onStored: (stored, bytes, _encodings, yours) => {
        told.push({ sha256: stored, yours, hash: sha256(bytes) });
        // Taken as the worker takes it: moved away, which leaves `bytes` empty here.
        if (yours) structuredClone(bytes, { transfer: [bytes.buffer as ArrayBuffer] });
      },
    });
    const joined = Buffer.alloc(100 * KB, 'a');
    const whole = Buffer.alloc(10 * KB, 'b');
    // A small file joined from chunks lands in Buffer's shared pool: not the blob's alone.
    const pooled = Buffer.alloc(2 * KB, 'c');
    const given = Buffer.alloc(20 * KB, 'd');
    for (const name of ['index.html', 'joined.txt', 'whole.txt', 'pooled.txt', 'given.txt']) collector.admit(name, 'file');
    await collector.addBytes('index.html', Buffer.from('<h1>hi</h1>'));
    await collector.addFile('joined.txt', chunksOf(joined, 16 * KB));
    await collector.addFile('whole.txt', chunksOf(whole, 64 * KB));
    await collector.addFile('pooled.txt', chunksOf(pooled, KB));
    await collector.addBytes('given.txt', given);
    const site = await collector.finish({ patch: false });

    const yoursOf = new Map(told.map((entry) => [entry.sha256, entry.yours]));
    expect(yoursOf.get(sha256(joined))).toBe(true);
    expect(yoursOf.get(sha256(whole))).toBe(false);
    expect(yoursOf.get(sha256(pooled))).toBe(false);
    expect(yoursOf.get(sha256(given))).toBe(false);
    // Each announcement carried the blob's bytes, and each file is stored whole.
    for (const entry of told) expect(entry.hash).toBe(entry.sha256);
    for (const [file, bytes] of [
      ['joined.txt', joined],
      ['whole.txt', whole],
      ['pooled.txt', pooled],
      ['given.txt', given],
    ] as const) {
      const entry = site.files.find((f) => f.path === file)!;
      expect(entry.size).toBe(bytes.byteLength);
      expect(readFileSync(blobs.pathOf(entry.sha256)).equals(bytes)).toBe(true);
    }
    expect(site.journal).toBeUndefined();
  });

  it('gives nothing away while a journal keeps the bytes for the commit', async () => {
    const blobs = createBlobStore({ dir: join(dir, 'journaled'), now: Date.now });
    const yours: boolean[] = [];
    const collector = createCollector({
      blobs,
      limits: { maxFiles: 10, maxFileBytes: 512 * KB, maxSiteBytes: 512 * KB },
      blockExecutables: false,
      journalMaxBytes: 256 * KB,
      onStored: (_sha256, _bytes, _encodings, given) => yours.push(given),
    });
    const bytes = Buffer.alloc(100 * KB, 'e');
    collector.admit('index.html', 'file');
    await collector.addFile('index.html', chunksOf(bytes, 16 * KB));
    const site = await collector.finish({ patch: false });
    expect(yours).toEqual([false]);
    expect(site.journal?.map((blob) => sha256(blob.bytes))).toEqual([sha256(bytes)]);
  });
});
