import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pullTarget, throughLink } from '../../packages/cli/src/pull.js';
import { writeTree } from '../fixtures/archives.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { useTestServer } from '../helpers/fixtures.js';
import { runCli } from './run-cli.js';

/**
 * After a 409 (someone published since the folder's revision), `plinth deploy` used to be refused
 * for good. The refusal now names the two ways on, and both work: `plinth pull` brings the live
 * files and revision into the folder, `plinth deploy --force` publishes on top of what is live.
 */

const server = useTestServer();
const plinth = (args: string[]) => runCli(server.port, args);

const stateOf = (dir: string): { site: string; revision: string } => JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8'));
const servedPage = async (site: string, path = '/'): Promise<string> => (await request({ port: server.port, host: `${site}.sites.localhost`, path })).text;

/** A site published from `mine`, then published over from a second folder with the same .service.json. */
async function publishedOver(): Promise<{ mine: string; theirs: string; site: string }> {
  const mine = tempDir('plinth-mine-');
  writeTree(mine, { 'index.html': '<h1>mine, first</h1>', 'about.html': 'about' });
  expect((await plinth(['deploy', mine])).status).toBe(0);
  const theirs = tempDir('plinth-theirs-');
  copyFileSync(join(mine, '.service.json'), join(theirs, '.service.json'));
  writeTree(theirs, { 'index.html': '<h1>theirs</h1>', 'about.html': 'about', 'news/today.html': 'news' });
  expect((await plinth(['deploy', theirs])).status).toBe(0);
  writeTree(mine, { 'index.html': '<h1>mine, second</h1>' });
  return { mine, theirs, site: stateOf(mine).site };
}

describe('plinth deploy after a 409', () => {
  it('names plinth pull and plinth deploy --force, and is refused the same way until one is used', async () => {
    const { mine, site } = await publishedOver();
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await plinth(['deploy', mine]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('409 conflict');
      expect(refused.stderr).toContain(`plinth pull ${mine}`);
      expect(refused.stderr).toContain(`plinth deploy --force ${mine}`);
      // The API's advice for agents (GET …/files, X-Base-Revision) is not a terminal's.
      expect(refused.stderr).not.toContain('GET /v1/sites');
    }
    expect(await servedPage(site)).toContain('theirs');
  });

  it('--force publishes on top of the live revision and says which revision it replaces', async () => {
    const { mine, site } = await publishedOver();
    const forced = await plinth(['deploy', '--force', mine]);
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(/replaces revision 2 of .*, the live one/);
    expect(forced.stdout).toMatch(/^Published revision 3: /);
    expect(await servedPage(site)).toContain('mine, second');
    // And the folder goes on from there: a plain deploy works again.
    writeTree(mine, { 'index.html': '<h1>mine, third</h1>' });
    expect((await plinth(['deploy', mine])).status).toBe(0);
    expect(await servedPage(site)).toContain('mine, third');
  });

  it('pull writes the live files into the folder and records the live revision, so the next deploy goes through', async () => {
    const { mine, theirs, site } = await publishedOver();
    const pulled = await plinth(['pull', mine]);
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(readFileSync(join(mine, 'index.html'), 'utf8')).toBe('<h1>theirs</h1>');
    expect(readFileSync(join(mine, 'news/today.html'), 'utf8')).toBe('news');
    expect(pulled.stdout).toContain('Replaced with the live copy: index.html');
    expect(stateOf(mine).revision).toBe(stateOf(theirs).revision);
    // The site token stays: pull changes only the revision.
    expect(JSON.parse(readFileSync(join(mine, '.service.json'), 'utf8')).site_token).toMatch(/^st_/);

    writeTree(mine, { 'index.html': '<h1>theirs, merged with mine</h1>' });
    const deployed = await plinth(['deploy', mine]);
    expect(deployed.status, deployed.stderr).toBe(0);
    expect(await servedPage(site)).toContain('merged with mine');
    expect(await servedPage(site, '/news/today.html')).toMatch(/^news/);
  });

  it('pull says what to do in a folder that was never published', async () => {
    const empty = tempDir('plinth-nothing-');
    const pulled = await plinth(['pull', empty]);
    expect(pulled.status).toBe(2);
    expect(pulled.stderr).toContain('has no .service.json');
    expect(existsSync(join(empty, '.service.json'))).toBe(false);
  });
});

describe('where plinth pull writes a listed path', () => {
  const root = '/home/me/site';
  it.each([
    ['index.html', `${root}/index.html`],
    ['news/today.html', `${root}/news/today.html`],
    ['../outside.html', undefined],
    ['news/../../outside.html', undefined],
    ['/etc/passwd', undefined],
    ['a//b.html', undefined],
    ['./index.html', undefined],
    ['.git/config', undefined],
    ['deep/.git/hooks/pre-commit', undefined],
    ['node_modules/x.js', undefined],
    ['.service.json', undefined],
    ['sub/.service.json.abc.tmp', undefined],
    ['.plinth-upload.json', undefined],
    ['back\\slash.html', undefined],
    ['nul\0.html', undefined],
    ['', undefined],
  ])('%j → %s', (path, target) => {
    expect(pullTarget(root, path)).toBe(target);
  });
});

describe('plinth pull and symbolic links in the folder', () => {
  it('never writes through a link, to a file or a folder', () => {
    const root = tempDir('plinth-links-');
    const elsewhere = tempDir('plinth-elsewhere-');
    mkdirSync(join(root, 'real'));
    symlinkSync(elsewhere, join(root, 'docs'));
    symlinkSync(join(elsewhere, 'x.html'), join(root, 'page.html'));
    expect(throughLink(root, 'docs/.bashrc')).toBe(true);
    expect(throughLink(root, 'page.html')).toBe(true);
    expect(throughLink(root, 'real/page.html')).toBe(false);
    expect(throughLink(root, 'new/folder/page.html')).toBe(false);
  });
});
