// syncfs(2) from Node, which has no binding for it: `sync -f <dir>` flushes the filesystem that
// holds `dir`. One call makes a whole deploy's blobs durable, where an fsync per file and folder
// would wait on the disk a thousand times.
//
// Forking the server for it costs the calling thread a few milliseconds, which a large deploy pays
// once per part. A shell kept per thread to run it was tried and measured: no difference in the
// deploy time, and a thread that Piscina ends leaves its shell as a zombie nobody reaps.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Flushes everything written to the filesystem that holds `dir` to disk. */
export async function syncFilesystem(dir: string): Promise<void> {
  await execFileAsync('sync', ['-f', dir]);
}
