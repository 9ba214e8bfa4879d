import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPage, saveScreenshot } from '../app/browser.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * Issue 24, defect 8: the badge must not sit over a page's own fixed controls — a presentation's
 * toolbar or an app's toasts in the bottom-right corner — and still work without script. Checked
 * in Chromium with JavaScript off, at 390 and 1280 px: what is under the centre of each control
 * is the control, and the report link is shown and not covered either (screenshots with
 * TEST_SCREENSHOTS=1).
 */

let site: string;

// An impress.js-style toolbar and an app toast, both fixed to the bottom-right corner.
const BOTTOM_RIGHT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Slides</title>
<style>
#impress-toolbar { position: fixed; right: 8px; bottom: 8px; display: flex; gap: 4px; }
#impress-toolbar button { font: 16px sans-serif; padding: 6px 12px; }
.toast { position: fixed; right: 16px; bottom: 56px; width: 260px; padding: 12px; background: #223; color: #fff; border-radius: 6px; }
</style></head><body><h1>Slide 1</h1><p>Press the arrows to move.</p>
<div class="toast" role="status" id="toast">Saved just now</div>
<div id="impress-toolbar"><button id="prev">Prev</button><select id="goto" aria-label="Go to slide"><option>1</option></select><button id="next">Next</button></div>
</body></html>`;

// A page whose controls sit bottom-left asks for the badge elsewhere.
const BOTTOM_LEFT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="plinth-badge" content="top-right"><title>Chat</title>
<style>#help { position: fixed; left: 8px; bottom: 8px; font: 16px sans-serif; padding: 8px 14px; }</style></head>
<body><h1>Help desk</h1><button id="help">Chat with us</button></body></html>`;

const server = useAppServer();

const browser = useBrowser();

beforeAll(async () => {
  const answer = await deployTo(server.port, {
    body: jsonDeployBody([
      ['index.html', BOTTOM_RIGHT],
      ['left.html', BOTTOM_LEFT],
    ]),
    contentType: 'application/json',
  });
  expect(answer.status, answer.text).toBe(201);
  site = answer.json.site.name as string;
});

/** The badge as shown: the pill in body's shadow root (its light copy, for older browsers, is not rendered). */
const shownBadge = (page: Page) => page.locator('[data-plinth-badge]').filter({ visible: true });

/** Controls whose box overlaps the badge's box at all. */
async function overlapping(page: Page, selectors: string[]): Promise<string[]> {
  const badge = (await shownBadge(page).boundingBox())!;
  const hits: string[] = [];
  for (const selector of selectors) {
    const box = (await page.locator(selector).boundingBox())!;
    const apart = box.x >= badge.x + badge.width || badge.x >= box.x + box.width || box.y >= badge.y + badge.height || badge.y >= box.y + box.height;
    if (!apart) hits.push(selector);
  }
  return hits;
}

/** What is painted at the centre of each element (its own selector when nothing covers it); the page's, then its body's shadow root's. */
async function topmost(page: Page, selectors: string[]): Promise<string[]> {
  return page.evaluate(
    (list) =>
      list.map((selector) => {
        const shadow = document.body.shadowRoot;
        const element = (shadow?.querySelector(selector) ?? document.querySelector(selector))!;
        const box = element.getBoundingClientRect();
        const root = element.getRootNode() as Document | ShadowRoot;
        const hit = root.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return hit === element || element.contains(hit) ? selector : `${selector} covered by <${hit?.localName} ${hit?.getAttributeNames().join(' ')}>`;
      }),
    selectors,
  );
}

describe('the badge and a page’s own fixed controls, without script', () => {
  it.each([390, 1280])('leaves a bottom-right toolbar and toast uncovered at %i px', async (width) => {
    const { context, page } = await openPage(browser, width, { height: 700, javaScriptEnabled: false });
    await page.goto(server.siteUrl(site));
    expect(await topmost(page, ['#prev', '#goto', '#next', '#toast', '[data-plinth-badge] a'])).toEqual([
      '#prev',
      '#goto',
      '#next',
      '#toast',
      '[data-plinth-badge] a',
    ]);
    expect(await overlapping(page, ['#impress-toolbar', '#toast'])).toEqual([]);
    await saveScreenshot(page, `badge-controls-${width}`);
    await context.close();
  });

  it.each([390, 1280])('moves to the corner a page asks for at %i px', async (width) => {
    const { context, page } = await openPage(browser, width, { height: 700, javaScriptEnabled: false });
    await page.goto(`${server.siteUrl(site)}/left.html`);
    expect(await topmost(page, ['#help', '[data-plinth-badge] a'])).toEqual(['#help', '[data-plinth-badge] a']);
    expect(await overlapping(page, ['#help'])).toEqual([]);
    const box = (await shownBadge(page).boundingBox())!;
    expect(box.y).toBeLessThan(50);
    expect(box.x + box.width).toBeGreaterThan(width - 50);
    await saveScreenshot(page, `badge-corner-${width}`);
    await context.close();
  });
});
