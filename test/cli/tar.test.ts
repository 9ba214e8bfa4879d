import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { packFiles, readFolder } from '../../packages/cli/src/pack.js';
import { tempDir } from '../helpers/sites.js';

/**
 * The CLI writes its archives itself (it has no dependencies): what it writes must read back,
 * name for name and byte for byte, with the reader the server uses (tar-stream) and with GNU tar.
 */

const NAMES = [
  'index.html',
  'empty.txt',
  'css/site.css',
  // Exactly ustar's 100-byte name field, then past it: a pax header carries the path.
  `${'n'.repeat(96)}.txt`,
  `deep/${'d'.repeat(60)}/${'e'.repeat(60)}/page.html`,
  // Not ASCII: a pax header too, in UTF-8.
  'café/ünïcode.html',
  'big.bin',
];

function contentOf(name: string): Buffer {
  if (name === 'empty.txt') return Buffer.alloc(0);
  if (name === 'big.bin') return randomBytes(700_000);
  return Buffer.from(`<p>${name}</p>\n`.repeat(3));
}

async function readBack(archive: Buffer, gzipped: boolean): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const extract = tarStream.extract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
    stream.on('end', () => {
      expect(header.type).toBe('file');
      found.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  const source = Readable.from([archive]);
  (gzipped ? source.pipe(createGunzip()) : source).pipe(extract);
  await done;
  return found;
}

describe("the CLI's tar writer", () => {
  const dir = tempDir('plinth-tar-');
  const contents = new Map(NAMES.map((name) => [name, contentOf(name)]));
  for (const [name, bytes] of contents) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }

  it.each([
    ['plain', false],
    ['gzipped', true],
  ])('writes a %s archive that tar-stream reads back whole', async (_how, compress) => {
    const packed = await packFiles(await readFolder(dir), { compress });
    const archive = Buffer.concat(packed.archive);
    expect(archive.byteLength).toBe(packed.archiveBytes);
    if (!compress) expect(archive.byteLength % 512).toBe(0);
    const found = await readBack(archive, compress);
    expect([...found.keys()].sort()).toEqual([...contents.keys()].sort());
    for (const [name, bytes] of contents) expect(found.get(name)!.equals(bytes), name).toBe(true);
  });

  it('writes what GNU tar lists with the same names and sizes', async () => {
    const packed = await packFiles(await readFolder(dir), { compress: false });
    const archive = join(tempDir('plinth-tar-out-'), 'site.tar');
    writeFileSync(archive, Buffer.concat(packed.archive));
    const listed = execFileSync('tar', ['-tvf', archive], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    for (const [name, bytes] of contents)
      expect(listed, name).toMatch(new RegExp(`\\s${bytes.byteLength}\\s.*\\s${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
  });
});
