// Seeded mutations of valid archives: truncation, bit flips, overwritten ranges, duplicated slices,
// and length fields rewritten where each format keeps them (tar size fields, zip local and central
// sizes and name lengths, the end record, gzip's trailer). Same seed, same cases.
import { gunzipSync, gzipSync } from 'node:zlib';
import { tarBytes, tgzBytes, zipBytes, type ArchiveFiles } from '../helpers/archive-bytes.js';
import type { Random } from './site-model.js';

export type ArchiveKind = 'tar' | 'tgz' | 'zip';

export interface FuzzCase {
  kind: ArchiveKind;
  mutations: string[];
  bytes: Buffer;
}

const NAMES = [
  'index.html',
  'about.html',
  'css/site.css',
  'js/app.js',
  'img/logo.png',
  'deep/a/b/c/page.html',
  'data.json',
  'README.txt',
  '.env',
  'node_modules/x/index.js',
  'docs/guide.md',
];

/** A small valid site to start from (sometimes with a name long enough to need a pax record). */
export function seedFiles(random: Random): ArchiveFiles {
  const files: Array<[string, Buffer]> = [['index.html', Buffer.from(`<h1>fuzz ${random.int(0, 1e6)}</h1>`)]];
  const count = random.int(0, 5);
  for (let i = 0; i < count; i++) {
    const name = random.chance(0.1) ? `${'long-folder-name/'.repeat(random.int(7, 12))}file${i}.txt` : random.pick(NAMES);
    if (files.some(([existing]) => existing === name)) continue;
    const size = random.chance(0.2) ? random.int(2000, 60_000) : random.int(0, 300);
    files.push([name, random.chance(0.5) ? random.bytes(size) : Buffer.from('lorem ipsum dolor '.repeat(Math.ceil(size / 18)).slice(0, size))]);
  }
  return files;
}

export function buildArchive(kind: ArchiveKind, files: ArchiveFiles): Buffer {
  return kind === 'tar' ? tarBytes(files) : kind === 'tgz' ? tgzBytes(files) : zipBytes(files);
}

type Mutation = (bytes: Buffer, random: Random) => Buffer;

const truncate: Mutation = (bytes, random) => bytes.subarray(0, random.int(0, Math.max(0, bytes.length - 1)));

const flipBits: Mutation = (bytes, random) => {
  const out = Buffer.from(bytes);
  const flips = random.int(1, 8);
  for (let i = 0; i < flips && out.length > 0; i++) {
    const at = random.int(0, out.length - 1);
    out[at] = out[at]! ^ (1 << random.int(0, 7));
  }
  return out;
};

const overwrite: Mutation = (bytes, random) => {
  const out = Buffer.from(bytes);
  if (out.length === 0) return out;
  const at = random.int(0, out.length - 1);
  random.bytes(random.int(1, 16)).copy(out, at);
  return out;
};

const duplicateSlice: Mutation = (bytes, random) => {
  if (bytes.length === 0) return bytes;
  const start = random.int(0, bytes.length - 1);
  const slice = bytes.subarray(start, start + random.int(1, 1024));
  const at = random.int(0, bytes.length);
  return Buffer.concat([bytes.subarray(0, at), slice, bytes.subarray(at)]);
};

/** A number that is plausible, or absurd, for a length field. */
function lengthValue(random: Random, original: number): number {
  return random.pick(
    [0, 1, original - 1, original + 1, original * 2, 0x7fffffff, 0xffffffff, random.int(0, 0xffff), random.int(0, 0xffffffff)].map((n) =>
      Math.max(0, Math.min(0xffffffff, n)),
    ),
  );
}

