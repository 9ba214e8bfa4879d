// A small whole site is not flushed by its unpack: the result carries every blob's bytes for the
// commit to make durable (UnpackOptions.journalMaxBytes), and when the unpack also analysed it,
// its new blobs get no file before the answer (the compressor's task writes them). Anything else
// flushes as before.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollector } from '../../src/ingest/collector.js';
import type { SiteRulesLimits, UnpackTask } from '../../src/ingest/index.js';
import { createBlobStore } from '../../src/store/blob-store.js';
import { forkSync } from '../../src/store/filesystem-sync.js';
import type { TarEntrySpec } from '../fixtures/archives.js';
import { createIngestRig, KB, type IngestRig } from '../fixtures/ingest-pool.js';

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

const unpack = (entries: TarEntrySpec[], options: Partial<UnpackTask> = {}) => rig.unpackEntries(entries, options);

describe('unpack with journalMaxBytes', () => {
  it('carries the bytes of every blob of a site within the bound, new or already stored, each once', async () => {
    const first = await unpack(SITE, { journalMaxBytes: 64 * KB });
    const again = await unpack(SITE, { journalMaxBytes: 64 * KB });
    for (const result of [first, again]) {
      expect(result.journal?.map((blob) => blob.sha256).sort()).toEqual([...new Set(result.files.map((file) => file.sha256))].sort());
      for (const blob of result.journal!) {
        expect(sha256(blob.bytes)).toBe(blob.sha256);
        // Without the analysis in the unpack the files are written before the answer: an analysis task reads files.
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

const LIMITS: SiteRulesLimits = {
  redirects: { maxEntries: 100, maxLineChars: 1000, maxFileBytes: 64 * KB },
  headers: { maxEntries: 100, maxLineChars: 1000, maxFileBytes: 64 * KB },
  maxWarnings: 50,
};
const blobPath = (sha256: string): string => join(rig.dataDir, 'blobs', sha256.slice(0, 2), sha256);

describe('unpack with journalMaxBytes and the analysis', () => {
  it('writes no file for a new blob: the analysis reads the carried bytes, and the compress task writes the files', async () => {
    const site: TarEntrySpec[] = [
      { name: 'index.html', content: '<img src="gone.png">\n' + '<p>only in memory</p>\n'.repeat(20) },
      { name: 'img/b.bin', content: Buffer.alloc(2000, 9) },
    ];
    const result = await unpack(site, { journalMaxBytes: 64 * KB, analyze: { limits: LIMITS, threads: 2 } });
    expect(result.filesDeferred).toBe(2);
    expect(result.analysis).toMatchObject({ ok: true, extras: { warningsTotal: 1, warnings: [{ file: 'index.html', line: 1, ref: 'gone.png' }] } });
    const journal = result.journal!;
    expect(journal).toHaveLength(2);
    for (const blob of journal) expect(existsSync(blobPath(blob.sha256))).toBe(false);
    // What the deploy's compressor does after the answer: the files first, then the variants.
    const html = result.files.find((file) => file.path === 'index.html')!;
    const { sizes: made } = await rig.pool.compress({
      dataDir: rig.dataDir,
      sha256s: [html.sha256],
      write: journal.map((blob) => ({ sha256: blob.sha256, bytes: new Uint8Array(blob.bytes) })),
    });
    expect(made[html.sha256]?.gzip).toBeGreaterThan(0);
    for (const blob of journal) expect(readFileSync(blobPath(blob.sha256)).equals(Buffer.from(blob.bytes))).toBe(true);
  });

  it('with deferMaxBytes, writes the files of new blobs over it before the answer and leaves the rest for after', async () => {
    // As a cluster node asks: it uploads the small blobs from the bytes it was announced, larger ones from their files.
    const small = Buffer.from(`<p>${'small '.repeat(50)}${Date.now()}</p>`);
    const large = Buffer.concat([Buffer.alloc(6000, 3), Buffer.from(String(Date.now()))]);
    const site: TarEntrySpec[] = [
      { name: 'index.html', content: small },
      { name: 'big.bin', content: large },
    ];
    const result = await unpack(site, { journalMaxBytes: 64 * KB, deferMaxBytes: 4 * KB, analyze: { limits: LIMITS, threads: 2 } });
    expect(result.filesDeferred).toBe(1);
    expect(result.journal?.map((blob) => blob.sha256).sort()).toEqual([sha256(small), sha256(large)].sort());
    expect(existsSync(blobPath(sha256(small)))).toBe(false);
    expect(readFileSync(blobPath(sha256(large))).equals(large)).toBe(true);
  });

  it('writes the files before its answer when the analysis is left to the pool, which reads files', async () => {
    const site: TarEntrySpec[] = [{ name: 'index.html', content: '<p>analysed elsewhere</p>\n'.repeat(30) }];
    const result = await unpack(site, { journalMaxBytes: 64 * KB, analyze: { limits: LIMITS, threads: 2 }, partial: true });
    expect(result.analysis).toBeUndefined();
    expect(result.filesDeferred).toBeUndefined();
    for (const file of result.files) expect(existsSync(blobPath(file.sha256))).toBe(true);
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
