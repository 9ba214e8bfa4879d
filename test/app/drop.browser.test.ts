import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, visit } from '../api/api-helpers.js';
import { zipBytes } from '../helpers/archive-bytes.js';
import { tempDir } from '../helpers/sites.js';
import { inspectPage, openPage, signIn } from './browser.js';
import { signInOverHttp } from './http-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * Drop to publish in Chromium: a real folder on disk chosen with the folder chooser (packed in the
 * page into one .tar.gz), an archive dropped on the zone, a drop on a site's page, and the plain
 * form with JavaScript off. Screenshots at 390 and 1280 px go to test/screenshots/.
 */

let counter = 0;
const email = (who: string): string => `${who}-${Date.now().toString(36)}${++counter}@example.com`;

const server = useAppServer();

const browser = useBrowser();

/** A project folder as people have them: the site, plus things that must never be published. */
function projectFolder(title: string): string {
  const root = join(tempDir('plinth-drop-'), 'my-project');
  const files: Record<string, string | Buffer> = {
    'index.html': `<!doctype html><html lang="en"><head><title>${title}</title><link rel="stylesheet" href="style.css"></head><body><h1>${title}</h1><a href="about/">About</a></body></html>`,
    'style.css': 'body { font-family: sans-serif; }',
    'about/index.html': '<!doctype html><html lang="en"><head><title>About</title></head><body><p>About us</p></body></html>',
    [`assets/${'deep/'.repeat(20)}long-named-image-file.png`]: Buffer.from('89504e470d0a1a0a', 'hex'),
    'node_modules/left-pad/index.js': 'module.exports = 1;',
    '.git/HEAD': 'ref: refs/heads/main',
    '.env': 'API_KEY=not-for-the-web',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const siteNameOn = async (page: import('playwright-core').Page): Promise<string> =>
  new URL((await page.getByRole('link', { name: /^Visit / }).getAttribute('href'))!).hostname.split('.')[0]!;

describe('drop to publish in Chromium', () => {
  it('signed out: a real folder is packed in the page, uploaded with progress, and published with a claim link', async () => {
    const folder = projectFolder('Folder drop');
    const { context, page, errors } = await openPage(browser);
    await page.goto(`${server.appUrl}/login`);
    await page.getByRole('link', { name: 'Publish a site without an account' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1, name: 'Publish a site' }).count()).toBe(1);
    await inspectPage(page, 'publish');

    // One request carries the whole folder.
    const uploads: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') uploads.push(`${request.url()} ${request.headers()['content-type']}`);
    });
    // What the page says while it works (packing, upload progress, publishing).
    const said: string[] = [];
    await page.exposeFunction('noteDropMessage', (text: string) => said.push(text));
    await page.evaluate(() => {
      const message = document.querySelector('[data-drop-message]')!;
      const note = (globalThis as unknown as { noteDropMessage: (text: string) => void }).noteDropMessage;
      new MutationObserver(() => note(message.textContent ?? '')).observe(message, { childList: true, characterData: true, subtree: true });
    });
    await page.getByLabel('Choose a folder…').setInputFiles(folder);
    await page.waitForURL(`${server.appUrl}/publish/done`);
    expect(said[0]).toMatch(/^Packing 5 files \(\d+ bytes\)…$/);
    expect(said).toContainEqual(expect.stringMatching(/^Uploading: /));
    expect(uploads).toEqual([`${server.appUrl}/publish application/gzip`]);

    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Your site is live');
    const name = await siteNameOn(page);
    const claim = (await page.locator('#claim-link').textContent())!.trim();
    expect(claim.startsWith(`${server.appUrl}/claim/ct_`)).toBe(true);
    expect(await page.getByRole('button', { name: 'Copy the claim link' }).isVisible()).toBe(true);
    const leftOut = await page.getByRole('list').last().textContent();
    // Named as the site has them: the folder's own name is stripped, as the server strips it.
    expect(leftOut).toContain('node_modules/');
    expect(leftOut).not.toContain('my-project/');
    expect(leftOut).toContain('.git/');
    expect(leftOut).toContain('.env');
    await inspectPage(page, 'publish-done');

    // Published as the folder holds it, the single top folder stripped, long paths intact.
    expect((await visit(server, name)).text).toContain('Folder drop');
    expect((await visit(server, name, '/about/')).text).toContain('About us');
    expect((await visit(server, name, `/assets/${'deep/'.repeat(20)}long-named-image-file.png`)).status).toBe(200);
    expect((await visit(server, name, '/.env')).text).not.toContain('not-for-the-web');

    // The claim link works as the API's does.
    await page.getByRole('link', { name: `Claim ${name}` }).click();
    await page.getByRole('link', { name: `Sign in to claim ${name}` }).click();
    await signIn(page, server, email('claimer'));
    await page.getByRole('button', { name: 'Claim this site' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The site is yours now');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('signed in: an archive dropped on the sites page makes a site; a folder on its page makes revision 2', async () => {
    const { context, page, errors } = await openPage(browser);
    await signInOverHttp(context, server, email('dropper'));
    await page.goto(`${server.appUrl}/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Publish a new site' }).count()).toBe(1);

    // A drag and drop of a .zip, as the zone receives it.
    const zip = zipBytes([['index.html', '<!doctype html><html lang="en"><head><title>Zip</title></head><body><h1>Zipped</h1></body></html>']]);
    await page.evaluate(async (bytes) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], 'site.zip', { type: 'application/zip' }));
      const zone = document.querySelector('[data-drop-zone]')!;
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, Array.from(zip));
    await page.waitForURL(`${server.appUrl}/publish/done`);
    const name = await siteNameOn(page);
    expect(await page.locator('#claim-link').count()).toBe(0);
    expect((await visit(server, name)).text).toContain('Zipped');

    await page.getByRole('link', { name: `Manage ${name}` }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Publish a new version' }).count()).toBe(1);
    await page.getByLabel('Choose a folder…').setInputFiles(projectFolder('Second version'));
    await page.waitForURL(`${server.appUrl}/publish/done`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Revision 2 is live');
    expect((await visit(server, name)).text).toContain('Second version');

    // The file browser of the live revision.
    await page.getByRole('link', { name: `Manage ${name}` }).click();
    await page.getByRole('link', { name: 'Browse the files' }).click();
    await expect.poll(() => page.getByRole('heading', { name: `Files of ${name}` }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'about/index.html' }).count()).toBe(1);
    await inspectPage(page, 'files');
    await page.getByRole('link', { name: 'index.html', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('index.html');
    expect(await page.getByLabel('Content of index.html').textContent()).toContain('<title>Second version</title>');
    await inspectPage(page, 'file');

    // The sites list: a Visit link for each site, usable at 390 px.
    await page.goto(`${server.appUrl}/`);
    expect(await page.getByRole('link', { name: `Visit ${name}` }).getAttribute('href')).toBe(server.siteUrl(name));
    await inspectPage(page, 'sites-with-drop');
    // Defect 7: at 390 px every cell of the list is on screen, none in a sideways-scrolling table.
    await page.setViewportSize({ width: 390, height: 900 });
    const fit = await page.getByRole('region', { name: 'Sites you own or are a member of' }).evaluate((region) => {
      const right = region.getBoundingClientRect().right;
      const cells = Array.from(region.querySelectorAll('tbody th, tbody td'));
      return { sideways: region.scrollWidth - region.clientWidth, beyond: cells.filter((cell) => cell.getBoundingClientRect().right > right + 0.5).length };
    });
    expect(fit).toEqual({ sideways: 0, beyond: 0 });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a refusal next to the zone without leaving the page', async () => {
    const { context, page } = await openPage(browser);
    await page.goto(`${server.appUrl}/publish`);
    const folder = join(tempDir('plinth-drop-'), 'no-index');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'about.html'), '<p>no index</p>');
    await page.getByLabel('Choose a folder…').setInputFiles(folder);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('index.html is required');
    expect(new URL(page.url()).pathname).toBe('/publish');
    await inspectPage(page, 'publish-refused');
    await context.close();
  });

  it('with JavaScript off, the plain form uploads an archive', async () => {
    const { context, page } = await openPage(browser, 390, { javaScriptEnabled: false });
    await page.goto(`${server.appUrl}/publish`);
    // Only what works without the script is shown.
    expect(await page.getByLabel('Choose a folder…').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Publish the archive' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Choose a .zip or .tar.gz archive');
    const dir = tempDir('plinth-drop-');
    writeFileSync(
      join(dir, 'site.zip'),
      zipBytes([['index.html', '<!doctype html><html lang="en"><head><title>Plain</title></head><body><h1>No script</h1></body></html>']]),
    );
    await page.getByLabel('Archive of the site (.zip or .tar.gz)').setInputFiles(join(dir, 'site.zip'));
    await page.getByRole('button', { name: 'Publish the archive' }).click();
    await page.waitForURL(`${server.appUrl}/publish/done`);
    const name = await siteNameOn(page);
    expect((await visit(server, name)).text).toContain('No script');
    // The claim link is selectable text; the copy button needs the script and is not shown.
    expect(await page.locator('#claim-link').textContent()).toContain('/claim/ct_');
    expect(await page.getByRole('button', { name: 'Copy the claim link' }).count()).toBe(0);
    const status = await api(server, { path: `/v1/sites/${name}` });
    expect(status.status).toBe(401);
    await context.close();
  });
});
