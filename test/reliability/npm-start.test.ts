import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sites.js';

// `npm start` on a copy of the package: it compiles only when a source is newer than dist/. The
// rebuild takes the whole compiler (about 13 s of CPU), so it runs with the long suites, not in
// `npm test`.

describe('npm start', () => {
  const ROOT = fileURLToPath(new URL('../..', import.meta.url));

  /** A copy of the package (its sources, built files and scripts; the guides and node_modules linked) with src/ older than dist/. */
  function packageCopy(): string {
    const dir = tempDir('plinth-package-');
    for (const name of ['package.json', 'tsconfig.json', 'scripts', 'src', 'dist', 'packages']) {
      if (existsSync(join(ROOT, name))) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
    }
    // What the server reads but never builds: the guides, and the dependencies.
    for (const name of ['node_modules', 'docs']) symlinkSync(join(ROOT, name), join(dir, name));
    const past = new Date(Date.now() - 3600_000);
    const touchAll = (path: string): void => {
      utimesSync(path, past, past);
      if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) touchAll(join(path, entry));
    };
    touchAll(join(dir, 'src'));
    touchAll(join(dir, 'packages', 'cli', 'src'));
    utimesSync(join(dir, 'tsconfig.json'), past, past);
    utimesSync(join(dir, 'packages', 'cli', 'tsconfig.json'), past, past);
    return dir;
  }

  /** Runs `npm start` in `dir` until the banner, then stops it; resolves how long the start took. */
  function npmStart(dir: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const started = performance.now();
      // In a process group of its own, so that npm and the server it runs stop together.
      const child = spawn('npm', ['start'], {
        cwd: dir,
        detached: true,
        env: { ...process.env, PLINTH_PORT: '0', PLINTH_THREADS: '1', PLINTH_DATA_DIR: tempDir(), PLINTH_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const timer = setTimeout(() => finish(new Error(`no banner in time:\n${out}`)), 120_000);
      const finish = (err?: Error): void => {
        clearTimeout(timer);
        try {
          process.kill(-child.pid!, 'SIGTERM');
        } catch {
          // Already gone.
        }
        if (err) reject(err);
        else resolve(performance.now() - started);
      };
      const onData = (chunk: Buffer): void => {
        out += chunk.toString();
        if (/running on port \d+/.test(out)) finish();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.on('exit', (code) => finish(new Error(`npm start exited with ${code}:\n${out}`)));
    });
  }

  it('starts from the built files without compiling when they are newer than the sources, and builds when a source changed', async () => {
    const dir = packageCopy();
    const builtAt = statSync(join(dir, 'dist', 'main.js')).mtimeMs;
    await npmStart(dir);
    expect(statSync(join(dir, 'dist', 'main.js')).mtimeMs, 'dist/ was not rebuilt').toBe(builtAt);

    // A changed source is compiled before the start.
    utimesSync(join(dir, 'src', 'config.ts'), new Date(), new Date());
    await npmStart(dir);
    expect(statSync(join(dir, 'dist', 'main.js')).mtimeMs).toBeGreaterThan(builtAt);
  }, 300_000);
});
