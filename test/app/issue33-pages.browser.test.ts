import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useAppServer, useBrowser } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/sites.js';
import { accountSite, accountWithToken, api, anonymousSite, type TestAccount } from '../api/api-helpers.js';
import { inspectPage, openPage } from './browser.js';
import { signInOverHttp } from './http-client.js';

/**
 * The pages issue 33 added or changed, looked at as a person does at 390 and 1280 px (screenshots
 * in test/screenshots/, accessibility, nothing sideways): a site's page with its access form,
 * revisions (live, older, a draft) and custom domains, the domain removal page, the drop page's
 * refusal, and the claim page of an unclaimed site. Besides what inspectPage checks, at both widths: no id twice, every
 * field labelled by a label of its own, every field to type in drawn alike (the access form's
 * password field had the browser's own thin border), and no control or heading drawn over another.
 */

const server = useAppServer();
const browser = useBrowser();
let owner: TestAccount;

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

/** Ids used more than once on the page. */
const duplicateIds = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const seen = new Map<string, number>();
    for (const element of document.querySelectorAll('[id]')) seen.set(element.id, (seen.get(element.id) ?? 0) + 1);
    return [...seen].filter(([, count]) => count > 1).map(([id, count]) => `${id} ×${count}`);
  });

/** Fields a person fills or ticks that no label names, or whose label also names another field. */
const badlyLabelledFields = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const fields = [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')].filter(
      (field) => !(field instanceof HTMLInputElement && ['hidden', 'submit', 'button'].includes(field.type)),
    );
    const problems: string[] = [];
    for (const field of fields) {
      const name = `${field.tagName.toLowerCase()}[name=${field.getAttribute('name')}${field instanceof HTMLInputElement ? ` type=${field.type}` : ''}]`;
      const labels = [...(field.labels ?? [])];
      if (labels.length === 0 && !field.getAttribute('aria-label') && !field.getAttribute('aria-labelledby')) problems.push(`${name}: no label`);
      for (const label of labels) {
        // A label's click goes to its one control: the one for this field must not point elsewhere.
        if (label.control !== field) problems.push(`${name}: its label "${label.textContent?.trim()}" works another field`);
      }
    }
    return problems;
  });

/** Fields to type in that are not drawn as the page's other fields are (the browser's own border instead). */
const unstyledFields = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const fields = [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')].filter(
      (field) => !(field instanceof HTMLInputElement && ['hidden', 'submit', 'button', 'radio', 'checkbox', 'file'].includes(field.type)),
    );
    const look = (field: Element): string => {
      const style = getComputedStyle(field);
      return `${style.borderTopWidth} ${style.borderTopStyle} ${style.borderTopColor}`;
    };
    // The sign-in form's e-mail field is the reference every page shares.
    const reference = fields.find((field) => field.getAttribute('type') === 'email' || field.getAttribute('type') === 'text') ?? fields[0];
    if (!reference) return [];
    return fields.filter((field) => look(field) !== look(reference)).map((field) => `${field.getAttribute('name')}: ${look(field)}, not ${look(reference)}`);
  });

/** Visible controls and headings whose boxes cross without one holding the other. */
const overlappingItems = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const items = [
      ...document.querySelectorAll<HTMLElement>('a, button, input:not([type=hidden]), select, textarea, label, h1, h2, h3, summary, .badge, .status, th'),
    ].filter((element) => {
      const box = element.getBoundingClientRect();
      return box.width > 0 && box.height > 0 && getComputedStyle(element).visibility !== 'hidden';
    });
    const describe = (element: HTMLElement): string =>
      `${element.tagName.toLowerCase()} "${(element.textContent ?? element.getAttribute('name') ?? '').trim().slice(0, 40)}"`;
    const found: string[] = [];
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        const [a, b] = [items[i]!, items[j]!];
        if (a.contains(b) || b.contains(a)) continue;
        const [p, q] = [a.getBoundingClientRect(), b.getBoundingClientRect()];
        const width = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        const height = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (width > 2 && height > 2) found.push(`${describe(a)} and ${describe(b)} (${Math.round(width)}×${Math.round(height)} px)`);
      }
    }
    return found;
  });

