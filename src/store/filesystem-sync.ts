// syncfs(2) from Node, which has no binding for it: `sync -f <dir>` flushes the filesystem that
// holds `dir`. Forking this process for every call costs 6–15 ms of this thread's time (the whole
// address space is copied for the fork), once per deploy or per part of a large one; so each
// thread keeps one small shell that runs `sync -f` whenever it reads a line, and forks cheaply.
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

// `$1` is the folder, given once as an argument, so no path ever passes through the shell's parsing.
const LOOP = 'while read -r _; do if sync -f "$1"; then echo 0; else echo 1; fi; done';

interface Helper {
  child: ChildProcessByStdio<Writable, Readable, null>;
  waiting: Array<{ resolve: () => void; reject: (err: Error) => void }>;
}

// One helper per folder for this thread; it ends when the thread or process does (its stdin closes).
const helpers = new Map<string, Helper>();
// Set when no shell can be started here: every call then forks `sync` itself.
let noShell = false;

const forkSync = async (dir: string): Promise<void> => void (await execFileAsync('sync', ['-f', dir]));

/** Flushes everything written to the filesystem that holds `dir` to disk. */
export async function syncFilesystem(dir: string): Promise<void> {
  const helper = noShell ? undefined : (helpers.get(dir) ?? startHelper(dir));
  if (!helper) return forkSync(dir);
  await new Promise<void>((resolve, reject) => {
    if (helper.waiting.length === 0) setRef(helper, true);
    helper.waiting.push({ resolve, reject });
    helper.child.stdin.write('\n');
  });
}

function startHelper(dir: string): Helper | undefined {
  let child: Helper['child'];
  try {
    child = spawn('sh', ['-c', LOOP, 'plinth-sync', dir], { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  const helper: Helper = { child, waiting: [] };
  helpers.set(dir, helper);
  // A helper that could not start or has ended: the calls it owed fork `sync` themselves.
  const fail = (err?: NodeJS.ErrnoException): void => {
    if (helpers.get(dir) === helper) helpers.delete(dir);
    if (err?.code === 'ENOENT' && err.syscall?.startsWith('spawn')) noShell = true;
    for (const waiter of helper.waiting.splice(0)) forkSync(dir).then(waiter.resolve, waiter.reject);
  };
  child.on('error', fail);
  child.on('exit', () => fail());
  child.stdin.on('error', () => fail());
  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    pending += text;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const status = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const waiter = helper.waiting.shift();
      if (helper.waiting.length === 0) setRef(helper, false);
      if (status === '0') waiter?.resolve();
      else waiter?.reject(new Error(`sync -f ${dir} failed`));
    }
  });
  setRef(helper, false);
  return helper;
}

/** An idle helper must not keep the thread alive; one with a call in flight must. */
function setRef(helper: Helper, on: boolean): void {
  const handles = [helper.child, helper.child.stdin, helper.child.stdout] as Array<{ ref?: () => void; unref?: () => void }>;
  for (const handle of handles) (on ? handle.ref : handle.unref)?.call(handle);
}
