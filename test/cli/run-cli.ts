import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI package's own build, as `npm i -g` would install it. */
export const CLI = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));

export interface CliRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `plinth` against the server on `port` (PLINTH_API_URL set, this process's environment
 * beside `env`). Asynchronous: a server under test in this process must keep answering.
 */
export function runCli(port: number, args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        encoding: 'utf8',
        ...(options.cwd ? { cwd: options.cwd } : {}),
        env: { ...process.env, PLINTH_API_URL: `http://api.localhost:${port}`, ...options.env },
      },
      (err, stdout, stderr) => resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
