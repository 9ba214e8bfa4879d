import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupDataDir, restoreDataDir } from '../../src/store/backup.js';
import { openStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';

/**
 * `plinth admin backup` copies LMDB whole: every record, and the service's secrets in clear (the
 * key that signs access cookies and preview links: whoever reads it opens every password-protected
 * site). An operator's shell usually has umask 022, under which a new folder is readable by every
 * user of the machine; the backup's folder is its owner's alone, as a cluster backup's is.
 */
describe('the folder of a data directory backup', () => {
  const umask = process.umask();
  afterEach(() => {
    process.umask(umask);
  });

  it.each([
    ['a new folder', (parent: string) => join(parent, 'snapshot')],
    [
      'an empty folder made beforehand',
      (parent: string) => {
        chmodSync(parent, 0o755);
        return parent;
      },
    ],
  ])('is readable by its owner alone (%s)', async (_, targetOf) => {
    process.umask(0o022);
    const dataDir = tempDir('plinth-live-');
    const store = openStore({ dir: dataDir });
    const secret = await store.ensureSecret('access-secret', () => 'the-signing-key-of-access-cookies');
    await store.close();

    const target = targetOf(tempDir('plinth-backup-'));
    await backupDataDir({ dataDir, target });

    expect(readFileSync(join(target, 'meta', 'data.mdb')).includes(secret)).toBe(true);
    expect((statSync(target).mode & 0o777).toString(8)).toBe('700');
  });

  it('restores into a data directory whose records folder is its owner’s alone', async () => {
    process.umask(0o022);
    const dataDir = tempDir('plinth-live-');
    const store = openStore({ dir: dataDir });
    await store.ensureSecret('access-secret', () => 'the-signing-key-of-access-cookies');
    await store.close();
    const target = join(tempDir('plinth-backup-'), 'snapshot');
    await backupDataDir({ dataDir, target });

    const restored = join(tempDir('plinth-restored-'), 'data');
    await restoreDataDir({ backup: target, dataDir: restored });
    expect((statSync(join(restored, 'meta')).mode & 0o777).toString(8)).toBe('700');
  });
});
