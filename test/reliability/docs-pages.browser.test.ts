import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/index.js';
import { buildDocsSite } from '../../src/docs/index.js';
import { screenshot } from '../app/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Every docs page in Chromium at a phone's and a laptop's width: no console errors (a CSP
 * violation is one), no sideways scrolling on the phone, no axe-core WCAG A/AA violations.
 * Screenshots go to test/screenshots/ (ignored by git) for a person to look at. The slowest
 * browser file of the suite, for pages whose serving and headers the docs-host tests of `npm test`
 * check: so it runs with the reliability project.
 */

const SHOTS = fileURLToPath(new URL('../screenshots/', import.meta.url));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let server: TestServer;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer({ PLINTH_PUBLIC_DOCS_URL: 'http://localhost' });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const docsConfig = (await import('../../src/config.js')).loadConfig({});
const pages = buildDocsSite(docsConfig, { openApi: openApiDocument(docsConfig) })
  .paths()
  .filter((path) => !/\.(md|txt|json)$/.test(path));

describe('docs pages in Chromium', () => {
  it.each(pages)(
    '%s renders cleanly at 390 px and 1280 px',
    async (path) => {
      for (const width of [390, 1280]) {
        errors.length = 0;
        await page.setViewportSize({ width, height: 900 });
        const response = await page.goto(`http://localhost:${server.port}${path}`, { waitUntil: 'load' });
        expect(response?.status()).toBe(200);
        const name = path === '/' ? 'index' : path.slice(1);
        await screenshot(page, { path: `${SHOTS}docs-${name}-${width}.png`, fullPage: true });
        expect(errors, `${path} at ${width} px`).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${path} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
        await page.evaluate(AXE);
        const violations = await page.evaluate(async () => {
          const axe = (
            globalThis as unknown as { axe: { run(options: unknown): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }> } }
          ).axe;
          const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
          return result.violations.map(
            (v) =>
              `${v.id}: ${v.nodes
                .map((n) => n.target.join(' '))
                .slice(0, 3)
                .join(', ')}`,
          );
        });
        expect(violations, `${path} at ${width} px`).toEqual([]);
      }
      // The operating guide is long (it shows every shipped file): a full-page screenshot and an axe
      // run over it take several seconds each on a busy machine.
    },
    120_000,
  );

  it('lets a keyboard user skip to the content and see where the focus is', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`http://localhost:${server.port}/agent-guide`);
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to main content' });
    await expect.poll(() => skip.evaluate((el) => el === document.activeElement)).toBe(true);
    const outline = await skip.evaluate((el) => getComputedStyle(el).outlineStyle);
    expect(outline).not.toBe('none');
    await expect.poll(() => page.getByRole('navigation', { name: 'On this page' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'Copy this code' }).count()).toBeGreaterThan(3);
  });

  const guidePages = pages.filter((path) => path !== '/');

  it.each(guidePages)('%s puts the title first on a phone, with the guides and the page index after the article', async (path) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`http://localhost:${server.port}${path}`, { waitUntil: 'load' });
    const title = await page.getByRole('heading', { level: 1 }).first().boundingBox();
    expect(title, path).not.toBeNull();
    // Below the header and its wrapped navigation: the title is on the first screen.
    expect(title!.y, `${path}: the title starts ${title!.y} px down`).toBeLessThan(300);
    const articleBottom = await page.locator('article').evaluate((el) => el.getBoundingClientRect().bottom);
    const guidesTop = await page.getByRole('navigation', { name: 'Guides' }).evaluate((el) => el.getBoundingClientRect().top);
    expect(guidesTop).toBeGreaterThanOrEqual(articleBottom);
    const jump = page.getByRole('link', { name: 'All guides' });
    expect(await jump.isVisible()).toBe(true);
  });

  it.each([390, 1280])('keeps the Copy button off the first line of every code block at %i px', async (width) => {
    await page.setViewportSize({ width, height: 900 });
    for (const path of ['/agent-guide', '/quick-start', '/cli', '/publishing']) {
      await page.goto(`http://localhost:${server.port}${path}`, { waitUntil: 'load' });
      await expect.poll(() => page.getByRole('button', { name: 'Copy this code' }).count()).toBeGreaterThan(0);
      const overlaps = await page.evaluate(() =>
        [...document.querySelectorAll('.code-block')].flatMap((block, i) => {
          const button = block.querySelector('button')!.getBoundingClientRect();
          const pre = block.querySelector('pre')!;
          const style = getComputedStyle(pre);
          const firstLineTop = pre.getBoundingClientRect().top + parseFloat(style.borderTopWidth) + parseFloat(style.paddingTop);
          return button.bottom > firstLineTop ? [`block ${i + 1}: button ends at ${button.bottom}, code starts at ${firstLineTop}`] : [];
        }),
      );
      expect(overlaps, `${path} at ${width} px`).toEqual([]);
    }
    if (width === 390) await screenshot(page, { path: `${SHOTS}docs-copy-button-390.png` });
  });

  it('links the docs to the account app, where people sign in', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`http://localhost:${server.port}/`, { waitUntil: 'load' });
    const signIn = page.getByRole('link', { name: 'Sign in' });
    expect(await signIn.getAttribute('href')).toBe(`${server.config.publicUrls.app}/login`);
    expect(await page.getByRole('link', { name: 'the account app', exact: true }).getAttribute('href')).toBe(`${server.config.publicUrls.app}/`);
  });
});
