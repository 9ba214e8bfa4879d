import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, visit } from '../api/api-helpers.js';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { request } from '../helpers/http.js';
import { AppClient } from './http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Drop to publish over HTTP: the plain form upload (no script), the script's raw upload, and the
 * attacks on both — forged forms, oversized bodies, drops onto other people's sites, and archives
 * that try to climb out of the site — which the deploy operation refuses as it does for the API.
 */

let counter = 0;
const email = (who: string): string => `${who}-${(++counter).toString(36)}@example.com`;
const INDEX = '<!doctype html><html lang="en"><head><title>Dropped</title></head><body><h1>Dropped</h1></body></html>';

const server = useAppServer();

/** The flash result page after a drop: the facts it shows. */
async function resultOf(client: AppClient): Promise<{ text: string; name: string; claim?: string }> {
  const done = await client.get('/publish/done');
  expect(done.status).toBe(200);
  const name = /<dt>Address<\/dt><dd><a href="http:\/\/([a-z0-9-]+)\.sites\.localhost/.exec(done.text)?.[1];
  const claim = /id="claim-link">([^<]+)</.exec(done.text)?.[1];
  return { text: done.text, name: name!, ...(claim ? { claim } : {}) };
}

const sitesOf = async (token: string): Promise<string[]> =>
  ((await api(server, { path: '/v1/sites', token })).json.sites as Array<{ name: string }>).map((site) => site.name);

async function personWithToken(client: AppClient, who: string): Promise<{ address: string; token: string }> {
  const address = email(who);
  await client.signIn(address);
  const created = await client.post('/tokens', { name: 'check', csrf: await client.formToken('/tokens') });
  expect(created.status).toBe(303);
  const token = /id="new-token">([^<]+)</.exec((await client.get('/tokens')).text)![1]!;
  return { address, token };
}

describe('drop to publish, signed out', () => {
  it('a plain form upload of a .tar.gz publishes a temporary site and shows its claim link', async () => {
    const client = new AppClient(server);
    const csrf = await client.formToken('/publish');
    const posted = await client.postMultipart(
      '/publish',
      { csrf },
      {
        field: 'archive',
        filename: 'site.tar.gz',
        content: tgzBytes([
          ['my-site/index.html', INDEX],
          ['my-site/.env', 'SECRET=1'],
        ]),
      },
    );
    expect(posted.status, posted.text.slice(0, 300)).toBe(303);
    expect(posted.headers.location).toBe('/publish/done');
    const result = await resultOf(client);
    expect(result.text).toContain('Your site is live');
    expect(result.text).toContain('#1');
    expect(result.text).toContain('.env');
    expect(result.claim).toMatch(new RegExp(`^${server.appUrl}/claim/ct_`));
    expect(result.text).toContain('will be deleted on');
    expect((await visit(server, result.name)).text).toContain('Dropped');
    // The result survives a reload (the claim link is shown nowhere else).
    expect((await client.get('/publish/done')).text).toContain(result.claim!);
    // Another browser sees nothing of it.
    expect((await new AppClient(server).get('/publish/done')).status).toBe(404);
  });

  it('the script’s upload (archive as the body, token in a header) answers JSON and the same result page', async () => {
    const client = new AppClient(server);
    const csrf = await client.formToken('/publish');
    const posted = await client.postRaw('/publish', zipBytes([['index.html', INDEX]]), {
      accept: 'application/json',
      'content-type': 'application/zip',
      'x-csrf-token': csrf,
      'x-plinth-left-out': `node_modules/,${'a'.repeat(300)}/,../up/`,
    });
    expect(posted.status, posted.text).toBe(200);
    expect(JSON.parse(posted.text)).toEqual({ next: '/publish/done' });
    const result = await resultOf(client);
    expect(result.text).toContain('node_modules/');
    expect(result.text).not.toContain('../up/');
    expect(result.text).not.toContain('a'.repeat(300));
    expect((await visit(server, result.name)).status).toBe(200);
  });

  it('an empty file field is a field error, not a deploy', async () => {
    const client = new AppClient(server);
    const posted = await client.postMultipart(
      '/publish',
      { csrf: await client.formToken('/publish') },
      { field: 'archive', filename: '', content: Buffer.alloc(0) },
    );
    expect(posted.status).toBe(400);
    expect(posted.text).toContain('Choose a .zip or .tar.gz archive of your site.');
    expect(posted.text).toContain('href="#archive"');
  });
});

