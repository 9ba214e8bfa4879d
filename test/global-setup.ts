import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * vitest's global set-up: many tests run the built server, CLI and workers from dist/, so a run
 * first compiles src/ when dist/ is missing or older than it — the same check as `npm start`'s
 * (scripts/build-if-stale.mjs). A test never runs against code older than the tree it tests.
 *
 * It also gives the run a folder on tmpfs, when the machine has one, for the data directories of
 * the servers the tests start in-process (test/helpers/server.ts): LMDB syncs each write
 * transaction and the blob store makes a deploy durable with a syncfs(2) of the whole filesystem,
 * which on a disk shared with other work waits for everyone's writes; those waits were most of an
 * HTTP test's time (the authorization matrix: 178 s on /tmp, 48 s on /dev/shm, same machine and
 * load). The files and the syncs are the same ones; only the medium differs. Other temporary
 * folders stay where TMPDIR says (tar and the CLI list a folder in the order its filesystem gives,
 * which a guide's example output shows), and the projects that fill disks and time the wall clock
 * keep their servers on the disk (vitest.config.ts).
 */

const TMPFS = '/dev/shm';
const PREFIX = 'plinth-tests-';

function buildDistIfStale(): void {
  const script = fileURLToPath(new URL('../scripts/build-if-stale.mjs', import.meta.url));
  const run = spawnSync(process.execPath, [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) throw new Error(`dist/ is older than src/ and the build failed (exit ${run.status ?? run.signal})`);
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** A folder on tmpfs for this run, after removing those of earlier runs whose process is gone (a run that was interrupted). */
function tmpfsScratch(): string | undefined {
  try {
    accessSync(TMPFS, constants.W_OK);
  } catch {
    return undefined;
  }
  for (const name of readdirSync(TMPFS)) {
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && pid > 0 && !isRunning(pid)) rmSync(join(TMPFS, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(TMPFS, `${PREFIX}${process.pid}-`));
}

export default function setup(): () => void {
  buildDistIfStale();
  const scratch = tmpfsScratch();
  // Workers are started after this, with this process's environment.
  if (scratch) process.env.TEST_DATA_ROOT = scratch;
  return () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
}
