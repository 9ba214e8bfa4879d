import { statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';

/**
 * One server per data directory. Two would each sweep what they think is theirs (the upload spool
 * is emptied at start, temp files of "dead" writers are removed) and each keep caches the other
 * never invalidates. `plinth admin` and backups open the directory beside a running server, as
 * LMDB allows; only a second server is refused.
 *
 * The lock is a Unix socket in Linux's abstract namespace, named after the directory's device and
 * inode: binding it is atomic and exclusive, and the kernel releases it when the process ends
 * however it ends, so a crash leaves no stale lock to clear by hand. It holds for processes that
 * share a network namespace (one machine, one container); a data directory shared between
 * containers is not seen. A second server connects to it to learn who holds it.
 */

export interface DataDirLock {
  /** What a second server is told about this one (its port, once it listens). */
  describe(holder: { port?: number }): void;
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  port?: number;
}

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const { dev, ino } = statSync(dir);
  const name = `\0plinth-data-dir:${dev}:${ino}`;
  let holder: Holder = { pid: process.pid };
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(JSON.stringify(holder));
  });
  try {
    await listen(server, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    const other = await askHolder(name);
    const who = other === undefined ? 'Another Plinth server' : `Another Plinth server (pid ${other.pid}${other.port ? `, port ${other.port}` : ''})`;
    throw new Error(
      `${who} is running on the data directory ${dir} (PLINTH_DATA_DIR): two servers on one directory would undo each other's work. Stop it first, or give this one its own PLINTH_DATA_DIR; \`plinth admin\` commands work beside a running server.`,
    );
  }
  // Never what keeps the process alive.
  server.unref();
  return {
    describe(more) {
      holder = { ...holder, ...more };
    },
    release: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(name, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Who holds the lock, as it says; undefined if it does not say within a second. */
function askHolder(name: string): Promise<Holder | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(name);
    const done = (holder: Holder | undefined): void => {
      socket.destroy();
      resolve(holder);
    };
    socket.setTimeout(1000, () => done(undefined));
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => {
      try {
        const parsed = JSON.parse(text) as Holder;
        done(Number.isInteger(parsed.pid) ? parsed : undefined);
      } catch {
        done(undefined);
      }
    });
    socket.on('error', () => done(undefined));
  });
}
