import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { screenshot } from '../app/browser.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * The badge gives <body> a declarative shadow root that slots the page's own content: a page must
 * look exactly as it does without the badge (on a paid plan), whatever its layout relies on in
 * body — flex or grid items, `body > …` rules, text right in body, body's pseudo-elements, its
 * own web components, fixed and sticky elements, quirks mode. Compared in Chromium pixel for
 * pixel, the badge's pill taken out of the picture first.
 */

let page: Page;
let anonymous: string;
let paid: string;

const P = '<p>Some text of the site, long enough to wrap a little and show the font it is set in.</p>';
const PAGES: Array<[string, string]> = [
  ['a plain page', `<!DOCTYPE html><title>t</title><h1>Hello</h1>${P.repeat(30)}`],
  [
    'a flex column body with a footer',
    `<!DOCTYPE html><style>body{display:flex;flex-direction:column;min-height:100vh;margin:0;gap:20px}footer{margin-top:auto;background:#333;color:#fff;padding:20px}</style><header>Head</header><main>${P.repeat(5)}</main><footer>Foot</footer>`,
  ],
  [
    'a flex row body',
    `<!DOCTYPE html><style>body{display:flex;gap:30px;margin:0}body>*{flex:1;background:#eef}</style><nav>Nav</nav><main>${P.repeat(5)}</main><aside>Aside</aside>`,
  ],
  // (`body > :last-child` is the badge's light copy, as the badge was before it had a shadow root.)
  [
    'a grid body placed by body > rules',
    `<!DOCTYPE html><style>body{display:grid;grid-template-columns:200px 1fr;gap:16px;margin:0}body>:first-child{grid-row:span 2;background:#fee}body>footer{background:#efe}</style><nav>Nav</nav><main>${P.repeat(5)}</main><footer>Foot</footer>`,
  ],
  [
    "body's pseudo-elements, text right in body, nth-child rules",
    `<!DOCTYPE html><style>body::before{content:"BEFORE";display:block;background:yellow}body::after{content:"AFTER";display:block;background:cyan}body>p:nth-child(2n){color:red}</style>Text right in body<p>one</p><p>two</p><p>three</p>`,
  ],
  [
    'sticky and fixed elements',
    `<!DOCTYPE html><style>header{position:sticky;top:0;background:#ccc}.chat{position:fixed;right:10px;bottom:10px;background:red}</style><header>Sticky</header>${P.repeat(40)}<div class="chat">chat</div>`,
  ],
  [
    'fonts and colours inherited from body',
    `<!DOCTYPE html><style>body{font:20px/2 Georgia,serif;color:#336;background:#ffe;margin:40px}p{margin:0}</style>${P.repeat(10)}`,
  ],
  [
    'a web component of its own with a shadow root',
    `<!DOCTYPE html><my-card><template shadowrootmode="open"><style>:host{display:block;border:2px solid blue;padding:10px}</style><slot></slot></template>Card content</my-card>${P.repeat(3)}`,
  ],
  ['columns on body', `<!DOCTYPE html><style>body{columns:2}</style>${P.repeat(20)}`],
  ['a page in quirks mode', `<table><tr><td>${P}</td></tr></table><p>quirks mode page</p>`],
  [
    'body and html at full height',
    `<!DOCTYPE html><style>html,body{height:100%;margin:0}body{background:linear-gradient(red,blue)}</style><div style="height:50%">half</div>`,
  ],
  [
    'a body that scrolls instead of the page',
    `<!DOCTYPE html><style>html{overflow:hidden;height:100%}body{overflow:auto;height:100%;margin:0}</style>${P.repeat(60)}`,
  ],
  ['a child of body with a slot name', `<!DOCTYPE html><p slot="x">A paragraph with a slot attribute</p>${P.repeat(3)}`],
  [
    'a body that is a shadow host of its own',
    `<!DOCTYPE html><body><template shadowrootmode="open"><p>In the shadow</p><slot></slot></template>${P.repeat(3)}</body>`,
  ],
];

const fileOf = (i: number): string => `page-${i}.html`;

const server = useAppServer();

const browser = useBrowser();

beforeAll(async () => {
  const files = [['index.html', PAGES[0]![1]] as const, ...PAGES.map(([, html], i) => [fileOf(i), html] as const)];
  const anonymousAnswer = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
  expect(anonymousAnswer.status, anonymousAnswer.text).toBe(201);
  anonymous = anonymousAnswer.json.site.name as string;
  const owner = await accountWithToken(server.store, 'builder');
  const paidAnswer = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json', token: owner.token });
  expect(paidAnswer.status, paidAnswer.text).toBe(201);
  paid = paidAnswer.json.site.name as string;
  page = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
}, 60_000);

/** The page scrolled halfway and whole, with the badge's pill (wherever it renders) and its room taken out by script (one call). */
async function pictures(site: string, path: string): Promise<Buffer[]> {
  await page.goto(`${server.siteUrl(site)}/${path}`);
  const pills = await page.evaluate(() => {
    const roots: Array<Document | ShadowRoot> = [document, ...(document.body.shadowRoot ? [document.body.shadowRoot] : [])];
    let removed = 0;
    for (const root of roots) {
      for (const pill of root.querySelectorAll('[data-plinth-badge]')) {
        if (pill.getClientRects().length > 0) removed += 1;
        pill.remove();
      }
      // The room the pill keeps at the end of the page goes with it.
      for (const room of root.querySelectorAll('[data-plinth-room]')) room.remove();
    }
    window.scrollTo(0, document.documentElement.scrollHeight / 2);
    return removed;
  });
  if (site === anonymous) expect(pills, 'one pill shown').toBe(1);
  return [await screenshot(page), await screenshot(page, { fullPage: true })];
}

describe('a page with the badge, as Chromium shows it', () => {
  it.each(PAGES.map(([name], i) => [name, i] as const))('looks as it does without the badge: %s', async (_name, i) => {
    const [withBadge, without] = [await pictures(anonymous, fileOf(i)), await pictures(paid, fileOf(i))];
    expect(withBadge[0]!.equals(without[0]!), 'the window').toBe(true);
    expect(withBadge[1]!.equals(without[1]!), 'the whole page').toBe(true);
  });
});