/** tar: rewrite the size field (octal, or GNU base-256) of one header. */
const tarLength: Mutation = (bytes, random) => {
  const out = Buffer.from(bytes);
  const headers: number[] = [];
  for (let at = 0; at + 512 <= out.length; at += 512) if (out.toString('latin1', at + 257, at + 262) === 'ustar') headers.push(at);
  if (headers.length === 0) return flipBits(out, random);
  const at = random.pick(headers);
  const original = parseInt(out.toString('latin1', at + 124, at + 135), 8) || 0;
  if (random.chance(0.2)) {
    // GNU base-256: high bit set, the rest a big-endian number (10 GB here).
    out.fill(0, at + 124, at + 136);
    out[at + 124] = 0x80;
    out.writeUIntBE(10 * 1024 * 1024 * 1024, at + 130, 6);
  } else {
    out.write(`${lengthValue(random, original).toString(8).padStart(11, '0').slice(-11)}\0`, at + 124, 'latin1');
  }
  return out;
};

/** zip: rewrite a size, name length, count or offset in a local header, central entry or end record. */
const zipLength: Mutation = (bytes, random) => {
  const out = Buffer.from(bytes);
  const fields: Array<[offset: number, width: 2 | 4]> = [];
  for (let at = 0; at + 4 <= out.length; at++) {
    const signature = out.readUInt32LE(at);
    if (signature === 0x04034b50 && at + 30 <= out.length) fields.push([at + 18, 4], [at + 22, 4], [at + 26, 2], [at + 28, 2]);
    else if (signature === 0x02014b50 && at + 46 <= out.length) fields.push([at + 20, 4], [at + 24, 4], [at + 28, 2], [at + 30, 2], [at + 42, 4]);
    else if (signature === 0x06054b50 && at + 22 <= out.length) fields.push([at + 8, 2], [at + 10, 2], [at + 12, 4], [at + 16, 4]);
  }
  if (fields.length === 0) return flipBits(out, random);
  const [offset, width] = random.pick(fields);
  const original = width === 2 ? out.readUInt16LE(offset) : out.readUInt32LE(offset);
  const value = lengthValue(random, original);
  if (width === 2) out.writeUInt16LE(value & 0xffff, offset);
  else out.writeUInt32LE(value >>> 0, offset);
  return out;
};

/** gzip: rewrite the trailer's CRC or length. */
const gzipTrailer: Mutation = (bytes, random) => {
  const out = Buffer.from(bytes);
  if (out.length < 8) return out;
  const at = out.length - (random.chance(0.5) ? 4 : 8);
  out.writeUInt32LE(lengthValue(random, out.readUInt32LE(at)) >>> 0, at);
  return out;
};

const GENERIC: Array<[string, Mutation]> = [
  ['truncate', truncate],
  ['flip-bits', flipBits],
  ['overwrite', overwrite],
  ['duplicate-slice', duplicateSlice],
];

/** One fuzz case: a seed archive with one to three mutations. For tgz, the tar inside is mutated half the time. */
export function mutatedCase(random: Random): FuzzCase {
  const kind = random.pick<ArchiveKind>(['tar', 'tgz', 'zip']);
  const files = seedFiles(random);
  const mutations: string[] = [];
  const specific: Array<[string, Mutation]> = kind === 'zip' ? [['zip-length', zipLength]] : [['tar-length', tarLength]];
  const pick = (withGzip: boolean): [string, Mutation] => {
    const choices = [...GENERIC, ...specific, ...specific];
    if (withGzip) choices.push(['gzip-trailer', gzipTrailer]);
    return random.pick(choices);
  };
  const count = random.int(1, 3);
  if (kind === 'tgz' && random.chance(0.5)) {
    let tar = tarBytes(files);
    for (let i = 0; i < count; i++) {
      const [name, mutate] = pick(false);
      mutations.push(`inner-${name}`);
      tar = mutate(tar, random);
    }
    return { kind, mutations, bytes: gzipSync(tar) };
  }
  let bytes = buildArchive(kind, files);
  for (let i = 0; i < count; i++) {
    const [name, mutate] = pick(kind === 'tgz');
    mutations.push(name);
    bytes = mutate(bytes, random);
  }
  return { kind, mutations, bytes };
}

/** For reports: the uncompressed size of a gzip member, or undefined when it is not one. */
export function gunzippedSize(bytes: Buffer): number | undefined {
  try {
    return gunzipSync(bytes).length;
  } catch {
    return undefined;
  }
}
