import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PLAN_LIMITS } from '../../src/rules/index.js';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { useAppServer } from '../helpers/fixtures.js';
import { AppClient } from './http-client.js';

/**
 * Issue 33, "What a newcomer hit in the app and on sites": the drop page's limits and refusals,
 * the site page's forms and wording (access, revisions, domains, a viewer's view), and the sign-in
 * page a members-only site sends its visitors to. Each answer is read as its words stand.
 */

const server = useAppServer();

const textOf = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();

/** A browser signed in as a new account of `plan`, with that account's API token. */
async function signedIn(plan: 'free' | 'builder' = 'builder'): Promise<{ browser: AppClient; person: TestAccount }> {
  const person = await accountWithToken(server.store, plan);
  const browser = new AppClient(server);
  await browser.signIn(person.account.email);
  return { browser, person };
}

async function deployJson(token: string, body: Record<string, unknown>): Promise<{ name: string; revision: { id: string; number: number } }> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', token, body });
  expect(res.status, res.text).toBe(201);
  return { name: res.json.site.name, revision: res.json.revision };
}

describe('the drop page, signed out', () => {
  const anon = PLAN_LIMITS.anonymous;

  it('says the limits of a site without an account, not the request cap, and that signing in allows more', async () => {
    const page = textOf((await new AppClient(server).get('/publish')).text);
    expect(page).not.toContain('90 MB per upload');
    expect(page).toContain(`Without an account a site can hold at most ${anon.maxFiles} files and 1 MB in all.`);
    expect(page).toContain(`Signed in, a free account allows ${PLAN_LIMITS.free.maxFiles} files and 5 MB per site.`);
  });

  it('signed in, says the plan’s own limits', async () => {
    const { browser } = await signedIn('free');
    const page = textOf((await browser.get('/publish')).text);
    expect(page).toContain(`On the Free plan: at most ${PLAN_LIMITS.free.maxFiles} files and 5 MB, 5 MB per file.`);
  });

  it('a site over the limit: the script is told the site total, the limit, and that signing in allows more', async () => {
    const browser = new AppClient(server);
    const csrf = await browser.formToken('/publish');
    const archive = tgzBytes([
      ['index.html', '<h1>big</h1>'],
      ['a.bin', randomBytes(700 * 1024)],
      ['b.bin', randomBytes(700 * 1024)],
    ]);
    const res = await browser.postRaw('/publish', archive, { accept: 'application/json', 'x-csrf-token': csrf, 'content-type': 'application/gzip' });
    expect(res.status).toBe(413);
    const message: string = JSON.parse(res.text).error.message;
    expect(message).toMatch(/^The site's files add up to (at least )?1\.\d MB; the limit per site is 1 MB\./);
    expect(message).toContain(`Without an account a site can hold at most ${anon.maxFiles} files and 1 MB in all.`);
    expect(message).toContain('Sign in to publish more');
  });

  it('a file that is no archive: people’s words, not "The body… Content-Type"', async () => {
    const browser = new AppClient(server);
    const csrf = await browser.formToken('/publish');
    const res = await browser.postMultipart('/publish', { csrf }, { field: 'archive', filename: 'notes.txt', content: Buffer.from('just some notes\n') });
    expect(res.status).toBe(400);
    const page = textOf(res.text);
    expect(page).toContain('This is not a .zip, .tar.gz or .tar archive. Choose an archive of your site, or drop its folder.');
    expect(page).not.toContain('Content-Type');
    expect(page).not.toMatch(/The body is/);
  });

  it('explains why a .map file was left out', async () => {
    const browser = new AppClient(server);
    const csrf = await browser.formToken('/publish');
    const archive = tgzBytes([
      ['index.html', '<h1>app</h1><script src="app.js"></script>'],
      ['app.js', 'console.log(1)\n//# sourceMappingURL=app.js.map'],
      ['app.js.map', '{"version":3}'],
    ]);
    const res = await browser.postMultipart('/publish', { csrf }, { field: 'archive', filename: 'site.tgz', content: archive });
    expect(res.status).toBe(303);
    const done = textOf((await browser.get('/publish/done')).text);
    expect(done).toContain('app.js.map');
    expect(done).toContain("nor source maps ( .map files): a source map hands every visitor the site's original source code");
  });
});

describe('the site page', () => {
  it('has no id twice: the access form’s password field is labelled and is not the radio', async () => {
    const { browser, person } = await signedIn();
    const site = await accountSite(server.store, person);
    const html = (await browser.get(`/sites/${site.name}`)).text;
    const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]!);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(html).toContain('<label for="access-new-password">New password</label>');
    expect(html).toMatch(/<input id="access-new-password" name="password" type="password"/);
  });

  it('offers a draft Promote only and an earlier revision Roll back only, and says how they differ', async () => {
    const { browser, person } = await signedIn();
    const first = await deployJson(person.token, { files: [{ path: 'index.html', content: '<h1>one</h1>' }] });
    const second = await deployJson(person.token, {
      site: first.name,
      base_revision: first.revision.id,
      files: [{ path: 'index.html', content: '<h1>two</h1>' }],
    });
    await deployJson(person.token, {
      site: first.name,
      base_revision: second.revision.id,
      publish: false,
      files: [{ path: 'index.html', content: '<h1>draft</h1>' }],
    });
    const page = textOf((await browser.get(`/sites/${first.name}`)).text);
    expect(page).toContain('Roll back to revision 1');
    expect(page).not.toContain('Promote revision 1');
    expect(page).toContain('Promote revision 3');
    expect(page).not.toContain('Roll back to revision 3');
    expect(page).toContain("“Roll back” publishes an earlier revision's files again, as a new revision. “Promote” makes a draft");
  });

  it('a rollback sent twice makes one revision and says so', async () => {
    const { browser, person } = await signedIn();
    const first = await deployJson(person.token, { files: [{ path: 'index.html', content: '<h1>one</h1>' }] });
    await deployJson(person.token, { site: first.name, base_revision: first.revision.id, files: [{ path: 'index.html', content: '<h1>two</h1>' }] });
    const path = `/sites/${first.name}`;
    const csrf = await browser.formToken(path);
    expect((await browser.post(`${path}/rollback`, { revision: first.revision.id, csrf })).status).toBe(303);
    expect(textOf((await browser.get(path)).text)).toContain('the content of revision 1 is live again as revision 3');
    expect((await browser.post(`${path}/rollback`, { revision: first.revision.id, csrf })).status).toBe(303);
    expect(textOf((await browser.get(path)).text)).toContain('Nothing to do: the content of revision 1 is what');
    expect(server.store.listRevisions(server.store.getSite(first.name)!.id).revisions).toHaveLength(3);
  });

  it('a viewer is not told to fix links or create DNS records', async () => {
    const owner = await accountWithToken(server.store, 'builder');
    const deployed = await deployJson(owner.token, { files: [{ path: 'index.html', content: '<a href="missing.html">gone</a>' }] });
    const site = server.store.getSite(deployed.name)!;
    expect(
      (await api(server, { method: 'POST', path: `/v1/sites/${site.name}/domains`, token: owner.token, body: { domain: 'www.viewer-example.org' } })).status,
    ).toBe(201);
    const { browser, person } = await signedIn('free');
    await server.store.setMember(site.id, person.account.id, 'viewer');
    const page = textOf((await browser.get(`/sites/${site.name}`)).text);
    expect(page).toContain('missing.html');
    expect(page).not.toContain('Fix them and publish again');
    expect(page).toContain('An editor or owner of the site can fix them.');
    expect(page).not.toContain('Create these records');
    expect(page).toContain('An owner of the site sets up its DNS records');
  });
});

