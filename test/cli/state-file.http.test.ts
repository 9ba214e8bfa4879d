import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployCommand } from '../../packages/cli/src/deploy.js';
import { readFolder } from '../../packages/cli/src/pack.js';
import { writeTree } from '../fixtures/archives.js';
import { tempDir } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';

/**
 * `.service.json` holds a site token, or an API token for a whole account: it is readable by its
 * owner alone however it was left, it never exists half-written or with wider rights on the way,
 * and neither it nor a temp file of it is ever sent with the site.
 */

const apiUrl = () => `http://api.localhost:${server.port}`;
const modeOf = (path: string): number => statSync(path).mode & 0o777;

const server = useTestServer();

/** Records the mode of every state file the code under test opens, the moment it is opened. */
async function watchingOpens<T>(run: () => Promise<T>): Promise<{ result: T; opened: Array<{ path: string; mode: number }> }> {
  const opened: Array<{ path: string; mode: number }> = [];
  const realOpen = fsp.open;
  fsp.open = (async (...args: Parameters<typeof fsp.open>) => {
    const handle = await realOpen(...args);
    if (String(args[0]).includes('.service.json')) opened.push({ path: String(args[0]), mode: (await handle.stat()).mode & 0o777 });
    return handle;
  }) as typeof fsp.open;
  syncBuiltinESMExports();
  // Without a umask, a file created without an explicit mode would be 0666.
  const umask = process.umask(0);
  try {
    return { result: await run(), opened };
  } finally {
    process.umask(umask);
    fsp.open = realOpen;
    syncBuiltinESMExports();
  }
}

describe('the state file', () => {
  it.each(['644', '666', '604'])('an existing file with mode %s is 0600 after a deploy', async (mode) => {
    const dir = tempDir('plinth-state-');
    writeTree(dir, { 'index.html': '<h1>first</h1>' });
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined })).toBe(0);
    const state = join(dir, '.service.json');
    chmodSync(state, parseInt(mode, 8));

    writeTree(dir, { 'index.html': '<h1>second</h1>' });
    expect(await deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined })).toBe(0);
    expect(modeOf(state).toString(8)).toBe('600');
  });

  it('is written to a temp file created 0600, renamed over the old one, with nothing left behind', async () => {
    const dir = tempDir('plinth-state-');
    writeTree(dir, { 'index.html': '<h1>first</h1>' });
    const { result, opened } = await watchingOpens(() => deployCommand({ dir, apiUrl: apiUrl(), out: () => undefined }));
    expect(result).toBe(0);
    const temps = opened.filter(({ path }) => path !== join(dir, '.service.json'));
    expect(temps.length).toBeGreaterThan(0);
    for (const temp of temps) expect(temp.mode.toString(8), temp.path).toBe('600');
    expect(modeOf(join(dir, '.service.json')).toString(8)).toBe('600');
    expect(
      readdirSync(dir)
        .filter((name) => name.startsWith('.service.json'))
        .sort(),
    ).toEqual(['.service.json']);
  });

  it('is never packed, nor is a temp file a crash left of it', async () => {
    const dir = tempDir('plinth-state-');
    writeTree(dir, { 'index.html': '<h1>first</h1>' });
    writeFileSync(join(dir, '.service.json'), '{"site":"x","revision":"rev_x","site_token":"st_secret"}');
    writeFileSync(join(dir, '.service.json.3f9a1c.tmp'), '{"site":"x","revision":"rev_x","api_token":"pl_secret"}');
    expect((await readFolder(dir)).map((file) => file.path)).toEqual(['index.html']);
  });
});
