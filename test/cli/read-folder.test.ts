import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { packFiles, readFolder } from '../../packages/cli/src/pack.js';
import { tempDir } from '../helpers/sites.js';

describe('reading a folder to deploy', () => {
  const dir = tempDir('plinth-read-folder-');
  const contents = new Map<string, Buffer>();
  for (let i = 0; i < 40; i++) {
    const path = `${i % 3 === 0 ? 'media/' : ''}f${String(i).padStart(2, '0')}.bin`;
    contents.set(path, randomBytes(1 + ((i * 7919) % 50_000)));
  }
  contents.set('empty.txt', Buffer.alloc(0));
  mkdirSync(join(dir, 'media'), { recursive: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  for (const [path, bytes] of contents) writeFileSync(join(dir, path), bytes);
  writeFileSync(join(dir, 'node_modules/x.js'), 'never sent');
  const expected = [...contents]
    .map(([path, bytes]) => ({ path, size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') }))
    .sort((a, b) => {
      // Path order as the walk gives it: a folder's entries sorted by name, folders where their name falls.
      return a.path < b.path ? -1 : 1;
    });

  it.each([
    ['on this thread', {}],
    ['on two threads, half of the bytes each', { twoThreadBytes: 0 }],
  ])('hashes every file %s, in path order, and skips what is never sent', async (_how, options) => {
    const files = await readFolder(dir, options);
    expect(files.map(({ path, size, sha256 }) => ({ path, size, sha256 }))).toEqual(expected);
    expect(files.every((file) => file.absolute === join(dir, file.path))).toBe(true);
  });
});

describe('packing files read into a buffer of the caller', () => {
  const dir = tempDir('plinth-pack-into-');
  afterEach(() => {
    vi.useRealTimers();
  });
  for (let i = 0; i < 12; i++) writeFileSync(join(dir, `f${i}.bin`), randomBytes(1000 + i * 3000));

  it.each([
    ['all fit', 1024 * 1024],
    ['only the first files fit (the rest are read as before)', 20_000],
    ['none fits', 10],
  ])('gives the same archive as reading each file on its own: %s', async (_name, roomBytes) => {
    // Tar headers carry the time they were made: the same clock for both.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-02T03:04:05Z') });
    const files = await readFolder(dir);
    for (const compress of [false, true]) {
      const plain = await packFiles(files, { compress });
      const into = await packFiles(files, { compress, readInto: Buffer.alloc(roomBytes) });
      expect(Buffer.concat(into.archive).equals(Buffer.concat(plain.archive))).toBe(true);
    }
  });

  it.each([
    ['grew', (path: string) => appendFileSync(path, 'more')],
    ['shrank', (path: string) => truncateSync(path, 10)],
  ])('refuses a file that %s since it was hashed', async (_how, change) => {
    const files = await readFolder(dir);
    change(join(dir, 'f3.bin'));
    await expect(packFiles(files, { compress: false, readInto: Buffer.alloc(1024 * 1024) })).rejects.toThrow(/f3\.bin changed while it was being deployed/);
  });
});
