import { describe, expect, it } from 'vitest';
import { storeFiles } from '../helpers/sites.js';
import { type AppServer } from './browser.js';
import { AppClient } from './http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/** The site page of the account app shows the link check of the live revision. */

const server = useAppServer();

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

describe('deleting a revision from the site page', () => {
  async function siteWithDraft(email: string, name: string): Promise<{ draft: string }> {
    await ownSite(email, name);
    const site = server.store.getSite(name)!;
    const result = await server.store.commitRevision({
      site: name,
      baseRevision: site.liveRevision!,
      files: await storeFiles(server.store, { 'index.html': '<h1>draft by mistake</h1>' }),
      kind: 'deploy',
      createdBy: email,
      publish: false,
    });
    if (!result.ok) throw new Error(result.reason);
    return { draft: result.revision.id };
  }

  it('offers owners a delete button for each revision but the live one, asks on a page of its own, then deletes', async () => {
    const client = new AppClient(server);
    const email = 'revision-owner@example.com';
    await client.signIn(email);
    const { draft } = await siteWithDraft(email, 'deleting-revisions');
    const page = await client.get('/sites/deleting-revisions');
    expect(page.text).toContain('Delete revision 2…');
    expect(page.text).not.toContain('Delete revision 1…');

    const ask = await client.get('/sites/deleting-revisions/revisions/2/delete');
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Delete revision 2 of deleting-revisions?');
    expect(server.store.getRevision(draft)).toBeDefined();
    const live = await client.get('/sites/deleting-revisions/revisions/1/delete');
    expect(live.status).toBe(409);

    const csrf = await client.formToken('/sites/deleting-revisions/revisions/2/delete');
    // Another origin, or no form token: refused, nothing deleted.
    expect((await client.post('/sites/deleting-revisions/revisions/2/delete', { revision: draft, csrf }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await client.post('/sites/deleting-revisions/revisions/2/delete', { revision: draft })).status).toBe(403);
    expect(server.store.getRevision(draft)).toBeDefined();

    const done = await client.post('/sites/deleting-revisions/revisions/2/delete', { revision: draft, csrf });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/sites/deleting-revisions');
    expect(server.store.getRevision(draft)).toBeUndefined();
    const after = await client.get('/sites/deleting-revisions');
    expect(after.text).toContain('Revision 2 was deleted');
    expect(after.text).not.toContain('#2');
  });

  it('shows editors and viewers no delete button, and refuses their form', async () => {
    const owner = new AppClient(server);
    await owner.signIn('revision-owner-2@example.com');
    const { draft } = await siteWithDraft('revision-owner-2@example.com', 'editors-cannot-delete');
    const editor = new AppClient(server);
    await editor.signIn('revision-editor@example.com');
    await server.store.setMember(
      server.store.getSite('editors-cannot-delete')!.id,
      server.store.getAccountByEmail('revision-editor@example.com')!.id,
      'editor',
    );
    const page = await editor.get('/sites/editors-cannot-delete');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Delete revision');
    expect((await editor.get('/sites/editors-cannot-delete/revisions/2/delete')).status).toBe(403);
    const refused = await editor.post('/sites/editors-cannot-delete/revisions/2/delete', {
      revision: draft,
      csrf: await editor.formToken('/sites/editors-cannot-delete'),
    });
    expect(refused.status).toBe(403);
    expect(server.store.getRevision(draft)).toBeDefined();
  });

  it('lets owners keep previews to members, and lists preview links then', async () => {
    const client = new AppClient(server);
    const email = 'previews-owner@example.com';
    await client.signIn(email);
    await siteWithDraft(email, 'kept-previews');
    const before = await client.get('/sites/kept-previews');
    expect(before.text).toContain('Who can see previews of a public site');
    expect(before.text).toContain(`href="http://2--kept-previews.sites.localhost:${server.port}"`);
    const saved = await client.post('/sites/kept-previews/previews', { previews: 'members', csrf: await client.formToken('/sites/kept-previews') });
    expect(saved.status).toBe(303);
    expect(server.store.getSite('kept-previews')!.previews?.mode).toBe('members');
    const after = await client.get('/sites/kept-previews');
    expect(after.text).toMatch(/href="http:\/\/2--kept-previews\.sites\.localhost:\d+\/\.plinth\/share\?token=pv1\.[^"]+"/);
    expect(after.text).toMatch(/id="previews-members" name="previews" value="members" checked/);
  });
});
