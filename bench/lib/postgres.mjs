// A private PostgreSQL server: Debian's `postgresql` binaries, a fresh cluster in a temporary
// directory, listening on a free loopback port only. Shared by the cluster tests (through
// test/helpers/postgres.ts, which adds types and a per-file fixture) and the cluster bench, which runs on plain node.
// initdb refuses to run as root, so as root the server runs as the `postgres` user (`runuser`).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childrenOf, freePort } from './proc.mjs';

const VERSIONS_DIR = '/usr/lib/postgresql';

/** The directory of the newest installed server binaries (Debian keeps one per major version), or undefined. */
export function postgresBinDir() {
  const versions = existsSync(VERSIONS_DIR) ? readdirSync(VERSIONS_DIR).filter((name) => /^\d+$/.test(name)) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => join(VERSIONS_DIR, version, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
}

/** Whether this machine can run a private PostgreSQL. */
export function hasPostgres() {
  const bin = postgresBinDir();
  return bin !== undefined && readdirSync(bin).includes('postgres');
}

const asRoot = process.getuid?.() === 0;
/** A command as the user who owns the cluster. */
const asOwner = (command, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]);

function run(command, args) {
  const [cmd, argv] = asOwner(command, args);
  const result = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
}

/**
 * Starts the server with one database, `plinth`. Durability is off (fsync, synchronous commit,
 * full page writes): the data is thrown away at the end, and tests and benches measure Plinth.
 * Resolves { url, port, createDatabase(name), stop(), pause(), resume(), freeze(), thaw() }.
 */
export async function startPostgres() {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (.ci/run does)');
  const dir = mkdtempSync(join(tmpdir(), 'plinth-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  run(join(bin, 'initdb'), ['-D', data, '-U', 'plinth', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  let child;

  const start = async () => {
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
    child.stderr.on('data', (chunk) => (log += chunk.toString()));
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ready = spawnSync(join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)]);
      if (ready.status === 0) return;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`PostgreSQL did not start: ${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stopChild = async () => {
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
  const createDatabase = async (name) => {
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
    // A hung server rather than a stopped one: every process of it stopped (SIGSTOP), so
    // connections are still accepted by the kernel and nothing ever answers.
    pids: () => serverPids(data),
    freeze: () => signalServer(data, 'SIGSTOP'),
    thaw() {
      signalServer(data, 'SIGCONT');
      // As root the server runs under runuser, which stops itself when its child stops.
      child?.kill('SIGCONT');
    },
  };
}

/** Sends `signal` to the postmaster of the cluster in `data` and to every process it started. */
function signalServer(data, signal) {
  const [postmaster, ...children] = serverPids(data);
  // The postmaster first when stopping (it would start new backends), last when resuming.
  const order = signal === 'SIGSTOP' ? [postmaster, ...children] : [...children, postmaster];
  for (const pid of order) process.kill(pid, signal);
}

/** The postmaster of the cluster in `data`, then every process it started (backends, writers). */
function serverPids(data) {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return [postmaster, ...childrenOf(postmaster)];
}
