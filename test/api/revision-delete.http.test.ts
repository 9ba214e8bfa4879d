import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request } from '../helpers/http.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, type TestAccount } from './api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

/** Deleting a revision that is not live (`DELETE /v1/sites/:name/revisions/:id`), over REST. */

let clock = Date.now();
let owner: TestAccount;
let editor: TestAccount;

const visit = (label: string, path = '/') => request({ port: server.port, host: `${label}.sites.localhost`, path });
const revisions = async (name: string, token = owner.token): Promise<number[]> =>
  (await api(server, { path: `/v1/sites/${name}/revisions`, token })).json.revisions.map((r: { number: number }) => r.number);
const draftOf = async (site: { name: string; revision: string }, files: Array<[string, string]>, token = owner.token) => {
  const answer = await deployTo(server.port, {
    token,
    contentType: 'application/json',
    body: jsonDeployBody(files, { site: site.name, base_revision: site.revision, publish: false }),
  });
  expect(answer.status).toBe(201);
  return answer.json.revision as { id: string; number: number; preview_url: string };
};
const remove = (name: string, revision: string | number, token = owner.token) =>
  api(server, { method: 'DELETE', path: `/v1/sites/${name}/revisions/${revision}`, token });

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  editor = await accountWithToken(server.store, 'builder');
});

describe('deleting a revision', () => {
  it('takes a draft out of every listing and answers 410 at its preview, at once', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>live</h1>' } });
    const draft = await draftOf(site, [
      ['index.html', '<h1>draft</h1>'],
      ['oops.txt', 'published by mistake'],
    ]);
    expect((await visit(`${draft.number}--${site.name}`, '/oops.txt')).text).toBe('published by mistake');
    expect(await revisions(site.name)).toEqual([2, 1]);

    const deleted = await remove(site.name, draft.id);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ revision: { id: draft.id, number: 2 }, deleted: true, agent_message: expect.stringContaining('410') });

    expect(await revisions(site.name)).toEqual([1]);
    for (const path of ['/', '/oops.txt', '/index.html', '/nope']) {
      const gone = await visit(`2--${site.name}`, path);
      expect(gone.status, path).toBe(410);
      expect(gone.text).not.toContain('published by mistake');
      expect(gone.text).toContain('deleted by its owner');
      expect(gone.headers['cache-control']).toBe('no-store');
    }
    // The live site never changed.
    expect((await visit(site.name)).text).toContain('live');
    expect(server.store.getRevision(draft.id)).toBeUndefined();
    expect(server.store.listFiles(draft.id)).toEqual([]);
  });

  it('accepts the revision number as well as its id', async () => {
    const site = await accountSite(server.store, owner);
    const draft = await draftOf(site, [['index.html', '<h1>by number</h1>']]);
    const deleted = await remove(site.name, draft.number);
    expect(deleted.status).toBe(200);
    expect(deleted.json.revision).toEqual({ id: draft.id, number: draft.number });
    expect((await remove(site.name, draft.number)).status).toBe(404);
  });

  it('refuses the live revision with 409 and says how to go on', async () => {
    const site = await accountSite(server.store, owner);
    const res = await remove(site.name, site.revision);
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('conflict');
    expect(res.json.agent_message).toMatch(/roll back.*promote/);
    expect((await visit(site.name)).status).toBe(200);
    expect(await revisions(site.name)).toEqual([1]);
  });

  it('never hands out a deleted number again, and refuses rollback and promote to it', async () => {
    const site = await accountSite(server.store, owner);
    const draft = await draftOf(site, [['index.html', '<h1>two</h1>']]);
    expect((await remove(site.name, draft.id)).status).toBe(200);
    const rollback = await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: draft.id } });
    expect(rollback.status).toBe(404);
    const promote = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/promote`,
      token: owner.token,
      body: { revision: draft.id, base_revision: site.revision },
    });
    expect(promote.status).toBe(404);
    const next = await commitFiles(server.store, site.name, { 'index.html': '<h1>three</h1>' });
    expect(next.number).toBe(3);
    expect((await visit(`2--${site.name}`)).status).toBe(410);
    expect((await visit(`3--${site.name}`)).text).toContain('three');
  });

  it('deletes an earlier published revision once another is live, and its files leave the listing', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>', 'secret.txt': 'mistake' } });
    await commitFiles(server.store, site.name, { 'index.html': '<h1>two</h1>' });
    expect((await visit(`1--${site.name}`, '/secret.txt')).text).toBe('mistake');
    expect((await remove(site.name, 1)).status).toBe(200);
    expect((await visit(`1--${site.name}`, '/secret.txt')).status).toBe(410);
    const files = await api(server, { path: `/v1/sites/${site.name}/files`, token: owner.token });
    expect(files.json.files.map((f: { path: string }) => f.path)).toEqual(['index.html']);
    // A digest deploy cannot reuse the deleted revision's content by its hash.
    const byHash = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: {
        site: site.name,
        base_revision: server.store.getSite(site.name)!.liveRevision,
        files: [
          { path: 'index.html', content: 'x' },
          { path: 'secret.txt', sha256: createHash('sha256').update('mistake').digest('hex'), size: 7 },
        ],
      },
    });
    expect(byHash.status).toBe(400);
    expect(byHash.json.error.details.missing).toEqual(['secret.txt']);
  });

  it('lets owners and the site token of an unclaimed site delete; editors and viewers get 403', async () => {
    const site = await accountSite(server.store, owner, [[editor, 'editor']]);
    const draft = await draftOf(site, [['index.html', '<h1>x</h1>']]);
    const byEditor = await remove(site.name, draft.id, editor.token);
    expect(byEditor.status).toBe(403);
    expect((await visit(`${draft.number}--${site.name}`)).status).toBe(200);

    const anon = await anonymousSite(server.store, clock + 72 * 3600_000);
    const anonDraft = await draftOf(anon, [['index.html', '<h1>anon draft</h1>']], anon.siteToken);
    expect((await remove(anon.name, anonDraft.id, anon.siteToken)).status).toBe(200);
    expect((await visit(`${anonDraft.number}--${anon.name}`)).status).toBe(410);
  });

  it('leaves blobs other revisions use, and the sweep collects the ones only the deleted revision used', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>kept</h1>', 'shared.css': 'body{color:red}' } });
    const draft = await draftOf(site, [
      ['index.html', '<h1>kept</h1>'],
      ['shared.css', 'body{color:red}'],
      ['only-draft.txt', 'only in the draft'],
    ]);
    const rows = new Map(server.store.listFiles(draft.id).map((file) => [file.path, file.sha256]));
    expect((await remove(site.name, draft.id)).status).toBe(200);
    // The draft's bytes wait in the blob journal, which the sweep spares, until its files are
    // written and synced just after its answer: the sweep runs once that is done.
    expect(await waitUntil(() => server.store.journaledBlobs() === 0, 10_000)).toBe(true);
    // Past the blob grace period, on the server's clock and the files' own.
    clock += 2 * 24 * 3600_000;
    await sweep({ store: server.store, log: createLogger({ level: 'silent' }), blobGraceMs: 3600_000, now: () => clock });
    expect(existsSync(server.store.blobs.pathOf(rows.get('only-draft.txt')!))).toBe(false);
    expect(existsSync(server.store.blobs.pathOf(rows.get('index.html')!))).toBe(true);
    expect(existsSync(server.store.blobs.pathOf(rows.get('shared.css')!))).toBe(true);
    expect((await visit(site.name, '/shared.css')).text).toBe('body{color:red}');
  });
});
