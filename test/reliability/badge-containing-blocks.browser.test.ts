/// <reference lib="dom" />
// page.evaluate callbacks run in Chromium, where the DOM exists.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPage } from '../app/browser.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useAppServer, useBrowser } from '../helpers/fixtures.js';
import { badgeShown, containingBlockAttacks, styled } from '../security/badge-pages.js';

/**
 * The containing-block table in full: every property that would make body the box the badge is
 * placed in, in each of the four ways a page can set it, and on html by a rule and an important
 * rule, checked in Chromium at the top of the page and scrolled to its end. The serving attack
 * file (test/security/serving.browser.test.ts) tries every property on each element and every
 * spelling at first line; this sweep of all their pairs, three times as long, runs here.
 */

const ROWS = containingBlockAttacks(true);
/** Anonymous sites hold 100 files each: the rows are spread over several. */
const ROWS_PER_SITE = 90;
const sites: string[] = [];
let page: Page;

const server = useAppServer();
const browser = useBrowser();

beforeAll(async () => {
  for (let from = 0; from < ROWS.length; from += ROWS_PER_SITE) {
    const files = [
      ['index.html', styled('')] as const,
      ...ROWS.slice(from, from + ROWS_PER_SITE).map(([, html], i) => [`row-${from + i}.html`, html] as const),
    ];
    const answer = await deployTo(server.port, { body: jsonDeployBody(files), contentType: 'application/json' });
    expect(answer.status, answer.text).toBe(201);
    sites.push(answer.json.site.name as string);
  }
  ({ page } = await openPage(browser));
}, 60_000);

describe('the badge on a page that makes html or body its containing block', () => {
  it.each(ROWS.map(([name], i) => [name, i] as const))('stays in the viewport with %s', async (_name, i) => {
    await page.goto(`${server.siteUrl(sites[Math.floor(i / ROWS_PER_SITE)]!)}/row-${i}.html`);
    expect(await badgeShown(page)).toBe('shown');
    // Scrolled to the end, too.
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await badgeShown(page)).toBe('shown');
  });
});
