import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupDataDir, restoreDataDir } from '../../src/store/backup.js';
import { blobLayoutOf } from '../../src/store/blob-store.js';
import { openStore, type Store } from '../../src/store/index.js';

let dir: string;
let store: Store;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plinth-store-blobs-'));
  store = openStore({ dir });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

function blobFiles(): string[] {
  const root = join(dir, 'blobs');
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  return walk(root).map((f) => relative(root, f));
}

async function* chunksOf(bytes: Buffer, size: number) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('blob store', () => {
  it('stores the same bytes once, under their hash', async () => {
    const bytes = Buffer.from('hello, plinth\n');
    const first = await store.blobs.write(bytes);
    const second = await store.blobs.write(chunksOf(bytes, 3));

    expect(first).toEqual({ sha256: sha256(bytes), size: bytes.length });
    expect(second).toEqual(first);
    const h = first.sha256;
    // A new store is flat (`aa/<sha256>`), and says so in `blobs/layout`.
    expect(blobFiles().sort()).toEqual([join(h.slice(0, 2), h), 'layout']);
    expect(store.blobs.pathOf(h)).toBe(join(dir, 'blobs', h.slice(0, 2), h));
    expect(store.blobs.has(h)).toBe(true);
    expect(store.blobs.readSync(h)).toEqual(bytes);
  });

  it('hashes a large streamed blob like the whole buffer', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const written = await store.blobs.write(chunksOf(bytes, 64 * 1024));
    expect(written).toEqual({ sha256: sha256(bytes), size: bytes.length });
    expect(statSync(store.blobs.pathOf(written.sha256)).size).toBe(bytes.length);
  });

  it('writes a blob synchronously for a batch, once per hash, and flushes the batch', async () => {
    const bytes = randomBytes(50_000);
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(store.blobs.writeSync(bytes, sha)).toBe(true);
    expect(store.blobs.writeSync(bytes, sha)).toBe(false);
    await store.blobs.flush();
    expect(store.blobs.readSync(sha).equals(bytes)).toBe(true);
    const variants = await store.blobs.compressBlob(sha);
    expect(variants).toEqual({});
  });

  it('leaves no temp files behind after writes', () => {
    expect(readdirSync(join(dir, 'blobs', 'tmp'))).toEqual([]);
  });

  it('makes brotli and gzip variants of compressible files', async () => {
    const text = Buffer.from('<p>The quick brown fox jumps over the lazy dog.</p>\n'.repeat(200));
    const entry = await store.blobs.putFile(text, 'text/html; charset=utf-8', { compress: true });

    expect(entry).toMatchObject({ sha256: sha256(text), size: text.length, type: 'text/html; charset=utf-8' });
    const br = store.blobs.readSync(entry.sha256, 'br');
    const gz = store.blobs.readSync(entry.sha256, 'gzip');
    expect(entry.encodings).toEqual({ br: br.length, gzip: gz.length });
    expect(store.blobs.pathOf(entry.sha256, 'br')).toBe(`${store.blobs.pathOf(entry.sha256)}.br`);
    expect(store.blobs.pathOf(entry.sha256, 'gzip')).toBe(`${store.blobs.pathOf(entry.sha256)}.gz`);
    expect(brotliDecompressSync(br)).toEqual(text);
    expect(gunzipSync(gz)).toEqual(text);

    expect(await store.blobs.putFile(text, 'text/html; charset=utf-8', { compress: true })).toEqual(entry);
  });

  it('keeps no variant when compression does not pay off', async () => {
    const noise = randomBytes(4096);
    const entry = await store.blobs.putFile(noise, 'image/png', { compress: true });
    expect(entry).toEqual({ sha256: sha256(noise), size: 4096, type: 'image/png' });
    expect(existsSync(store.blobs.pathOf(entry.sha256, 'br'))).toBe(false);
    expect(existsSync(store.blobs.pathOf(entry.sha256, 'gzip'))).toBe(false);
  });

  it.each([
    ['a file under 256 bytes', Buffer.from('a'.repeat(255)), true],
    ['compress: false', Buffer.from('b'.repeat(10_000)), false],
  ])('makes no variant for %s', async (_, bytes, compress) => {
    const entry = await store.blobs.putFile(bytes, 'text/plain', { compress });
    expect(entry.encodings).toBeUndefined();
    expect(existsSync(store.blobs.pathOf(entry.sha256, 'br'))).toBe(false);
  });

  it.each(['../../etc/passwd', 'ABC', 'a'.repeat(63), `${'a'.repeat(64)}/x`])('refuses %s as a hash', (bad) => {
    expect(() => store.blobs.pathOf(bad)).toThrow(TypeError);
  });
});

