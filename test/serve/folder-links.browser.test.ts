/// <reference lib="dom" />
// page.evaluate callbacks run in Chromium, where the DOM exists.
import { describe, expect, it } from 'vitest';
import { openPage } from '../app/browser.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * The reveal.js case in Chromium: a presentation in a folder with relative assets, opened at the
 * folder's address without its slash (as a link to `/reveal` does). Every request the page makes
 * must succeed: the server sends the browser to `/reveal/`, where `dist/reveal.css` resolves
 * inside the folder. Then a single-page app under `/app` through `_redirects`, with `_headers`.
 */

const server = useAppServer();

const browser = useBrowser();

const REVEAL_INDEX = `<!doctype html>
<html><head><meta charset="utf-8"><title>Slides</title>
<link rel="stylesheet" href="dist/reset.css">
<link rel="stylesheet" href="dist/reveal.css">
<link rel="stylesheet" href="dist/theme/black.css">
</head><body><div class="reveal"><div class="slides"><section><h1 id="title">Hello</h1><img src="assets/logo.svg" alt="logo"></section></div></div>
<script src="dist/reveal.js"></script>
<script src="plugin/notes/notes.js"></script>
<script>Reveal.initialize();</script>
</body></html>`;
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';

async function deploy(files: Array<readonly [string, string]>): Promise<{ name: string; json: { warnings: unknown[] } }> {
  const answer = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
  expect(answer.status, answer.text).toBe(201);
  return { name: answer.json.site.name, json: answer.json };
}

describe('folder addresses in a browser', () => {
  it('loads a presentation under /reveal with every relative asset, at the address without the slash', async () => {
    const { name, json } = await deploy([
      ['index.html', '<!doctype html><title>Home</title><a href="/reveal">Slides</a>'],
      ['reveal/index.html', REVEAL_INDEX],
      ['reveal/dist/reset.css', 'html{margin:0}'],
      ['reveal/dist/reveal.css', '.reveal{background:url(../assets/logo.svg)}'],
      ['reveal/dist/theme/black.css', '@import url(../reset.css); body{background:#000;color:#fff}'],
      ['reveal/dist/reveal.js', 'window.Reveal = { initialize() { document.body.dataset.ready = "yes"; } };'],
      ['reveal/plugin/notes/notes.js', 'window.notes = true;'],
      ['reveal/assets/logo.svg', SVG],
    ]);
    // The deploy already knew every reference leads somewhere.
    expect(json.warnings).toEqual([]);
    const { context, page, errors } = await openPage(browser);
    const statuses: string[] = [];
    page.on('response', (response) => statuses.push(`${response.status()} ${new URL(response.url()).pathname}`));
    try {
      await page.goto(`${server.siteUrl(name)}/reveal`);
      await page.waitForFunction(() => document.body.dataset.ready === 'yes');
      expect(new URL(page.url()).pathname).toBe('/reveal/');
      expect(await page.locator('#title').evaluate((el) => getComputedStyle(el.ownerDocument.body).backgroundColor)).toBe('rgb(0, 0, 0)');
      expect(errors).toEqual([]);
      expect(statuses.filter((line) => line.startsWith('4') || line.startsWith('5'))).toEqual([]);
      expect(statuses).toContain('301 /reveal');
      expect(statuses).toContain('200 /reveal/dist/reveal.css');
      expect(statuses).toContain('200 /reveal/assets/logo.svg');
    } finally {
      await context.close();
    }
  });

  it('serves a single-page app under /app through _redirects, with its _headers', async () => {
    const { name } = await deploy([
      ['index.html', '<!doctype html><title>Home</title>'],
      ['app/index.html', '<!doctype html><title>App</title><link rel="stylesheet" href="/app/app.css"><script src="/app/app.js"></script>'],
      ['app/app.css', 'body{color:rgb(1, 2, 3)}'],
      ['app/app.js', 'document.addEventListener("DOMContentLoaded", () => { document.body.dataset.route = location.pathname; });'],
      ['_redirects', '/app/*  /app/index.html  200'],
      ['_headers', '/app/*\n  X-Frame-Options: DENY'],
    ]);
    const { context, page, errors } = await openPage(browser);
    try {
      const response = await page.goto(`${server.siteUrl(name)}/app/settings/profile`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['x-frame-options']).toBe('DENY');
      await page.waitForFunction(() => document.body.dataset.route !== undefined);
      expect(await page.evaluate(() => document.body.dataset.route)).toBe('/app/settings/profile');
      expect(await page.evaluate(() => getComputedStyle(document.body).color)).toBe('rgb(1, 2, 3)');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
