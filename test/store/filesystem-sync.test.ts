import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSyncHelper, hasDiskBehind, syncFilesystem } from '../../src/store/filesystem-sync.js';
import { waitUntil } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'plinth-fssync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('syncFilesystem', () => {
  it('flushes the filesystem of a folder, several calls at once too', async () => {
    await Promise.all(Array.from({ length: 5 }, () => syncFilesystem(dir)));
  });

  it('refuses when the sync cannot be made, so nothing is reported durable that is not', async () => {
    await expect(syncFilesystem(join(dir, 'no-such-folder'))).rejects.toThrow(/sync/);
  });

  it.each([
    ['ext4', 0xef53, true],
    ['xfs', 0x58465342, true],
    ['btrfs', 0x9123683e, true],
    ['overlayfs', 0x794c7630, true],
    ['tmpfs', 0x01021994, false],
    ['ramfs', 0x858458f6, false],
  ])('%s has a disk behind it to flush: %s', (_name, type, expected) => {
    expect(hasDiskBehind(type)).toBe(expected);
  });
});

/** Whether a process is alive (a zombie is not: it has exited and only waits to be reaped). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Whether the process is gone entirely: exited and reaped, no zombie left. */
function gone(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/stat`);
    return false;
  } catch {
    return true;
  }
}

describe('createSyncHelper', () => {
  it('syncs through one shell kept per folder, requests at once sharing it', async () => {
    const helper = createSyncHelper();
    try {
      await Promise.all(Array.from({ length: 5 }, () => syncFilesystem(dir, helper.sync)));
      await syncFilesystem(dir, helper.sync);
      expect(helper.pids()).toHaveLength(1);
    } finally {
      await helper.close();
    }
  });

  it('refuses when the sync fails, and the shell answers the next request', async () => {
    const helper = createSyncHelper();
    try {
      const missing = join(dir, 'no-such-folder');
      await expect(helper.sync(missing)).rejects.toThrow(/sync -f .*failed: .*no-such-folder/);
      await expect(helper.sync(missing)).rejects.toThrow(/failed/);
      await helper.sync(dir);
    } finally {
      await helper.close();
    }
  });

  it('leaves no zombie: close ends the shells and reaps them', async () => {
    const helper = createSyncHelper();
    await helper.sync(dir);
    const [pid] = helper.pids();
    expect(alive(pid!)).toBe(true);
    await helper.close();
    expect(helper.pids()).toEqual([]);
    expect(gone(pid!)).toBe(true);
  });

  it('starts another shell when one was killed, and refuses what it was asked meanwhile', async () => {
    const helper = createSyncHelper();
    try {
      await helper.sync(dir);
      const [first] = helper.pids();
      process.kill(first!, 'SIGKILL');
      expect(await waitUntil(() => helper.pids().length === 0, 5000)).toBe(true);
      await helper.sync(dir);
      expect(helper.pids()).toHaveLength(1);
      expect(helper.pids()[0]).not.toBe(first);
    } finally {
      await helper.close();
    }
  });

  it('dies with its server: a shell whose process was killed ends by itself', async () => {
    const script = `
      import { createSyncHelper } from ${JSON.stringify(fileURLToPath(new URL('../../dist/store/filesystem-sync.js', import.meta.url)))};
      const helper = createSyncHelper();
      await helper.sync(${JSON.stringify(dir)});
      console.log(helper.pids()[0]);
      setInterval(() => {}, 1000);
    `;
    const server = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      server.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      server.once('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    expect(alive(pid)).toBe(true);
    server.kill('SIGKILL');
    expect(await waitUntil(() => !alive(pid), 5000)).toBe(true);
  });
});
