import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasDiskBehind, syncFilesystem } from '../../src/store/filesystem-sync.js';

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
