import { beforeAll, describe, expect, it } from 'vitest';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request } from '../helpers/http.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, type TestAccount } from './api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** Drafts (`publish: false`), preview addresses `<number>--<name>`, and promote, over REST. */

const DAY = 24 * 3600_000;
let clock = Date.now();
let owner: TestAccount;
let viewer: TestAccount;

const visit = (label: string, path = '/', headers: Record<string, string> = {}) =>
  request({ port: server.port, host: `${label}.sites.localhost`, path, headers });

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  viewer = await accountWithToken(server.store, 'builder');
});

describe('drafts, previews and promote', () => {
  it('stores a JSON draft without making it live, serves it at its preview address and promotes it', async () => {
    const site = await accountSite(server.store, owner, [[viewer, 'viewer']], { files: { 'index.html': '<h1>one</h1>' } });
    const draft = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>two</h1>']], { site: site.name, base_revision: site.revision, publish: false }),
    });
    expect(draft.status).toBe(201);
    expect(draft.json.revision).toMatchObject({ number: 2, live: false, preview_url: `http://2--${site.name}.sites.localhost` });
    expect(draft.json.agent_message).toContain('/promote');

    // The live site is unchanged; the draft has its own address, marked noindex.
    expect((await visit(site.name)).text).toContain('one');
    const preview = await visit(`2--${site.name}`);
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('two');
    expect(preview.headers['x-robots-tag']).toBe('noindex');
    const livePreview = await visit(`1--${site.name}`);
    expect(livePreview.text).toContain('one');

    const listed = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: viewer.token });
    expect(listed.json.revisions.map((r: { number: number; live: boolean; draft: boolean }) => [r.number, r.live, r.draft])).toEqual([
      [2, false, true],
      [1, true, false],
    ]);

    // A viewer may not promote; a stale base changes nothing.
    const byViewer = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: viewer.token,
      body: { revision: draft.json.revision.id, base_revision: site.revision },
    });
    expect(byViewer.status).toBe(403);
    const stale = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: owner.token,
      body: { revision: draft.json.revision.id, base_revision: draft.json.revision.id },
    });
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('conflict');
    expect((await visit(site.name)).text).toContain('one');

    const promoted = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: owner.token,
      body: { revision: draft.json.revision.id, base_revision: site.revision },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.json.revision).toMatchObject({ id: draft.json.revision.id, number: 2, live: true, draft: false });
    expect(promoted.json.site.live_revision.id).toBe(draft.json.revision.id);
    expect((await visit(site.name)).text).toContain('two');

    const after = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(after.json.revisions.map((r: { number: number; live: boolean; draft: boolean }) => [r.number, r.live, r.draft])).toEqual([
      [2, true, false],
      [1, false, false],
    ]);
    // Promoting back to the earlier revision moves the pointer again, without a copy.
    const back = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: owner.token,
      body: { revision: site.revision, base_revision: draft.json.revision.id },
    });
    expect(back.status).toBe(200);
    expect(back.json.revision.number).toBe(1);
    expect((await visit(site.name)).text).toContain('one');
  });

  it('takes publish=false in the query for archives, with the same base-revision rule', async () => {
    const site = await accountSite(server.store, owner);
    const archive = tgzBytes([['index.html', '<h1>archived draft</h1>']]);
    const staleBase = await callDeploy(site.name, 'rev_nope', archive, '?publish=false');
    expect(staleBase.status).toBe(409);
    const bad = await callDeploy(site.name, site.revision, archive, '?publish=maybe');
    expect(bad.status).toBe(400);
    const draft = await callDeploy(site.name, site.revision, archive, '?publish=false');
    expect(draft.status).toBe(201);
    expect(draft.json.revision.live).toBe(false);
    expect(server.store.getSite(site.name)!.liveRevision).toBe(site.revision);
    expect((await visit(`${draft.json.revision.number}--${site.name}`)).text).toContain('archived draft');
    // A live deploy based on the live revision still works while a draft waits.
    const live = await callDeploy(site.name, site.revision, tgzBytes([['index.html', '<h1>live three</h1>']]), '');
    expect(live.status).toBe(201);
    expect(live.json.revision.live).toBeUndefined();
  });

  it('refuses a draft as the first deploy of a new site', async () => {
    const answer = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', 'x']], { publish: false }),
    });
    expect(answer.status).toBe(400);
    expect(answer.json.agent_message).toContain('publish=false');
  });

  it('answers 404 for previews of revisions that do not exist or are out of history reach', async () => {
    const site = await accountSite(server.store, owner, [], { plan: 'free', files: { 'index.html': '<h1>old</h1>' } });
    clock += 8 * DAY;
    await commitFiles(server.store, site.name, { 'index.html': '<h1>new</h1>' });
    expect((await visit(`2--${site.name}`)).status).toBe(200);
    const old = await visit(`1--${site.name}`);
    expect(old.status).toBe(404);
    expect(old.text).not.toContain('old');
    expect((await visit(`99--${site.name}`)).status).toBe(404);
    // Malformed preview labels name no site.
    for (const label of [`0--${site.name}`, `01--${site.name}`, `2--2--${site.name}`, `x--${site.name}`, `1234567890--${site.name}`]) {
      expect((await visit(label)).status, label).toBe(404);
    }
    const promote = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: owner.token,
      body: { revision: site.revision, base_revision: server.store.getSite(site.name)!.liveRevision },
    });
    expect(promote.status).toBe(404);
  });

  it('lets the site token of an unclaimed site store, preview and promote drafts', async () => {
    const anon = await anonymousSite(server.store, clock + 72 * 3600_000);
    const draft = await deployTo(server.port, {
      token: anon.siteToken,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>anon draft</h1>']], { site: anon.name, base_revision: anon.revision, publish: false }),
    });
    expect(draft.status).toBe(201);
    const preview = await visit(`2--${anon.name}`);
    expect(preview.text).toContain('anon draft');
    // The badge follows the site's plan on previews too.
    expect(preview.text).toContain('data-plinth-badge');
    const listed = await api(server, { path: `/v1/sites/${anon.name}/revisions`, token: anon.siteToken });
    expect(listed.json.revisions.map((r: { number: number }) => r.number)).toEqual([2, 1]);
    const promoted = await api(server, {
      method: 'POST',
      path: `/v1/sites/${anon.name}/promote`,
      token: anon.siteToken,
      body: { revision: draft.json.revision.id, base_revision: anon.revision },
    });
    expect(promoted.status).toBe(200);
    expect((await visit(anon.name)).text).toContain('anon draft');
  });

  it('refuses new site names with -- on rename', async () => {
    const site = await accountSite(server.store, owner);
    const renamed = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rename`, token: owner.token, body: { name: 'my-site--two' } });
    expect(renamed.status).toBe(400);
    expect(renamed.json.error.message).toContain('two hyphens');
  });
});

function callDeploy(site: string, base: string, body: Buffer, query: string) {
  return api(server, {
    method: 'POST',
    path: `/v1/deploy?site=${site}${query.replace('?', '&')}`,
    token: owner.token,
    headers: { 'x-base-revision': base },
    raw: body,
  });
}
