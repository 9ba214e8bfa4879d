import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { inspectPage, openPage, overflowingRegions } from './browser.js';
import { signInOverHttp } from './http-client.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/**
 * The app's tables of records on a phone: a site with several revisions, broken links, members
 * and pending invitations, a domain's DNS records, the files of a site, the tokens page with a
 * connected app, and the billing page, each filled as a busy account has them. At 390 px no
 * table may scroll sideways inside its region (inspectPage); at 1280 px they stay tables.
 */

let owner: TestAccount;
let name: string;

const LONG_PATH = 'assets/photographs/summer-2024/the-bakery-front-window-at-dawn-with-fresh-loaves.jpg';

const server = useAppServer();

const browser = useBrowser();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');

  // Three deploys through the API (the link check runs there), the last with two broken links.
  const files = (title: string, extra: Record<string, string> = {}) => [
    {
      path: 'index.html',
      content: `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1>${extra.body ?? ''}</body></html>`,
    },
    { path: LONG_PATH, content: 'not really a photograph' },
    { path: 'about/our-opening-hours-and-where-to-find-us.html', content: '<p>Hours</p>' },
    { path: 'style.css', content: 'body { margin: 0 }' },
  ];
  let deploy = await api(server, { method: 'POST', path: '/v1/deploy', token: owner.token, body: { files: files('First') } });
  expect(deploy.status, deploy.text).toBe(201);
  name = deploy.json.site.name as string;
  for (const title of ['Second', 'Third']) {
    const body = title === 'Third' ? '<a href="menu/seasonal-specials-for-the-whole-family.html">Menu</a><img src="logo.svg" alt="">' : '';
    deploy = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { site: name, base_revision: deploy.json.revision.id, files: files(title, { body }) },
    });
    expect(deploy.status, deploy.text).toBe(201);
  }

  // Two members besides the owner.
  const siteId = server.store.getSite(name)!.id;
  for (const [plan, role] of [
    ['free', 'editor'],
    ['free', 'viewer'],
  ] as const) {
    const member = await accountWithToken(server.store, plan);
    await server.store.setMember(siteId, member.account.id, role);
  }

  // A second token with a long name, and an MCP app connected as the token endpoint does it.
  await server.store.addApiToken({
    accountId: owner.account.id,
    tokenHash: hashToken(`pl_${randomBytes(24).toString('base64url')}`),
    name: 'GitHub Actions deploy of the bakery website',
  });
  const code = randomBytes(24).toString('base64url');
  await server.store.createAuthorizationCode(hashToken(code), {
    clientId: 'mcp_tables',
    accountId: owner.account.id,
    redirectUri: 'http://127.0.0.1:33418/callback',
    codeChallenge: 'unused',
    resource: `${server.config.publicUrls.mcp}/mcp`,
    scope: 'sites',
    expiresAt: Date.now() + 60_000,
  });
  const connected = await server.store.redeemAuthorizationCode(
    hashToken(code),
    () => true,
    { id: `grant_${randomBytes(12).toString('hex')}`, clientName: 'Claude Desktop on the kitchen laptop', redirectHost: '127.0.0.1:33418' },
    {
      accessHash: hashToken(`pla_${randomBytes(32).toString('base64url')}`),
      accessExpiresAt: Date.now() + 3600_000,
      refreshHash: hashToken(`plr_${randomBytes(32).toString('base64url')}`),
      refreshExpiresAt: Date.now() + 30 * 24 * 3600_000,
    },
  );
  expect(connected.ok).toBe(true);
});

/** The owner, signed in (over HTTP: the tables are the subject here) on a phone-sized page. */
async function ownerOnPhone(): Promise<{ page: Page; close: () => Promise<void>; errors: string[] }> {
  const { context, page, errors } = await openPage(browser, 390);
  await signInOverHttp(context, server, owner.account.email);
  return { page, errors, close: () => context.close() };
}

describe('tables of records on a phone', () => {
  it('the site page: revisions, broken links, people and DNS records, every action in reach', async () => {
    const { page, errors, close } = await ownerOnPhone();
    await page.goto(`${server.appUrl}/sites/${name}`);
    for (const invitee of ['pastry-chef-with-a-long-address@example.com', 'accountant@example.org']) {
      await page.getByLabel('E-mail address').fill(invitee);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain(`An invitation was e-mailed to ${invitee}`);
    }
    for (const domain of ['www.the-corner-bakery-on-main-street.org', 'the-corner-bakery-on-main-street.org']) {
      await page.getByLabel('Domain').fill(domain);
      await page.getByRole('button', { name: 'Add domain' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain(`${domain} was added`);
    }

    await expect
      .poll(() =>
        page
          .getByRole('region', { name: /^Revisions of / })
          .getByRole('row')
          .count(),
      )
      .toBe(4);
    expect(await page.getByRole('region', { name: 'Broken links in the live revision' }).getByRole('row').count()).toBe(3);
    expect(await page.getByRole('region', { name: 'Members and pending invitations' }).getByRole('row').count()).toBe(6);
    expect(await page.getByRole('region', { name: /^DNS records for / }).count()).toBe(2);
    // Stacked, the column headers are still there for a screen reader, and each row keeps its header.
    expect(await page.getByRole('columnheader', { name: 'Published' }).count()).toBe(1);
    expect(await page.getByRole('rowheader', { name: /^#3/ }).count()).toBe(1);
    await inspectPage(page, 'tables-site');

    // A stacked cell of text and a date is one value beside its name: the date is not dropped into the name's column.
    await page.setViewportSize({ width: 390, height: 900 });
    const invited = page.getByRole('row', { name: /^accountant@example\.org/ });
    const role = (await invited.getByRole('cell', { name: /editor \(invited, until/ }).boundingBox())!;
    const until = (await invited.locator('time').boundingBox())!;
    expect(until.x, 'the date starts in the value column').toBeGreaterThan(role.x + 100);

    // The actions of a stacked row are on screen and work.
    const rollBack = page.getByRole('button', { name: 'Roll back to revision 1' });
    await rollBack.scrollIntoViewIfNeeded();
    const box = (await rollBack.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await rollBack.click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('the content of revision 1 is live again as revision 4');
    expect(await overflowingRegions(page)).toEqual([]);
    expect(errors).toEqual([]);
    await close();
  });

  it('the files of a site', async () => {
    const { page, errors, close } = await ownerOnPhone();
    await page.goto(`${server.appUrl}/sites/${name}/files`);
    await expect.poll(() => page.getByRole('rowheader', { name: LONG_PATH }).count()).toBe(1);
    await inspectPage(page, 'tables-files');
    expect(errors).toEqual([]);
    await close();
  });

  it('the tokens page with a connected app', async () => {
    const { page, errors, close } = await ownerOnPhone();
    await page.goto(`${server.appUrl}/tokens`);
    await expect.poll(() => page.getByRole('rowheader', { name: 'GitHub Actions deploy of the bakery website' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Disconnect Claude Desktop on the kitchen laptop' }).count()).toBe(1);
    await inspectPage(page, 'tables-tokens');
    expect(errors).toEqual([]);
    await close();
  });

  it('the billing page: usage, each site and the plans', async () => {
    const { page, errors, close } = await ownerOnPhone();
    await page.goto(`${server.appUrl}/billing`);
    await expect.poll(() => page.getByRole('rowheader', { name: name }).count()).toBe(1);
    expect(await page.getByRole('rowheader', { name: 'Storage (live revisions)' }).count()).toBe(1);
    await inspectPage(page, 'tables-billing');
    expect(errors).toEqual([]);
    await close();
  });
});
