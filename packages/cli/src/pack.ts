import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createGzip } from 'node:zlib';
import { isStateFile } from './state.js';
import { END_OF_ARCHIVE, entryHeaders, padding } from './tar.js';

// Folders never worth uploading; the server would skip them anyway, this just sends less. The
// state file (and one left half-written) holds tokens: it never leaves the machine.
const NEVER_SENT = new Set(['.git', 'node_modules', '.gitignore', '.plinth-upload.json']);

export interface FolderFile {
  /** Path relative to the folder, with `/`. */
  path: string;
  /** Where it is on disk; the bytes are read again only when packed. */
  absolute: string;
  size: number;
  sha256: string;
}

export interface PackedFolder {
  /** The archive's bytes in the pieces the packer made (never copied into one buffer). */
  archive: Buffer[];
  archiveBytes: number;
  files: number;
  /** Bytes of the files before compression. */
  bytes: number;
}

const HASH_CHUNK_BYTES = 1024 * 1024;
/** A folder of more bytes than this is hashed on two threads; starting one costs about 30 ms. */
export const TWO_THREAD_HASH_BYTES = 64 * 1024 * 1024;

/**
 * Hashes files one after another with one read buffer. Synchronous reads on purpose: the command
 * has nothing else to do meanwhile, and for a folder of many small files they take about half the
 * time of the thread-pool round trips.
 */
function hashFilesSync(paths: readonly string[]): Array<{ size: number; sha256: string }> {
  const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  return paths.map((path) => {
    const hash = createHash('sha256');
    let size = 0;
    const fd = openSync(path, 'r');
    try {
      for (let read = readSync(fd, buffer, 0, buffer.byteLength, null); read > 0; read = readSync(fd, buffer, 0, buffer.byteLength, null)) {
        hash.update(buffer.subarray(0, read));
        size += read;
      }
    } finally {
      closeSync(fd);
    }
    return { size, sha256: hash.digest('hex') };
  });
}

