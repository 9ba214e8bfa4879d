import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small tmpfs of its own, so a test can fill a file system for real without touching the
 * machine's disk. Needs the right to mount (root, as in CI); `mountTmpfs` returns the reason
 * when it cannot, and the caller skips saying so.
 */
export interface Tmpfs {
  dir: string;
  /** Unmounts (lazily if still busy) and removes the mount point; safe to call twice. */
  unmount(): void;
}

/** mount and umount run synchronously: bounded, so that one that hangs fails the test instead of its worker. */
const COMMAND_MS = 30_000;

export function mountTmpfs(sizeBytes: number): Tmpfs | { unavailable: string } {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir], { stdio: 'pipe', timeout: COMMAND_MS });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { unavailable: `cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})` };
  }
  let mounted = true;
  // The backstop when a hook times out before the teardown ran: never leave a mount behind.
  const atExit = (): void => unmount();
  process.once('exit', atExit);
  function unmount(): void {
    if (!mounted) return;
    mounted = false;
    process.off('exit', atExit);
    try {
      execFileSync('umount', [dir], { stdio: 'pipe', timeout: COMMAND_MS });
    } catch {
      // Something still holds a file open; detach now, the kernel frees it when released.
      execFileSync('umount', ['-l', dir], { stdio: 'pipe', timeout: COMMAND_MS });
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return { dir, unmount };
}

/** Bytes still free for an ordinary user of the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/**
 * Writes a filler file until no more than `leaveBytes` are free (0: until the disk is full).
 * Returns the filler's path; remove it to give the space back.
 */
export function fillDisk(dir: string, leaveBytes = 0, name = 'filler'): string {
  const path = join(dir, name);
  const fd = openSync(path, 'a');
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  // The loop runs synchronously: a file system that never fills (one whose statfs does not count
  // these writes) must end it with an error, not block the worker's timeouts for good.
  const { blocks, bsize } = statfsSync(dir);
  let written = 0;
  try {
    for (;;) {
      const room = freeBytes(dir) - leaveBytes;
      if (room <= 0) break;
      if (written > blocks * bsize) throw new Error(`${dir} took ${written} bytes and still says ${room} are free`);
      written += writeSync(fd, chunk, 0, Math.min(chunk.byteLength, room));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}
