import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPage, saveScreenshot } from '../app/browser.js';
import { accountWithToken } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * Issue 33: on a Free site at 390 px the badge's pill covered the page's text. Checked in Chromium
 * with JavaScript off on a page of plain text, scrolled to its end: what is under each line of the
 * last paragraph is that paragraph, not the pill. Screenshots go to test/screenshots/ with
 * TEST_SCREENSHOTS=1.
 */

const TEXT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Notes</title></head>
<body><h1>Notes</h1>${'<p>Some text of the site, long enough to wrap over a few lines on a phone and fill the screen.</p>'.repeat(12)}<p id="last">The last words of the page, which a reader must be able to read.</p></body></html>`;

let site: string;
const server = useAppServer();
const browser = useBrowser();

beforeAll(async () => {
  const owner = await accountWithToken(server.store, 'free');
  const answer = await deployTo(server.port, { body: jsonDeployBody([['index.html', TEXT]]), contentType: 'application/json', token: owner.token });
  expect(answer.status, answer.text).toBe(201);
  site = answer.json.site.name as string;
});

/** Points along the last paragraph's lines where something else is painted on top. */
async function coveredPoints(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const last = document.getElementById('last')!;
    const covered: string[] = [];
    for (const rect of last.getClientRects()) {
      for (let x = rect.left + 2; x < rect.right; x += 8) {
        const y = rect.top + rect.height / 2;
        const hit = document.elementFromPoint(x, y);
        if (hit !== last && !last.contains(hit)) covered.push(`${Math.round(x)},${Math.round(y)}: <${hit?.localName}>`);
      }
    }
    return covered;
  });
}

describe('the badge on a phone', () => {
  it.each([390, 1280])('leaves the end of the text readable at %i px', async (width) => {
    const { context, page } = await openPage(browser, width, { height: 700, javaScriptEnabled: false });
    await page.goto(server.siteUrl(site));
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await saveScreenshot(page, `badge-text-${width}`);
    expect(await coveredPoints(page)).toEqual([]);
    await context.close();
  });
});
