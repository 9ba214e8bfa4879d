import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFolder } from '../../src/cli/pack.js';
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
