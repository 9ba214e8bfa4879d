/// <reference lib="dom" />
// page.evaluate callbacks run in Chromium, where the DOM exists.
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, api } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * Private sites against other sites, in Chromium. Every site host shares the site domain, which
 * is on no public suffix list, so to a browser they are all one "site": the access cookie
 * (`SameSite=Lax`) rides along with a `<script>` or `<img>` that another site host's page loads.
 * Such a page must not be able to read the private site's files, nor tell whether its visitor is
 * signed in to it; following a link to the private site must still work. And a site's script that
 * plants cookies of the access cookie's name for the whole site domain must not sign anyone out.
 */

let victim: string;
let attacker: string;
const PASSWORD = 'correct horse battery';
// A 1×1 PNG: an <img> of it fires `load` when the browser may read it.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The attacker's page: loads the private site's script, image and JSON, and notes what it learnt. */
function attackerPage(victimUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>attacker</title></head><body>
<a id="go" href="${victimUrl}/">Open the private site</a>
<script>
  window.seen = {};
  function note(name, value) { window.seen[name] = value; }
</script>
<script src="${victimUrl}/config.js" onload="note('script', 'load')" onerror="note('script', 'error')"></script>
<img src="${victimUrl}/pixel.png" onload="note('img', 'load ' + this.naturalWidth)" onerror="note('img', 'error')">
<link rel="stylesheet" href="${victimUrl}/style.css" onload="note('style', 'load')" onerror="note('style', 'error')">
<script>
  Promise.allSettled([
    fetch('${victimUrl}/data.json', { credentials: 'include' }).then((r) => r.text()),
    fetch('${victimUrl}/data.json', { credentials: 'include', mode: 'no-cors' }).then((r) => r.type + ' ' + r.status),
  ]).then(([cors, opaque]) => {
    note('cors', cors.status === 'fulfilled' ? cors.value : 'refused');
    note('opaque', opaque.status === 'fulfilled' ? opaque.value : 'refused');
  });
  window.addEventListener('load', () => {
    const wait = () => ('cors' in window.seen ? done() : setTimeout(wait, 20));
    const done = () => {
      note('config', typeof window.PRIVATE_CFG === 'undefined' ? 'none' : JSON.stringify(window.PRIVATE_CFG));
      note('color', getComputedStyle(document.body).color);
      note('finished', true);
    };
    wait();
  });
</script></body></html>`;
}

async function deploy(token: string, files: Array<readonly [string, string | Buffer]>): Promise<string> {
  const res = await deployTo(server.port, { token, contentType: 'application/json', body: jsonDeployBody(files) });
  expect(res.status, res.text).toBe(201);
  return res.json.site.name as string;
}

const server = useAppServer({ PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK: '0' });

const browser = useBrowser();

beforeAll(async () => {
  const owner = await accountWithToken(server.store, 'builder');
  victim = await deploy(owner.token, [
    ['index.html', '<!doctype html><title>victim</title><h1>Private home</h1><a href="/about">About</a>'],
    ['about.html', '<!doctype html><title>victim about</title><h1>Private about</h1>'],
    ['config.js', 'window.PRIVATE_CFG = { apiKey: "victim-secret" };'],
    ['data.json', '{"secret": "victim-secret"}'],
    ['style.css', 'body { color: rgb(1, 2, 3); }'],
    ['pixel.png', PIXEL],
    // The site even asks for cross-origin use: the gate's answer wins.
    ['_headers', '/*\n  Cross-Origin-Resource-Policy: cross-origin\n  Access-Control-Allow-Origin: *'],
  ]);
  const set = await api(server, { method: 'PUT', path: `/v1/sites/${victim}/access`, token: owner.token, body: { mode: 'password', password: PASSWORD } });
  expect(set.status).toBe(200);
  attacker = await deploy(owner.token, [['index.html', attackerPage(server.siteUrl(victim))]]);
});

/** A visitor's browser, signed in to the private site through its form, or not. */
async function visitor(signedIn: boolean): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  if (signedIn) {
    await page.goto(`${server.siteUrl(victim)}/about`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Open the site' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Private about' }).count()).toBe(1);
  }
  return { context, page };
}

async function whatTheAttackerSees(page: Page): Promise<Record<string, unknown>> {
  await page.goto(server.siteUrl(attacker));
  await page.waitForFunction(() => (window as unknown as { seen?: { finished?: boolean } }).seen?.finished === true);
  return page.evaluate(() => (window as unknown as { seen: Record<string, unknown> }).seen);
}

describe('another site host loading a private site', () => {
  it('cannot read its script, image, style sheet or JSON, and cannot tell a signed-in visitor from another', async () => {
    const signedIn = await visitor(true);
    const stranger = await visitor(false);
    try {
      const seenSignedIn = await whatTheAttackerSees(signedIn.page);
      const seenStranger = await whatTheAttackerSees(stranger.page);
      expect(seenSignedIn.config).toBe('none');
      expect(seenSignedIn.img).toBe('error');
      expect(seenSignedIn.script).toBe('error');
      expect(seenSignedIn.color).not.toBe('rgb(1, 2, 3)');
      expect(JSON.stringify(seenSignedIn)).not.toContain('victim-secret');
      // Everything the page can observe is the same for both visitors.
      expect(seenSignedIn).toEqual(seenStranger);
    } finally {
      await signedIn.context.close();
      await stranger.context.close();
    }
  });

  it('still lets a link from another site lead to it, signed in', async () => {
    const { context, page } = await visitor(true);
    try {
      await page.goto(server.siteUrl(attacker));
      await page.getByRole('link', { name: 'Open the private site' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Private home' }).count()).toBe(1);
      await page.getByRole('link', { name: 'About' }).click();
      await expect.poll(() => page.getByRole('heading', { name: 'Private about' }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('cannot sign a visitor out by planting cookies of the same name for the whole site domain', async () => {
    const { context, page } = await visitor(true);
    try {
      await page.goto(server.siteUrl(attacker));
      // Longer paths are sent first, so these would come before the real cookie.
      await page.evaluate(() => {
        for (const path of ['/', '/about']) document.cookie = `plinth_access=planted; domain=sites.localhost; path=${path}`;
      });
      const planted = await context.cookies(`${server.siteUrl(victim)}/about`);
      expect(planted.filter((cookie) => cookie.name === 'plinth_access').length).toBeGreaterThan(1);
      await page.goto(`${server.siteUrl(victim)}/about`);
      await expect.poll(() => page.getByRole('heading', { name: 'Private about' }).count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