describe('drop to publish, attacks', () => {
  it.each([
    ['no form token', (csrf: string) => ({ fields: {}, headers: {} as Record<string, string>, csrf })],
    ['a wrong form token', () => ({ fields: { csrf: 'forged' }, headers: {} as Record<string, string> })],
    ['another site’s Origin', (csrf: string) => ({ fields: { csrf }, headers: { origin: 'http://evil.example' } as Record<string, string> })],
  ])('a form upload with %s publishes nothing', async (_name, make) => {
    const client = new AppClient(server);
    const csrf = await client.formToken('/publish');
    const { fields, headers } = make(csrf);
    const marker = `forged-${randomBytes(4).toString('hex')}`;
    const posted = await client.postMultipart(
      '/publish',
      fields,
      { field: 'archive', filename: 's.tgz', content: tgzBytes([['index.html', marker]]) },
      headers,
    );
    expect(posted.status).toBe(403);
    expect((await client.get('/publish/done')).status).toBe(404);
  });

  it('the script’s upload needs the header token, checked before the body is read', async () => {
    const client = new AppClient(server);
    await client.formToken('/publish');
    for (const headers of [{}, { 'x-csrf-token': 'forged' }] as Record<string, string>[]) {
      const posted = await client.postRaw('/publish', tgzBytes([['index.html', INDEX]]), { accept: 'application/json', ...headers });
      expect(posted.status).toBe(403);
      expect(JSON.parse(posted.text)).toMatchObject({ error: { code: 'forbidden' } });
    }
  });

  it('a body declared over 90 MB is refused at once with 413', async () => {
    const client = new AppClient(server);
    const csrf = await client.formToken('/publish');
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await request({
      port: server.port,
      host: new URL(server.appUrl).host,
      method: 'POST',
      path: '/publish',
      headers: { cookie, origin: server.appUrl, accept: 'application/json', 'x-csrf-token': csrf, 'content-length': String(200 * 1024 * 1024) },
      body: Buffer.alloc(1024),
    }).catch((err: Error) => ({ status: -1, text: err.message }));
    // The server answers before the body ends and closes the connection.
    if (res.status !== -1) {
      expect(res.status).toBe(413);
      expect(res.text).toContain('at most 90 MB');
    }
  });

  it('an archive over the anonymous size limit is refused with the API’s message', async () => {
    const client = new AppClient(server);
    const big = randomBytes(1200 * 1024);
    const posted = await client.postMultipart(
      '/publish',
      { csrf: await client.formToken('/publish') },
      {
        field: 'archive',
        filename: 'big.tgz',
        content: tgzBytes([
          ['index.html', INDEX],
          ['big.bin', big],
        ]),
      },
    );
    expect(posted.status).toBe(413);
    expect(posted.text).toContain('1 MB');
    expect(posted.text).toContain('Sign in to publish more: a free account allows 500 files and 5 MB per site.');
  });

  it.each([
    [
      'a ../ path',
      tarBytes([
        ['index.html', INDEX],
        ['../escape.html', 'x'],
      ]),
    ],
    [
      'an absolute path',
      tarBytes([
        ['index.html', INDEX],
        ['/etc/escape.html', 'x'],
      ]),
    ],
    [
      'a zip with ../',
      zipBytes([
        ['index.html', INDEX],
        ['a/../../escape.html', 'x'],
      ]),
    ],
  ])('an archive with %s is refused by the deploy checks, and nothing is published', async (_name, archive) => {
    const client = new AppClient(server);
    const posted = await client.postRaw('/publish', archive, { accept: 'application/json', 'x-csrf-token': await client.formToken('/publish') });
    expect(posted.status).toBe(400);
    expect(JSON.parse(posted.text)).toMatchObject({ error: { code: 'bad_request' } });
    expect((await client.get('/publish/done')).status).toBe(404);
  });

  it('a drop onto someone else’s site is refused (404) and the site is unchanged', async () => {
    const owner = new AppClient(server);
    const { token } = await personWithToken(owner, 'owner');
    const created = await api(server, { method: 'POST', path: '/v1/deploy', token, body: { files: [{ path: 'index.html', content: '<h1>mine</h1>' }] } });
    const name = created.json.site.name as string;
    const stranger = new AppClient(server);
    await stranger.signIn(email('stranger'));
    const csrf = await stranger.formToken('/');
    const raw = await stranger.postRaw(`/sites/${name}/publish`, tgzBytes([['index.html', '<h1>taken</h1>']]), {
      accept: 'application/json',
      'x-csrf-token': csrf,
      'x-base-revision': created.json.revision.id,
    });
    expect(raw.status).toBe(404);
    const form = await stranger.postMultipart(
      `/sites/${name}/publish`,
      { csrf, base_revision: created.json.revision.id },
      { field: 'archive', filename: 's.tgz', content: tgzBytes([['index.html', '<h1>taken</h1>']]) },
    );
    expect(form.status).toBe(404);
    // Signed out, the same post goes to sign-in and changes nothing.
    const signedOut = new AppClient(server);
    const anon = await signedOut.postMultipart(
      `/sites/${name}/publish`,
      { csrf: await signedOut.formToken('/publish') },
      { field: 'archive', filename: 's.tgz', content: tgzBytes([['index.html', '<h1>taken</h1>']]) },
    );
    expect(anon.status).toBe(303);
    expect(anon.headers.location).toMatch(/^\/login\?next=/);
    expect((await visit(server, name)).text).toContain('mine');
    expect((await api(server, { path: `/v1/sites/${name}`, token })).json.live_revision.number).toBe(1);
  });
});

