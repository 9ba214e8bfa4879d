import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeFiles } from '../helpers/sites.js';
import { startAppServer, type AppServer } from './browser.js';
import { AppClient } from './http-client.js';

/** The site page of the account app shows the link check of the live revision. */

let server: AppServer;

beforeAll(async () => {
  server = await startAppServer();
});
afterAll(async () => {
  await server?.close();
});

async function ownSite(email: string, name: string, extras?: Parameters<AppServer['store']['commitRevision']>[0]['extras']): Promise<void> {
  const account = server.store.getAccountByEmail(email)!;
  const result = await server.store.commitRevision({
    site: name,
    create: { name, plan: 'builder', claimed: true, accountId: account.id },
    baseRevision: null,
    files: await storeFiles(server.store, { 'index.html': '<h1>x</h1>' }),
    kind: 'deploy',
    createdBy: email,
    ...(extras ? { extras } : {}),
  });
  expect(result.ok).toBe(true);
}

describe('the site page', () => {
  it('lists the broken links of the live revision, escaped, and says how many there are in all', async () => {
    const client = new AppClient(server);
    const email = 'linkcheck@example.com';
    await client.signIn(email);
    await ownSite(email, 'linked-site', {
      warnings: [
        { file: 'index.html', line: 3, ref: 'img/logo.png', kind: 'broken_link' },
        { file: 'docs/a.html', line: 9, ref: '<script>x</script>.css', kind: 'broken_link' },
      ],
      warningsTotal: 5,
    });
    const page = await client.get('/sites/linked-site');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2>Broken links</h2>');
    expect(page.text).toContain('5 references');
    expect(page.text).toContain('the first 2 are listed');
    expect(page.text).toContain('<code>img/logo.png</code>');
    expect(page.text).toContain('&lt;script&gt;x&lt;/script&gt;.css');
    expect(page.text).not.toContain('<script>x</script>');
  });

  it('shows no such section when every reference leads somewhere', async () => {
    const client = new AppClient(server);
    const email = 'nolinks@example.com';
    await client.signIn(email);
    await ownSite(email, 'clean-site');
    const page = await client.get('/sites/clean-site');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Broken links');
  });
});