describe('blob folder layout', () => {
  /** A blob placed as a store made before the flat layout placed it: `aa/bb/<sha256>`. */
  function placeNested(blobsDir: string, bytes: Buffer, suffix = ''): string {
    const h = sha256(bytes);
    mkdirSync(join(blobsDir, h.slice(0, 2), h.slice(2, 4)), { recursive: true });
    writeFileSync(join(blobsDir, h.slice(0, 2), h.slice(2, 4), h + suffix), bytes);
    return h;
  }

  it('keeps a store made with nested folders nested: its blobs read, new ones go beside them', async () => {
    const old = await mkdtemp(join(tmpdir(), 'plinth-store-nested-'));
    try {
      const blobsDir = join(old, 'blobs');
      const kept = Buffer.from('a blob from before\n');
      const h = placeNested(blobsDir, kept);
      const nested = openStore({ dir: old });
      try {
        expect(blobLayoutOf(blobsDir)).toBe('nested');
        expect(existsSync(join(blobsDir, 'layout'))).toBe(false);
        expect(nested.blobs.readSync(h)).toEqual(kept);
        const added = Buffer.from('a blob from now\n');
        expect(nested.blobs.writeSync(added, sha256(added))).toBe(true);
        expect(nested.blobs.pathOf(sha256(added))).toBe(join(blobsDir, sha256(added).slice(0, 2), sha256(added).slice(2, 4), sha256(added)));
        expect(readFileSync(nested.blobs.pathOf(sha256(added)))).toEqual(added);
        const listed: string[] = [];
        for await (const file of nested.blobs.listBlobFiles()) listed.push(file.sha256);
        expect(listed.sort()).toEqual([h, sha256(added)].sort());
      } finally {
        await nested.close();
      }
    } finally {
      await rm(old, { recursive: true, force: true });
    }
  });

  it('makes a new store flat, with its 256 folders, and lists its blobs and variants', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'plinth-store-flat-'));
    try {
      const flat = openStore({ dir: fresh });
      try {
        const blobsDir = join(fresh, 'blobs');
        expect(blobLayoutOf(blobsDir)).toBe('flat');
        expect(readdirSync(blobsDir).filter((name) => /^[0-9a-f]{2}$/.test(name))).toHaveLength(256);
        const bytes = Buffer.from('<p>flat</p>'.repeat(200));
        const entry = await flat.blobs.putFile(bytes, 'text/html', { compress: true });
        expect(flat.blobs.pathOf(entry.sha256, 'gzip')).toBe(join(blobsDir, entry.sha256.slice(0, 2), `${entry.sha256}.gz`));
        const listed: string[] = [];
        for await (const file of flat.blobs.listBlobFiles()) listed.push(file.encoding ?? 'identity');
        expect(listed.sort()).toEqual(['br', 'gzip', 'identity']);
      } finally {
        await flat.close();
      }
      // Opened again (another thread, a restart), it stays flat.
      const again = openStore({ dir: fresh });
      await again.close();
      expect(blobLayoutOf(join(fresh, 'blobs'))).toBe('flat');
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });

  it('restores a backup made with nested folders into a new, flat data directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'plinth-store-restore-'));
    try {
      // A data directory of the nested layout with one site, backed up by this version: the
      // backup is flat. Then the same backup with its blobs moved back to nested folders, as a
      // backup made before would hold them.
      const live = join(root, 'live');
      const page = Buffer.from('<h1>kept</h1>');
      const h = placeNested(join(live, 'blobs'), page);
      const liveStore = openStore({ dir: live });
      const committed = await liveStore.commitRevision({
        site: 'kept-site',
        create: { name: 'kept-site', plan: 'free', claimed: true },
        baseRevision: null,
        files: new Map([['/index.html', { sha256: h, size: page.byteLength, type: 'text/html' }]]),
        kind: 'deploy',
        createdBy: 'test',
      });
      expect(committed.ok).toBe(true);
      await liveStore.close();
      const backup = join(root, 'backup');
      await backupDataDir({ dataDir: live, target: backup });
      expect(blobLayoutOf(join(backup, 'blobs'))).toBe('flat');
      rmSync(join(backup, 'blobs'), { recursive: true });
      placeNested(join(backup, 'blobs'), page);

      const restored = join(root, 'restored');
      expect(await restoreDataDir({ backup, dataDir: restored })).toMatchObject({ sites: 1, blobs: 1 });
      expect(blobLayoutOf(join(restored, 'blobs'))).toBe('flat');
      const copy = openStore({ dir: restored });
      try {
        expect(copy.blobs.readSync(h)).toEqual(page);
      } finally {
        await copy.close();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