describe('drop to publish, signed in', () => {
  it('a drop makes a site in the account; a drop on its page makes revision 2; a stale page gets 409', async () => {
    const client = new AppClient(server);
    const { token } = await personWithToken(client, 'dropper');
    const csrf = await client.formToken('/');
    const first = await client.postMultipart(
      '/publish',
      { csrf },
      { field: 'archive', filename: 's.zip', content: zipBytes([['index.html', '<h1>one</h1>']]) },
    );
    expect(first.status).toBe(303);
    const { name, claim, text } = await resultOf(client);
    expect(claim).toBeUndefined();
    expect(text).toContain(`Manage ${name}`);
    expect(await sitesOf(token)).toContain(name);
    const site = (await api(server, { path: `/v1/sites/${name}`, token })).json;
    expect(site).toMatchObject({ claimed: true, role: 'owner', plan: 'free' });

    const page = await client.get(`/sites/${name}`);
    expect(page.text).toContain('Publish a new version');
    expect(page.text).toContain(`name="base_revision" value="${site.live_revision.id}"`);
    const second = await client.postRaw(`/sites/${name}/publish`, tgzBytes([['index.html', '<h1>two</h1>']]), {
      accept: 'application/json',
      'x-csrf-token': csrf,
      'x-base-revision': site.live_revision.id,
    });
    expect(second.status, second.text).toBe(200);
    expect((await resultOf(client)).text).toContain('Revision 2 is live');
    expect((await visit(server, name)).text).toContain('two');

    // The page still shows revision 1: a drop from it is refused, nothing published.
    const stale = await client.postMultipart(
      `/sites/${name}/publish`,
      { csrf, base_revision: site.live_revision.id },
      { field: 'archive', filename: 's.tgz', content: tgzBytes([['index.html', '<h1>stale</h1>']]) },
    );
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('Reload the page');
    expect((await visit(server, name)).text).toContain('two');
  });

  it('a Free account’s drop meets the Free limits (5 MB per site)', async () => {
    const client = new AppClient(server);
    await client.signIn(email('free'));
    const posted = await client.postRaw(
      '/publish',
      tgzBytes([
        ['index.html', INDEX],
        ['big.bin', randomBytes(5.5 * 1024 * 1024)],
      ]),
      {
        accept: 'application/json',
        'x-csrf-token': await client.formToken('/'),
      },
    );
    expect(posted.status).toBe(413);
    expect(JSON.parse(posted.text).error.message).toContain('5 MB');
  });
});