describe('custom domains on a local install', () => {
  it('says that a *.localhost install cannot serve a domain or HTTPS, and removing asks first', async () => {
    const { browser, person } = await signedIn();
    const site = await accountSite(server.store, person);
    const path = `/sites/${site.name}`;
    expect((await browser.post(`${path}/domains`, { domain: 'www.local-example.org', csrf: await browser.formToken(path) })).status).toBe(303);
    const html = (await browser.get(path)).text;
    const page = textOf(html);
    expect(page).toContain('This is a local install');
    expect(page).toContain('sites.localhost , a name that exists only on this computer');
    expect(page).not.toContain('serve this site over HTTPS');
    // No one-click removal: the list leads to a page that asks.
    expect(html).not.toMatch(/<form method="post" action="\/sites\/[^"]+\/domains\/remove"/);
    const ask = await browser.get(`${path}/domains/remove?domain=www.local-example.org`);
    expect(ask.status).toBe(200);
    expect(textOf(ask.text)).toContain(`Remove www.local-example.org from ${site.name}?`);
    const domains = async (): Promise<string[]> =>
      (await api(server, { path: `/v1/sites/${site.name}/domains`, token: person.token })).json.domains.map((d: { domain: string }) => d.domain);
    expect(await domains()).toEqual(['www.local-example.org']);
    const removed = await browser.post(`${path}/domains/remove`, { domain: 'www.local-example.org', csrf: await browser.formToken(path) });
    expect(removed.status).toBe(303);
    expect(await domains()).toEqual([]);
  });
});

describe('signing in to open a members-only site', () => {
  it('names the site and leaves out the pitch for publishing without an account', async () => {
    const next = encodeURIComponent('/site-access?site=team-notes&return=%2F');
    const page = textOf((await new AppClient(server).get(`/login?next=${next}`)).text);
    expect(page).toContain('Sign in to open team-notes');
    expect(page).toContain('team-notes is visible to its members only.');
    expect(page).not.toContain('Publish a site without an account');
    // Any other sign-in keeps its usual page.
    expect(textOf((await new AppClient(server).get('/login')).text)).toContain('Publish a site without an account');
  });
});
