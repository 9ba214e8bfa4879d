import { statfsSync } from 'node:fs';
import { constants } from 'node:os';
import type { RootDatabase } from 'lmdb';

/** LMDB's own code for a map that is full (lmdb-js normally grows the map before it gets here). */
const MDB_MAP_FULL = -30792;

/**
 * Makes a failed commit (disk full, I/O error) an ordinary rejection of `transaction()`.
 *
 * lmdb-js reports one as `Error('Commit failed (see commitError for details)')` whose real
 * cause sits in a promise (`commitError`), and it also rejects the batch promise that every
 * `put`/`remove` inside the transaction returned. The store discards those (`void db.put(…)`
 * inside a transaction is the documented way to write there), so nothing handles that rejection,
 * and an unhandled rejection ends a Node process. Here each transaction marks its batch as
 * handled, and its caller gets the real error with an errno `code` (`ENOSPC`…), so the HTTP edge
 * can answer 503 instead of 500. Nothing is committed by a failed transaction; LMDB stays as it was.
 */
export function guardCommitFailures(env: RootDatabase, dir: string): void {
  const transaction = env.transaction.bind(env);
  env.transaction = (<T>(callback: () => T): Promise<T> =>
    transaction(() => {
      const result = callback();
      // The batch promise every write in `callback` returned. Both handlers: lmdb-js's thenable
      // calls the first without checking it when it waits on the last write.
      env.committed.then(
        () => undefined,
        () => undefined,
      );
      return result;
    }).catch(async (err: unknown) => {
      throw await commitCause(err, dir);
    })) as RootDatabase['transaction'];
}

/**
 * The error behind lmdb-js's "Commit failed", with a string `code` where the errno has a name.
 * LMDB reports a short write as EIO; when the file system is full at that moment (as a nearly
 * full disk makes a write short), it is reported as ENOSPC, which is what it was.
 */
export async function commitCause(err: unknown, dir: string): Promise<unknown> {
  const pending = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (pending === undefined) return err;
  let cause: unknown = err;
  try {
    await pending;
  } catch (real) {
    cause = real;
  }
  const errno = (cause as { code?: unknown }).code;
  const message = cause instanceof Error ? cause.message : String(cause);
  let code = errnoName(errno);
  if (code === 'EIO' && isNearlyFull(dir)) code = 'ENOSPC';
  return Object.assign(new Error(`LMDB commit failed: ${message}`, { cause: err }), { code, errno });
}

/** Less room left than LMDB writes in one commit of a large deploy. */
const NEARLY_FULL_BYTES = 64 * 1024 * 1024;

function isNearlyFull(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

function errnoName(errno: unknown): string | undefined {
  if (typeof errno !== 'number') return typeof errno === 'string' ? errno : undefined;
  if (errno === MDB_MAP_FULL) return 'MDB_MAP_FULL';
  for (const [name, value] of Object.entries(constants.errno)) if (value === errno || value === -errno) return name;
  return undefined;
}
