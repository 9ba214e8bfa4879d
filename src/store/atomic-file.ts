import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface TempFile {
  path: string;
  sha256: string;
  size: number;
}

/**
 * Streams `source` into a fresh file under `tmpDir`, hashing on the way, and fsyncs it. The file
 * only ever lives under `tmpDir`, so a writer that dies mid-way leaves nothing that looks like a
 * blob; `sweepTemp` reclaims it.
 */
export async function writeTemp(tmpDir: string, source: AsyncIterable<Uint8Array> | Uint8Array, durable = true): Promise<TempFile> {
  // The writer's pid leads the name: once that process is gone, the file is known to be garbage.
  const path = join(tmpDir, `${process.pid}-${randomBytes(12).toString('hex')}.tmp`);
  const hash = createHash('sha256');
  let size = 0;
  const handle = await open(path, 'wx', 0o644);
  try {
    const chunks = source instanceof Uint8Array ? [source] : source;
    for await (const chunk of chunks) {
      hash.update(chunk);
      size += chunk.byteLength;
      await writeAll(handle, chunk);
    }
    if (durable) await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(path).catch(() => undefined);
    throw err;
  }
  await handle.close();
  return { path, sha256: hash.digest('hex'), size };
}

/**
 * Moves a finished temp file to `finalPath` unless something is already there. Content is
 * addressed by hash, so an existing file has the same bytes; if two writers race past the check,
 * the second rename swaps in identical bytes atomically, which readers cannot tell apart.
 * The directory is fsynced so that a committed index never points at a rename lost in a crash
 * (unless `durable` is false, when the caller syncs the whole batch itself).
 */
export async function publishTemp(tempPath: string, finalPath: string, durable = true): Promise<boolean> {
  if (existsSync(finalPath)) {
    await unlink(tempPath);
    return false;
  }
  const dir = dirname(finalPath);
  const created = await mkdir(dir, { recursive: true });
  await rename(tempPath, finalPath);
  if (!durable) return true;
  await fsyncDir(dir);
  if (created !== undefined) {
    // New fan-out directories are themselves entries that must survive a crash.
    for (let d = dir; d !== created && d !== dirname(d); d = dirname(d)) await fsyncDir(dirname(d));
    await fsyncDir(dirname(created));
  }
  return true;
}

async function writeAll(handle: Awaited<ReturnType<typeof open>>, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset);
    offset += bytesWritten;
  }
}

/** Syncs a folder's entries (a rename or a new file in it survives a crash). */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A file's size, or undefined when there is no such file (any other failure is thrown). */
export async function sizeIfExists(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
