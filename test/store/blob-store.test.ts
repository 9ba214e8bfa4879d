import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    expect(blobFiles()).toEqual([join(h.slice(0, 2), h.slice(2, 4), h)]);
    expect(store.blobs.pathOf(h)).toBe(join(dir, 'blobs', h.slice(0, 2), h.slice(2, 4), h));
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
