// syncfs(2) from Node, which has no binding for it: `sync -f <dir>` flushes the filesystem that
// holds `dir`. One call makes a whole deploy's blobs durable, where an fsync per file and folder
// would wait on the disk a thousand times.
//
// Forking the server for it costs the calling thread a few milliseconds, which a large deploy pays
// once per part. A shell kept per thread to run it was tried and measured: no difference in the
// deploy time, and a thread that Piscina ends leaves its shell as a zombie nobody reaps.
import { execFile } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * statfs(2) types of filesystems that live in memory only (tmpfs, ramfs): they have no disk to
 * write to, so syncfs returns at once there and the fork for it (16 ms of the server's CPU on a
 * loaded machine, most of it copying the page tables of a large process) buys nothing.
 */
const IN_MEMORY_FILESYSTEMS: ReadonlySet<number> = new Set([0x01021994, 0x858458f6]);

/** Whether a filesystem of this statfs type has anything to flush. */
export function hasDiskBehind(statfsType: number): boolean {
  return !IN_MEMORY_FILESYSTEMS.has(statfsType);
}

/** Flushes everything written to the filesystem that holds `dir` to disk. */
export async function syncFilesystem(dir: string): Promise<void> {
  let type: number;
  try {
    type = (await statfs(dir)).type;
  } catch (err) {
    throw new Error(`cannot sync the filesystem of ${dir}: ${(err as Error).message}`, { cause: err });
  }
  if (hasDiskBehind(type)) await execFileAsync('sync', ['-f', dir]);
}
