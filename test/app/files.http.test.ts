import { describe, expect, it } from 'vitest';
import { api } from '../api/api-helpers.js';
import { AppClient } from './http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * The app's file browser of a site's live revision: members see every path and text content as
 * escaped text; nobody else sees anything, and no path reaches outside the revision.
 */

let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;

const server = useAppServer();

async function ownerWithSite(): Promise<{ client: AppClient; name: string }> {
  const client = new AppClient(server);
  await client.signIn(email('owner'));
  await client.post('/tokens', { name: 't', csrf: await client.formToken('/tokens') });
  const token = /id="new-token">([^<]+)</.exec((await client.get('/tokens')).text)![1]!;
  const created = await api(server, {
    method: 'POST',
    path: '/v1/deploy',
    token,
    body: {
      files: [
        { path: 'index.html', content: '<!doctype html><title>x</title><script>alert(document.cookie)</script>' },
        { path: 'docs/a b.txt', content: 'spaced name' },
        { path: 'logo.png', content: 'iVBORw0KGgo=', encoding: 'base64' },
      ],
    },
  });
  return { client, name: created.json.site.name as string };
}

describe('the file browser', () => {
  it('lists the live revision and shows text files escaped, never as a page', async () => {
    const { client, name } = await ownerWithSite();
    const list = await client.get(`/sites/${name}/files`);
    expect(list.status).toBe(200);
    expect(list.text).toContain(`href="/sites/${name}/files/docs/a%20b.txt"`);
    expect(list.text).toContain('3 files');
    const index = await client.get(`/sites/${name}/files/index.html`);
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    expect(index.text).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(index.text).not.toContain('<script>alert');
    expect((await client.get(`/sites/${name}/files/docs/a%20b.txt`)).text).toContain('spaced name');
    expect((await client.get(`/sites/${name}/files/logo.png`)).text).toContain('not a text file');
  });

  it.each([['../../tokens'], ['%2e%2e/%2e%2e/tokens'], ['/etc/passwd'], ['missing.html'], ['docs']])('refuses the path %s with 404', async (path) => {
    const { client, name } = await ownerWithSite();
    const res = await client.get(`/sites/${name}/files/${path}`);
    expect([404, 400]).toContain(res.status);
    expect(res.text).not.toContain('API token (');
  });

  it('shows nothing of another person’s site, and sends a signed-out visitor to sign in', async () => {
    const { name } = await ownerWithSite();
    const stranger = new AppClient(server);
    await stranger.signIn(email('stranger'));
    expect((await stranger.get(`/sites/${name}/files`)).status).toBe(404);
    expect((await stranger.get(`/sites/${name}/files/index.html`)).status).toBe(404);
    const signedOut = await new AppClient(server).get(`/sites/${name}/files/index.html`);
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.location).toMatch(/^\/login\?next=/);
  });
});
