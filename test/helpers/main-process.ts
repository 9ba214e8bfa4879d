import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built service, run as operators run it (`npm test` builds first). */
export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface MainProcess {
  child: ChildProcess;
  port: number;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** What was written to stdout alone (JSON lines). */
  stdout(): string;
  /** Resolves with the exit code and signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Quiet, single-purpose defaults for tests; `env` overrides them. */
export function mainEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    PLINTH_PORT: '0',
    PLINTH_THREADS: '1',
    PLINTH_INGEST_THREADS: '1',
    PLINTH_DATA_DIR: dataDir,
    PLINTH_LISTEN_HOST: '127.0.0.1',
    PLINTH_LOG_LEVEL: 'warn',
    PLINTH_ANON_SITES_PER_HOUR: '0',
    PLINTH_ANON_DEPLOYS_PER_HOUR: '0',
    PLINTH_API_RATE_PER_CREDENTIAL: '0',
    PLINTH_API_RATE_PER_NETWORK: '0',
    ...env,
  };
}

export interface StartMainOptions {
  timeoutMs?: number;
  /** The command line, as a service manager would run it (default: this Node on dist/main.js). */
  command?: readonly string[];
  cwd?: string;
  /** `env` alone, as systemd gives a service, rather than on top of this process's environment. */
  cleanEnv?: boolean;
  /** Called with everything written so far, stdout and stderr, at each write before the banner. */
  whileStarting?: (output: string, child: ChildProcess) => void;
}

/** Starts `node dist/main.js` and resolves once it prints the port it listens on. */
export function startMain(env: Record<string, string>, options: StartMainOptions = {}): Promise<MainProcess> {
  if (!existsSync(MAIN)) throw new Error('run `npm run build` first (npm test does)');
  const [command, ...args] = options.command ?? [process.execPath, MAIN];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, {
      env: options.cleanEnv ? env : { ...process.env, ...env },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stdout = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.on('exit', (code, signal) => done({ code, signal }));
    });
    // No banner in time: the process is ended, and the start refused once it has exited, so a
    // failed start leaves nothing running.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = /running on port (\d+)/.exec(out);
      if (!match) options.whileStarting?.(out, child);
      if (match) {
        clearTimeout(timer);
        resolve({ child, port: Number(match[1]), output: () => out, stdout: () => stdout, exited });
      }
    };
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(timedOut ? `no banner in time:\n${out}` : `exited with ${code ?? signal} before listening:\n${out}`));
    });
  });
}

/** Ends a process this test started, by its PID, and waits for it. */
export async function killMain(main: MainProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!main || main.child.exitCode !== null || main.child.signalCode !== null) return;
  main.child.kill(signal);
  await main.exited;
}