// The same loop for the second thread, as plain JavaScript source: a worker runs it as given,
// also where this module itself runs as TypeScript (the tests).
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { closeSync, openSync, readSync } = require('node:fs');
const buffer = Buffer.allocUnsafe(${HASH_CHUNK_BYTES});
parentPort.postMessage(workerData.map((path) => {
  const hash = createHash('sha256');
  let size = 0;
  const fd = openSync(path, 'r');
  try {
    for (let read = readSync(fd, buffer, 0, buffer.length, null); read > 0; read = readSync(fd, buffer, 0, buffer.length, null)) {
      hash.update(buffer.subarray(0, read));
      size += read;
    }
  } finally {
    closeSync(fd);
  }
  return { size, sha256: hash.digest('hex') };
}));
`;

/** Hashes `paths` on a second thread. */
function hashFilesOnWorker(paths: readonly string[]): Promise<Array<{ size: number; sha256: string }>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(HASH_WORKER, { eval: true, workerData: paths });
    worker.once('message', (hashed: Array<{ size: number; sha256: string }>) => {
      resolve(hashed);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`The hashing thread ended (exit code ${code}) before it answered.`)));
  });
}

/**
 * The folder's regular files in path order (links are not followed), hashed but not kept in
 * memory: a folder of any size costs one read buffer per thread here. A large folder is hashed
 * on two threads, half of its bytes each: the service waits for the hashes before any upload.
 */
export async function readFolder(root: string, options: { twoThreadBytes?: number } = {}): Promise<FolderFile[]> {
  const found: Array<{ path: string; absolute: string; statSize: number }> = [];
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (NEVER_SENT.has(entry.name) || isStateFile(entry.name)) continue;
      const absolute = join(dir, entry.name);
      if (entry.isDirectory()) walk(absolute);
      else if (entry.isFile()) found.push({ path: relative(root, absolute).split(sep).join('/'), absolute, statSize: statSync(absolute).size });
    }
  };
  walk(root);
  const total = found.reduce((sum, file) => sum + file.statSize, 0);
  // The first files up to half the bytes go to the second thread; this one hashes the rest.
  let split = 0;
  if (total > (options.twoThreadBytes ?? TWO_THREAD_HASH_BYTES)) {
    for (let bytes = 0; split < found.length && bytes < total / 2; split++) bytes += found[split]!.statSize;
  }
  const elsewhere = split > 0 ? hashFilesOnWorker(found.slice(0, split).map((file) => file.absolute)) : Promise.resolve([]);
  // A failure here must not leave the other thread's promise unobserved.
  elsewhere.catch(() => undefined);
  const here = hashFilesSync(found.slice(split).map((file) => file.absolute));
  const hashed = [...(await elsewhere), ...here];
  return found.map((file, i) => ({ path: file.path, absolute: file.absolute, ...hashed[i]! }));
}

export interface PackOptions {
  /** `false`: a plain .tar, for contents that do not shrink (gzip would only cost time). */
  compress?: boolean;
  /**
   * Memory to read the files into when they fit, instead of a new buffer per file; the archive
   * refers to it until it is sent, so it must not be used again before then.
   */
  readInto?: Buffer;
}

/**
 * Packs files into a .tar.gz in memory (or a plain .tar with `compress: false`). Each file is
 * read from disk as it is packed.
 */
export async function packFiles(files: readonly FolderFile[], options: PackOptions = {}): Promise<PackedFolder> {
  const chunks: Buffer[] = [];
  const gzip = options.compress === false ? undefined : createGzip({ level: 4 });
  gzip?.on('data', (chunk: Buffer) => void chunks.push(chunk));
  const ended = gzip ? once(gzip, 'end') : Promise.resolve();
  // Each file is read as it is packed; gzip's backpressure keeps at most a few of them in memory.
  const add = async (chunk: Buffer): Promise<void> => {
    if (chunk.byteLength === 0) return;
    if (!gzip) return void chunks.push(chunk);
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  };
  const mtime = Math.floor(Date.now() / 1000);
  let bytes = 0;
  const room = options.readInto;
  for (const file of files) {
    const content = room && bytes + file.size <= room.byteLength ? readWhole(file, room.subarray(bytes, bytes + file.size)) : readFileSync(file.absolute);
    if (content.byteLength !== file.size) throw changedWhileDeploying(file);
    bytes += content.byteLength;
    for (const header of entryHeaders(file.path, content.byteLength, mtime)) await add(header);
    await add(content);
    await add(padding(content.byteLength));
  }
  await add(END_OF_ARCHIVE);
  gzip?.end();
  await ended;
  return { archive: chunks, archiveBytes: chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0), files: files.length, bytes };
}

// One byte read past a file's hashed size tells that it grew.
const PAST_END = Buffer.alloc(1);

/** Reads a file of the size it was hashed at into `into` (exactly that long). */
function readWhole(file: FolderFile, into: Buffer): Buffer {
  const fd = openSync(file.absolute, 'r');
  try {
    let filled = 0;
    while (filled < into.byteLength) {
      const read = readSync(fd, into, filled, into.byteLength - filled, null);
      if (read === 0) throw changedWhileDeploying(file);
      filled += read;
    }
    if (readSync(fd, PAST_END, 0, 1, null) > 0) throw changedWhileDeploying(file);
  } finally {
    closeSync(fd);
  }
  return into;
}

const changedWhileDeploying = (file: FolderFile): Error => new Error(`${file.path} changed while it was being deployed; run the deploy again`);

/** Packs a whole folder into a .tar.gz in memory. */
export async function packFolder(root: string): Promise<PackedFolder> {
  return packFiles(await readFolder(root));
}

/** Formats that are compressed already: gzip would spend time for nothing on them. */
const COMPRESSED = new Set([
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.webp',
  '.avif',
  '.ico',
  '.woff',
  '.woff2',
  '.mp4',
  '.webm',
  '.mov',
  '.mp3',
  '.ogg',
  '.m4a',
  '.zip',
  '.gz',
  '.tgz',
  '.br',
  '.zst',
  '.xz',
  '.bz2',
  '.7z',
  '.pdf',
]);

export function isCompressible(path: string): boolean {
  return !COMPRESSED.has(extname(path).toLowerCase());
}

/**
 * Splits files into upload parts of at most `partBytes` of content each (a larger file goes
 * alone), compressible and incompressible contents apart so each part is packed the right way.
 */
export function splitIntoParts(files: readonly FolderFile[], partBytes: number): Array<{ files: FolderFile[]; bytes: number; compress: boolean }> {
  const parts: Array<{ files: FolderFile[]; bytes: number; compress: boolean }> = [];
  for (const compress of [true, false]) {
    let current: { files: FolderFile[]; bytes: number; compress: boolean } | undefined;
    for (const file of files) {
      if (isCompressible(file.path) !== compress) continue;
      if (current && current.bytes + file.size > partBytes) current = undefined;
      if (!current) {
        current = { files: [], bytes: 0, compress };
        parts.push(current);
      }
      current.files.push(file);
      current.bytes += file.size;
    }
  }
  return parts;
}
