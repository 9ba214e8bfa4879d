// syncfs(2) from Node, which has no binding for it: `sync -f <dir>` flushes the filesystem that
// holds `dir`. One call makes a whole deploy's blobs durable, where an fsync per file and folder
// would wait on the disk a thousand times.
//
// Forking the server to run `sync` costs the calling thread about 20–30 ms of CPU on a server of
// 250 MiB (copying its page tables), more than the syncfs of a small deploy itself. So a server
// keeps one small shell per data directory (`createSyncHelper`) that runs `sync -f` when asked
// over a pipe; it is started and reaped by a thread that lives as long as the ingest pool (a
// shell kept per ingest thread left a zombie each time Piscina ended the thread). Without one,
// `syncFilesystem` forks as before.
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { statfs } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs syncfs(2) on the filesystem that holds `dir`. */
export type RunSync = (dir: string) => Promise<void>;

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

/** `sync -f` in a fork of this process. */
export const forkSync: RunSync = async (dir) => {
  await execFileAsync('sync', ['-f', dir]);
};

/** Flushes everything written to the filesystem that holds `dir` to disk (through `run`). */
export async function syncFilesystem(dir: string, run: RunSync = forkSync): Promise<void> {
  let type: number;
  try {
    type = (await statfs(dir)).type;
  } catch (err) {
    throw new Error(`cannot sync the filesystem of ${dir}: ${(err as Error).message}`, { cause: err });
  }
  if (hasDiskBehind(type)) await run(dir);
}

export interface SyncHelper {
  /** syncfs of `dir`'s filesystem, by a shell kept for `dir`; resolves once it is on disk. */
  sync: RunSync;
  /** Ends the shells and waits until they have exited (reaped: no zombie). */
  close(): Promise<void>;
  /** Process ids of the shells running (for tests). */
  pids(): number[];
}

/**
 * The shell reads one line per request and answers `ok`, or `failed: ` and what `sync` said (on
 * one line: unquoted, its words are joined by spaces), once `sync -f "$1"` returned.
 * It ends at end of input: when the helper closes its stdin, or when this process dies and the
 * kernel closes the pipe, so it never outlives the server.
 */
const SHELL_LOOP = 'set -f; while read -r _; do if err=$(sync -f -- "$1" 2>&1); then echo ok; else echo "failed: "$err; fi; done';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

type Shell = ChildProcessByStdio<Writable, Readable, null>;

/** One shell for one directory, with requests that arrive during a sync sharing the next one. */
function createShellSync(dir: string, onExit: () => void): { pid: number | undefined; sync: () => Promise<void>; close: () => Promise<void> } {
  const shell: Shell = spawn('sh', ['-c', SHELL_LOOP, 'plinth-sync', dir], { stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => shell.once('close', () => resolve()));
  let running: Waiter[] | undefined;
  let next: Waiter[] = [];
  let failure: Error | undefined;
  let answer = '';

  // Idle, the shell does not keep this thread's event loop alive; a request does, until answered.
  function hold(busy: boolean): void {
    for (const handle of [shell, shell.stdin as Socket, shell.stdout as Socket]) {
      if (busy) handle.ref();
      else handle.unref();
    }
  }

  function start(): void {
    running = next;
    next = [];
    hold(true);
    shell.stdin.write('\n');
  }

  function settle(error?: Error): void {
    const done = running ?? [];
    running = undefined;
    for (const waiter of done) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
    if (next.length > 0 && failure === undefined) start();
    else hold(false);
  }

  function fail(err: Error): void {
    if (failure !== undefined) return;
    failure = err;
    onExit();
    const waiting = [...(running ?? []), ...next];
    running = undefined;
    next = [];
    for (const waiter of waiting) waiter.reject(err);
  }

  hold(false);
  shell.stdout.setEncoding('utf8');
  shell.stdout.on('data', (chunk: string) => {
    answer += chunk;
    let end: number;
    while ((end = answer.indexOf('\n')) >= 0) {
      const line = answer.slice(0, end);
      answer = answer.slice(end + 1);
      settle(line === 'ok' ? undefined : new Error(`sync -f ${dir} ${line}`));
    }
  });
  shell.once('error', (err) => fail(new Error(`cannot run the sync helper for ${dir}: ${err.message}`, { cause: err })));
  shell.once('close', (code, signal) => fail(new Error(`the sync helper for ${dir} ended (${signal ?? code})`)));
  // A write after the shell died: its 'close' reports it.
  shell.stdin.on('error', () => undefined);

  return {
    pid: shell.pid,
    sync: () =>
      new Promise<void>((resolve, reject) => {
        if (failure !== undefined) return reject(failure);
        // Writes made before this call must be covered: a sync already under way may have
        // started before them, so this waits for the next one.
        next.push({ resolve, reject });
        if (running === undefined) start();
      }),
    close: async () => {
      hold(true);
      shell.stdin.end();
      await exited;
    },
  };
}

export function createSyncHelper(): SyncHelper {
  const shells = new Map<string, ReturnType<typeof createShellSync>>();
  let closed = false;

  function shellFor(dir: string): ReturnType<typeof createShellSync> {
    let shell = shells.get(dir);
    if (!shell) {
      // A shell that ended (killed from outside) is dropped, and the next request starts another.
      const made = createShellSync(dir, () => {
        if (shells.get(dir) === made) shells.delete(dir);
      });
      shell = made;
      shells.set(dir, shell);
    }
    return shell;
  }

  return {
    sync: (dir) => (closed ? forkSync(dir) : shellFor(dir).sync()),
    close: async () => {
      closed = true;
      const all = [...shells.values()];
      shells.clear();
      await Promise.all(all.map((shell) => shell.close()));
    },
    pids: () => [...shells.values()].flatMap((shell) => (shell.pid === undefined ? [] : [shell.pid])),
  };
}