/** inspectPage, plus the layout checks above at both widths. */
async function lookAt(page: Page, name: string): Promise<void> {
  await inspectPage(page, name);
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await duplicateIds(page), `${name} at ${width}px: ids used twice`).toEqual([]);
    expect(await badlyLabelledFields(page), `${name} at ${width}px: fields`).toEqual([]);
    expect(await overlappingItems(page), `${name} at ${width}px: drawn over each other`).toEqual([]);
    expect(await unstyledFields(page), `${name} at ${width}px: fields drawn differently`).toEqual([]);
  }
}

describe('the pages of issue 33 at 390 and 1280 px', () => {
  it("a site's page: access form, revisions with a draft, custom domains; and the removal page", { timeout: 90_000 }, async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>' } });
    const second = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>two</h1>']], { site: site.name, base_revision: site.revision }),
    });
    expect(second.status, second.text).toBe(201);
    const draft = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>three</h1>']], { site: site.name, base_revision: second.json.revision.id, publish: false }),
    });
    expect(draft.status, draft.text).toBe(201);
    const domain = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/domains`,
      token: owner.token,
      body: { domain: 'www.issue33-example.org' },
    });
    expect(domain.status, domain.text).toBe(201);

    const { context, page, errors } = await openPage(browser);
    await signInOverHttp(context, server, owner.account.email);
    await page.goto(`${server.appUrl}/sites/${site.name}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(site.name);
    await lookAt(page, 'issue33-site');

    // The access form: "New password" names the password field, and clicking it ticks no radio.
    const password = page.getByLabel('New password');
    expect(await password.count()).toBe(1);
    const checkedBefore = await page.locator('input[type=radio]:checked').evaluateAll((radios) => radios.map((radio) => (radio as HTMLInputElement).value));
    await page.getByText('New password', { exact: true }).click();
    expect(await password.evaluate((field) => field === document.activeElement)).toBe(true);
    expect(await page.locator('input[type=radio]:checked').evaluateAll((radios) => radios.map((radio) => (radio as HTMLInputElement).value))).toEqual(
      checkedBefore,
    );

    await page.goto(`${server.appUrl}/sites/${site.name}/domains/remove?domain=www.issue33-example.org`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBe(1);
    await lookAt(page, 'issue33-domain-remove');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("the signed-out drop page's refusal: said next to the zone, its focus ring clear of the zone's edge", { timeout: 60_000 }, async () => {
    const { context, page, errors } = await openPage(browser);
    await page.goto(`${server.appUrl}/publish`);
    const folder = join(tempDir('plinth-drop-'), 'no-index');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'about.html'), '<p>no index</p>');
    await page.getByLabel('Choose a folder…').setInputFiles(folder);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('index.html is required');
    // The refusal takes the focus, so its ring is drawn: it must not cover the zone above it.
    expect(await page.getByRole('alert').evaluate((alert) => alert === document.activeElement)).toBe(true);
    await lookAt(page, 'issue33-drop-refused');
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const gap = await page.evaluate(() => {
        const alert = document.querySelector<HTMLElement>('[data-drop-error]')!;
        const ring = parseFloat(getComputedStyle(alert, ':focus').outlineWidth) || 3;
        return alert.getBoundingClientRect().top - document.querySelector('[data-drop-zone]')!.getBoundingClientRect().bottom - ring;
      });
      expect(gap, `at ${width}px the refusal's focus ring covers the zone's edge`).toBeGreaterThanOrEqual(0);
    }
    // The refusal itself is the upload's 400; nothing else failed.
    expect(errors.filter((error) => !error.startsWith('400 '))).toEqual([]);
    await context.close();
  });

  it('the claim page of an unclaimed site, signed in', { timeout: 60_000 }, async () => {
    const site = await anonymousSite(server.store, Date.now() + 72 * 3600_000);
    const { context, page, errors } = await openPage(browser);
    const person = await accountWithToken(server.store, 'free');
    await signInOverHttp(context, server, person.account.email);
    await page.goto(`${server.appUrl}/claim/${site.claimToken}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBe(1);
    await lookAt(page, 'issue33-claim');
    expect(errors).toEqual([]);
    await context.close();
  });
});
