import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private PostgreSQL server for a test file: Debian's `postgresql` binaries, a fresh cluster in
 * a temporary directory, listening on a free loopback port only. initdb refuses to run as root,
 * so when the tests run as root the server runs as the `postgres` user (`runuser`).
 */
export interface TestPostgres {
  /** `postgres://…@127.0.0.1:<port>/<database>` for a database of its own. */
  url: string;
  port: number;
  /** A new, empty database on the same server. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown) and removes its files. */
  stop(): Promise<void>;
  /** Stops the server but keeps its files, to start it again (an outage). */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

export function postgresBinDir(): string | undefined {
  return BIN_DIRS.find((dir) => existsSync(join(dir, 'initdb')));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const asRoot = process.getuid?.() === 0;
/** A command as the user who owns the cluster. */
const asOwner = (command: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]);

function run(command: string, args: string[]): void {
  const [cmd, argv] = asOwner(command, args);
  const result = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (.ci/run does)');
  const dir = mkdtempSync(join(tmpdir(), 'plinth-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  run(join(bin, 'initdb'), ['-D', data, '-U', 'plinth', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    const [cmd, argv] = asOwner(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ]);
    child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ready = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]);
      if (ready.status === 0) return;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`PostgreSQL did not start: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stopChild = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    // A fast shutdown: open connections are cut, nothing waits for clients to leave.
    run(join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'fast', '-w']);
    await exited;
  };

  await start();
  const base = `postgres://plinth@127.0.0.1:${port}`;
  const createDatabase = async (name: string): Promise<string> => {
    run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'plinth', name]);
    return `${base}/${name}`;
  };
  const url = await createDatabase('plinth');
  return {
    url,
    port,
    createDatabase,
    async stop() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
    pause: stopChild,
    resume: start,
  };
}

/** Whether this machine can run the PostgreSQL tests. */
export function hasPostgres(): boolean {
  const bin = postgresBinDir();
  return bin !== undefined && readdirSync(bin).includes('postgres');
}
