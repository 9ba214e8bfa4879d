import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { createGzip } from 'node:zlib';
import tarStream from 'tar-stream';

// Folders never worth uploading; the server would skip them anyway, this just sends less.
const NEVER_SENT = new Set(['.git', 'node_modules', '.service.json', '.gitignore']);

export interface PackedFolder {
  archive: Buffer;
  files: number;
  /** Bytes of the files before compression. */
  bytes: number;
}

/** Packs a folder into a .tar.gz in memory (regular files only; links are not followed). */
export async function packFolder(root: string): Promise<PackedFolder> {
  let files = 0;
  let bytes = 0;
  const pack = tarStream.pack();
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    gzip.on('end', resolve);
    gzip.on('error', reject);
    pack.on('error', reject);
  });
  pack.pipe(gzip);

  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (NEVER_SENT.has(entry.name)) continue;
      const path = join(dir, entry.name);
      const info = await lstat(path);
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) {
        const name = relative(root, path).split(sep).join('/');
        const content = await readFile(path);
        files++;
        bytes += content.byteLength;
        await new Promise<void>((resolve, reject) => pack.entry({ name, size: content.byteLength, mode: 0o644 }, content, (err) => (err ? reject(err) : resolve())));
      }
    }
  };
  await walk(root);
  pack.finalize();
  await done;
  return { archive: Buffer.concat(chunks), files, bytes };
}
