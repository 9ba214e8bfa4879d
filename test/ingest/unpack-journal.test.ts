// A small whole site is not flushed by its unpack: the result carries every blob's bytes for the
// commit to make durable (UnpackOptions.journalMaxBytes). Anything else flushes as before.
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollector } from '../../src/ingest/collector.js';
import type { UnpackTask } from '../../src/ingest/index.js';
import { createBlobStore } from '../../src/store/blob-store.js';
import { forkSync } from '../../src/store/filesystem-sync.js';
import { tarFromEntries, type TarEntrySpec } from '../fixtures/archives.js';
import { createIngestRig, expectOk, KB, TEST_LIMITS, type IngestRig } from '../fixtures/ingest-pool.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-journal-');
});
afterAll(() => rig.close());

const SITE: TarEntrySpec[] = [
  { name: 'index.html', content: '<h1>home</h1>\n'.repeat(100) },
  { name: 'about/index.html', content: '<h1>about</h1>\n'.repeat(100) },
  // The same content twice: one blob, carried once.
  { name: 'copy.html', content: '<h1>home</h1>\n'.repeat(100) },
  { name: 'img/a.bin', content: Buffer.alloc(3000, 7) },
];

async function unpack(entries: TarEntrySpec[], options: Partial<UnpackTask> = {}) {
  const archive = await tarFromEntries(rig.file('site.tgz'), entries);
  const spoolPath = rig.file('spool');
  copyFileSync(archive, spoolPath);
  return expectOk(
    await rig.pool.unpack({ spoolPath, dataDir: rig.dataDir, bodyKind: 'archive', limits: TEST_LIMITS, blockExecutables: false, ...options } as UnpackTask),
  );
}

describe('unpack with journalMaxBytes', () => {
  it('carries the bytes of every blob of a site within the bound, new or already stored, each once', async () => {
    const first = await unpack(SITE, { journalMaxBytes: 64 * KB });
    const again = await unpack(SITE, { journalMaxBytes: 64 * KB });
    for (const result of [first, again]) {
      expect(result.journal?.map((blob) => blob.sha256).sort()).toEqual([...new Set(result.files.map((file) => file.sha256))].sort());
      for (const blob of result.journal!) {
        expect(sha256(blob.bytes)).toBe(blob.sha256);
        // The file is written as well: readers read files.
        expect(readFileSync(join(rig.dataDir, 'blobs', blob.sha256.slice(0, 2), blob.sha256)).equals(Buffer.from(blob.bytes))).toBe(true);
      }
    }
  });

  it('carries nothing past the bound, without the option, or when variants were made before the answer', async () => {
    expect((await unpack(SITE, { journalMaxBytes: 4 * KB })).journal).toBeUndefined();
    expect((await unpack(SITE)).journal).toBeUndefined();
    const text: TarEntrySpec[] = [{ name: 'index.html', content: '<p>compress me</p>\n'.repeat(200) }];
    const compressed = await unpack(text, { journalMaxBytes: 64 * KB, compressBeforePublish: { leftBytes: 64 * KB, maxFileBytes: 64 * KB } });
    expect(compressed.files[0]?.encodings?.gzip).toBeGreaterThan(0);
    expect(compressed.journal).toBeUndefined();
  });
});

describe('the collector', () => {
  it('syncs the filesystem only when it does not carry the blobs', async () => {
    const blobs = createBlobStore({ dir: join(rig.dir, 'collector-blobs'), now: Date.now });
    let syncs = 0;
    const runSync = async (dir: string): Promise<void> => {
      syncs++;
      await forkSync(dir);
    };
    const limits = { maxFiles: 10, maxFileBytes: 64 * KB, maxSiteBytes: 64 * KB };
    const collect = async (journalMaxBytes: number, content: string) => {
      const collector = createCollector({ blobs, limits, blockExecutables: false, runSync, journalMaxBytes });
      collector.admit('index.html', 'file');
      await collector.addBytes('index.html', Buffer.from(content));
      return collector.finish({ patch: false });
    };
    const carried = await collect(8 * KB, '<p>small</p>');
    expect(carried.journal).toHaveLength(1);
    expect(syncs).toBe(0);
    const flushed = await collect(8, '<p>larger than the bound</p>');
    expect(flushed.journal).toBeUndefined();
    expect(syncs).toBe(1);
  });
});
