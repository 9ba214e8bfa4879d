import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';

/**
 * `<data dir>/meta` holds LMDB, and LMDB holds the service's secrets in clear (the key that signs
 * access cookies and preview links, the form key, webhook secrets): whoever reads `data.mdb`
 * opens every password-protected and members-only site. LMDB writes its files under the umask
 * (`0644` under the usual 022), so the folder it makes is its owner's alone. A folder that
 * exists already keeps its mode: the operator chose it (the shipped unit makes the data
 * directory `0750` under umask 027).
 */
describe('the folder of the records', () => {
  const umask = process.umask();
  afterEach(() => {
    process.umask(umask);
  });

  it('is made readable by its owner alone, whatever the umask', async () => {
    process.umask(0o022);
    const dataDir = join(tempDir('plinth-modes-'), 'data');
    const store = openStore({ dir: dataDir });
    await store.ensureSecret('access-secret', () => 'the-signing-key-of-access-cookies');
    await store.close();
    expect((statSync(join(dataDir, 'meta')).mode & 0o777).toString(8)).toBe('700');
  });

  it('sits in a data directory made readable by its owner alone, with the blobs of every site', async () => {
    process.umask(0o022);
    const dataDir = join(tempDir('plinth-modes-'), 'data');
    const store = openStore({ dir: dataDir });
    const { sha256 } = await store.blobs.write(Buffer.from('<h1>a members-only page</h1>'));
    await store.close();
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    // The file itself is written under the umask; the directory above it is what keeps others out.
    expect(statSync(store.blobs.pathOf(sha256)).isFile()).toBe(true);
  });

  it('keeps the mode of a folder that exists', async () => {
    process.umask(0o022);
    const dataDir = tempDir('plinth-modes-');
    mkdirSync(join(dataDir, 'meta'), { mode: 0o750 });
    const store = openStore({ dir: dataDir });
    await store.close();
    expect((statSync(join(dataDir, 'meta')).mode & 0o777).toString(8)).toBe('750');
  });
});
