import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import tarStream from 'tar-stream';

// Folders never worth uploading; the server would skip them anyway, this just sends less.
const NEVER_SENT = new Set(['.git', 'node_modules', '.service.json', '.gitignore', '.plinth-upload.json']);

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

/**
 * The folder's regular files in path order (links are not followed), hashed but not kept in
 * memory: a folder of any size costs one read buffer here. Synchronous reads on purpose: the
 * command has nothing else to do meanwhile, and for a folder of many small files they take
 * about half the time of the thread-pool round trips.
 */
export function readFolder(root: string): FolderFile[] {
  const files: FolderFile[] = [];
  const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  const walk = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (NEVER_SENT.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
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
        files.push({ path: relative(root, path).split(sep).join('/'), absolute: path, size, sha256: hash.digest('hex') });
      }
    }
  };
  walk(root);
  return files;
}

/**
 * Packs files into a .tar.gz in memory (or a plain .tar with `compress: false`, for contents
 * that do not shrink: gzip would only cost time). Each file is read from disk as it is packed.
 */
export async function packFiles(files: readonly FolderFile[], options: { compress?: boolean } = {}): Promise<PackedFolder> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const out = (options.compress === false ? pack : pack.pipe(createGzip({ level: 4 }))) as unknown as Readable;
  out.on('data', (chunk: Buffer) => void chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    out.on('end', resolve);
    out.on('error', reject);
    pack.on('error', reject);
  });
  let bytes = 0;
  for (const file of files) {
    const content = readFileSync(file.absolute);
    if (content.byteLength !== file.size) throw new Error(`${file.path} changed while it was being deployed; run the deploy again`);
    bytes += content.byteLength;
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: file.path, size: content.byteLength, mode: 0o644 }, content, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await done;
  return { archive: chunks, archiveBytes: chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0), files: files.length, bytes };
}

/** Packs a whole folder into a .tar.gz in memory. */
export async function packFolder(root: string): Promise<PackedFolder> {
  return packFiles(readFolder(root));
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
