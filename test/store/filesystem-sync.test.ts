import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { syncFilesystem } from '../../src/store/filesystem-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-fssync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The sync helpers this process runs: shells whose command line names the folder. */
function helpersFor(folder: string): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes('plinth-sync') && line.trimEnd().endsWith(` ${folder}`))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('syncFilesystem', () => {
  it('answers every call, at once or many together, through one helper per folder', async () => {
    await syncFilesystem(dir);
    await Promise.all(Array.from({ length: 20 }, () => syncFilesystem(dir)));
    expect(helpersFor(dir)).toHaveLength(1);
  });

  it('refuses when the sync fails, and goes on working', async () => {
    const missing = join(dir, 'no-such-folder');
    await expect(syncFilesystem(missing)).rejects.toThrow(/sync/);
    await syncFilesystem(dir);
  });

  it('finishes calls a killed helper owed, and starts another for the next', async () => {
    const [helper] = helpersFor(dir);
    const pending = Promise.all(Array.from({ length: 5 }, () => syncFilesystem(dir)));
    process.kill(helper!, 'SIGKILL');
    await pending;
    await syncFilesystem(dir);
    const after = helpersFor(dir);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(helper);
  });

  it('does not keep a process alive once its work is done', () => {
    const built = fileURLToPath(new URL('../../dist/store/filesystem-sync.js', import.meta.url));
    const script = `const { syncFilesystem } = await import(${JSON.stringify(built)}); await syncFilesystem(${JSON.stringify(dir)}); console.log('synced');`;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(run.stdout.trim()).toBe('synced');
    expect(run.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
