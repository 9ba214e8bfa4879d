import { describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api } from '../api/api-helpers.js';
import { useAppServer, useBrowser } from '../helpers/fixtures.js';
import { inspectPage, openPage } from './browser.js';
import { signInOverHttp } from './http-client.js';

/**
 * Issue 33 in Chromium: what a newcomer met on the pages. The access form's "New password" label
 * named the "Password" radio (two elements had its id), a members-only site's visitor got a
 * sign-in page that never named the site, and the signed-out drop page promised 90 MB.
 * Screenshots at 390 and 1280 px go to test/screenshots/.
 */

const server = useAppServer();
const browser = useBrowser();
let counter = 0;
const email = (who: string): string => `${who}-${Date.now().toString(36)}${++counter}@example.com`;

describe('the access form', () => {
  it('"New password" labels the password field, and clicking it leaves the radios alone', async () => {
    const address = email('owner');
    const { context, page } = await openPage(browser, 390);
    await signInOverHttp(context, server, address);
    const owner = { account: server.store.getAccountByEmail(address)!, token: '' };
    const site = await accountSite(server.store, owner);
    await page.goto(`${server.appUrl}/sites/${site.name}`);
    const radio = page.getByRole('radio', { name: 'Password: visitors type a password you choose' });
    expect(await radio.isChecked()).toBe(false);
    await page.getByText('New password', { exact: true }).click();
    expect(await radio.isChecked()).toBe(false);
    const field = page.getByLabel('New password');
    expect(await field.getAttribute('type')).toBe('password');
    await field.fill('a long enough password');
    await radio.check();
    await page.getByRole('button', { name: 'Save access' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved: Password');
    await context.close();
  });
});

describe('a members-only site’s visitor', () => {
  it('signs in on a page that names the site and does not pitch publishing', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<!doctype html><title>Team</title><h1>Team page</h1>' } });
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'members' } });
    const { context, page } = await openPage(browser);
    await page.goto(server.siteUrl(site.name));
    await page.getByRole('link', { name: 'Sign in with Plinth' }).click();
    await page.waitForURL(/\/login/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Sign in to open ${site.name}`);
    expect(await page.getByText(`${site.name} is visible to its members only.`).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Publish a site without an account' }).count()).toBe(0);
    await inspectPage(page, 'sign-in-members-site');
    await context.close();
  });
});

describe('the drop page, signed out', () => {
  it('shows the limits of a site without an account', async () => {
    const { context, page } = await openPage(browser, 390);
    await page.goto(`${server.appUrl}/publish`);
    const hint = page.locator('#archive-hint');
    await expect.poll(() => hint.textContent()).toContain('Without an account a site can hold at most 100 files and 1 MB in all.');
    expect(await hint.textContent()).not.toContain('90 MB');
    await inspectPage(page, 'publish-signed-out');
    await context.close();
  });
});
