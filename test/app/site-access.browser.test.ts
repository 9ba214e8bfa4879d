import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { inspectPage, openPage, signIn } from './browser.js';
import { useBrowser, useAppServer } from '../helpers/fixtures.js';

/** Private sites in a real browser: the password page on the site host, and the members hop through the app. */

let owner: TestAccount;
let counter = 0;
const PASSWORD = 'open sesame seed';
const PAGE = '<!doctype html><html lang="en"><head><title>Private</title></head><body><h1>Behind the gate</h1></body></html>';

const server = useAppServer();

const browser = useBrowser();

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

describe('protected sites in Chromium', () => {
  it('signs a visitor in with the password page and keeps them in', async () => {
    const site = await accountSite(server.store, owner, [], {
      files: { 'index.html': PAGE, 'docs/index.html': PAGE.replace('Behind the gate', 'Docs behind the gate') },
    });
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'password', password: PASSWORD } });
    const { context, page, errors } = await openPage(browser);
    const first = await page.goto(`${server.siteUrl(site.name)}/docs/`);
    expect(first!.status()).toBe(401);
    await expect.poll(() => page.getByRole('heading', { name: 'Password required' }).count()).toBe(1);
    await inspectPage(page, 'site-password');

    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Open the site' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not right');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Open the site' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Docs behind the gate' }).count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe('/docs/');
    const cookies = await context.cookies();
    const access = cookies.find((cookie) => cookie.name === 'plinth_access')!;
    expect(access).toMatchObject({ domain: `${site.name}.sites.localhost`, httpOnly: true, sameSite: 'Lax' });
    await page.goto(server.siteUrl(site.name));
    await expect.poll(() => page.getByRole('heading', { name: 'Behind the gate' }).count()).toBe(1);
    expect(errors.filter((error) => !error.includes('401'))).toEqual([]);
    await context.close();
  });

  it('takes a member through the app sign-in and back to the page they asked for', async () => {
    const email = `member-${Date.now().toString(36)}${++counter}@example.com`;
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': PAGE, 'team.html': PAGE.replace('Behind the gate', 'Team page') } });
    await api(server, { method: 'PUT', path: `/v1/sites/${site.name}/access`, token: owner.token, body: { mode: 'members' } });
    const { context, page } = await openPage(browser);

    const first = await page.goto(`${server.siteUrl(site.name)}/team`);
    expect(first!.status()).toBe(401);
    await expect.poll(() => page.getByRole('heading', { name: 'Members only' }).count()).toBe(1);
    await inspectPage(page, 'site-members-only');
    await page.getByRole('link', { name: 'Sign in with Plinth' }).click();
    // Not signed in to the app yet: its sign-in comes first, then the hop page.
    await page.waitForURL(/\/login/);
    await signIn(page, server, email);
    // Signed in but not a member: the app says so and hands out nothing.
    await page.waitForURL(/\/site-access/);
    await expect.poll(() => page.getByRole('heading', { name: 'Not a member' }).count()).toBe(1);

    const account = server.store.getAccountByEmail(email)!;
    await server.store.setMember(site.id, account.id, 'viewer');
    await page.reload();
    await page.getByRole('button', { name: `Open ${site.name}` }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Team page' }).count()).toBe(1);
    const here = new URL(page.url());
    expect(here.host).toBe(`${site.name}.sites.localhost:${server.port}`);
    expect(here.pathname).toBe('/team');
    // The app's session cookie stayed on the app host.
    const siteCookies = await context.cookies(server.siteUrl(site.name));
    expect(siteCookies.map((cookie) => cookie.name)).toEqual(['plinth_access']);
    await context.close();
  });
});
