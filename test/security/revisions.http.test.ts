import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, anonymousSite, api, type TestAccount } from '../api/api-helpers.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { request, type TestResponse } from '../helpers/http.js';
import { rpc } from '../mcp/mcp-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * Deleting a revision (audit item 8: a file published by mistake stayed public for the plan's
 * whole history reach at `<n>--<name>`). Once deleted, nothing of the revision may be reached by
 * any spelling of its preview, any API call or tool, any reuse of its content by hash, or by
 * rollback and promote; and a caller who may not delete it changes nothing at all.
 */

let clock = Date.now();
let owner: TestAccount;
let editor: TestAccount;
let viewer: TestAccount;
let outsider: TestAccount;

const MISTAKE = 'AWS key pasted by mistake: do not publish';
const FILES: Array<[string, string]> = [
  ['index.html', '<h1>draft with a mistake</h1>'],
  ['notes/oops.txt', MISTAKE],
  ['big.js', `console.log(${JSON.stringify('x'.repeat(4000))});`],
];
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

const visit = (host: string, path = '/', headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> =>
  request({ port: server.port, host, path, headers, method });

/** A site with a live revision 1 and a draft 2 that holds the mistake, read once so every cache holds it. */
async function siteWithMistake(members: Array<[TestAccount, 'viewer' | 'editor' | 'owner']> = []) {
  const site = await accountSite(server.store, owner, members, { files: { 'index.html': '<h1>live</h1>' } });
  const draft = await deployTo(server.port, {
    token: owner.token,
    contentType: 'application/json',
    body: jsonDeployBody(FILES, { site: site.name, base_revision: site.revision, publish: false }),
  });
  expect(draft.status).toBe(201);
  const label = `${draft.json.revision.number}--${site.name}`;
  for (const path of ['/notes/oops.txt', '/big.js', '/']) expect((await visit(`${label}.sites.localhost`, path)).status).toBe(200);
  expect((await visit(`${label}.sites.localhost`, '/notes/oops.txt')).text).toBe(MISTAKE);
  // The draft's compressed variants are recorded just after its answer; a snapshot taken
  // before that would see them appear and read as a change.
  await server.followUpsSettled();
  return { ...site, draft: draft.json.revision.id as string, number: draft.json.revision.number as number, label };
}

function expectGone(res: TestResponse, what: string): void {
  expect([404, 410], what).toContain(res.status);
  expect(res.text, what).not.toContain(MISTAKE);
  expect(res.text, what).not.toContain('xxxxxxxx');
  expect(res.headers.etag, what).toBeUndefined();
  expect(res.headers['content-range'], what).toBeUndefined();
}

const server = useAppServer({}, { now: () => clock });

beforeAll(async () => {
  [owner, editor, viewer, outsider] = (await Promise.all([0, 1, 2, 3].map(() => accountWithToken(server.store, 'builder')))) as [
    TestAccount,
    TestAccount,
    TestAccount,
    TestAccount,
  ];
});

describe('a deleted revision is unreachable', () => {
  it('by every spelling of its preview address and path, at once', async () => {
    const site = await siteWithMistake();
    const deleted = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/${site.draft}`, token: owner.token });
    expect(deleted.status).toBe(200);
    const etag = `"${sha(MISTAKE)}"`;
    const hosts = [
      `${site.label}.sites.localhost`,
      `${site.label}.sites.localhost:${server.port}`,
      `${site.label.toUpperCase()}.SITES.LOCALHOST`,
      `${site.label}.sites.localhost.`,
    ];
    const paths = [
      '/notes/oops.txt',
      '/notes/oops',
      '/notes/oops.txt/',
      '/notes/%6f%6fps.txt',
      '/notes%2Foops.txt',
      '//notes/oops.txt',
      '/./notes/oops.txt',
      '/x/../notes/oops.txt',
      '/notes/oops.txt?download=1',
      '/NOTES/OOPS.TXT',
      '/big.js',
      '/',
      '/index.html',
      '/.plinth/share?token=pv1.zzzzzzzz.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ];
    for (const host of hosts) {
      for (const path of paths) expectGone(await visit(host, path), `${host}${path}`);
    }
    const host = hosts[0]!;
    for (const headers of [
      { 'accept-encoding': 'br' },
      { 'accept-encoding': 'gzip' },
      { range: 'bytes=0-10' },
      { 'if-none-match': etag },
      { authorization: `Bearer ${owner.token}` },
    ] as Record<string, string>[]) {
      expectGone(await visit(host, '/notes/oops.txt', headers), JSON.stringify(headers));
      expectGone(await visit(host, '/big.js', headers), JSON.stringify(headers));
    }
    expectGone(await visit(host, '/notes/oops.txt', {}, 'HEAD'), 'HEAD');
    expect((await visit(host, '/notes/oops.txt')).status).toBe(410);
    // The live site is untouched.
    expect((await visit(`${site.name}.sites.localhost`)).text).toContain('live');
  });

  it('through the API and MCP: listings, reads, rollback, promote, reuse by hash', async () => {
    const site = await siteWithMistake();
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/${site.number}`, token: owner.token })).status).toBe(200);
    const listed = await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token });
    expect(listed.json.revisions.map((r: { id: string }) => r.id)).not.toContain(site.draft);
    expect(JSON.stringify(listed.json)).not.toContain(site.label);
    expect((await api(server, { path: `/v1/sites/${site.name}/files/notes/oops.txt`, token: owner.token })).status).toBe(404);
    const files = await api(server, { path: `/v1/sites/${site.name}/files`, token: owner.token });
    expect(JSON.stringify(files.json)).not.toContain('oops');
    for (const [path, body] of [
      [`/v1/sites/${site.name}/rollback`, { revision: site.draft }],
      [`/v1/sites/${site.name}/promote`, { revision: site.draft, base_revision: site.revision }],
    ] as const) {
      const res = await api(server, { method: 'POST', path, token: owner.token, body });
      expect(res.status, path).toBe(404);
    }
    expect(server.store.getSite(site.name)!.liveRevision).toBe(site.revision);
    // Its content cannot be brought back by naming its hash (one-request digest deploy or manifest).
    const byHash = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: {
        site: site.name,
        base_revision: site.revision,
        files: [
          { path: 'index.html', content: 'x' },
          { path: 'oops.txt', sha256: sha(MISTAKE), size: MISTAKE.length },
        ],
      },
    });
    expect(byHash.status).toBe(400);
    const manifest = await api(server, {
      method: 'POST',
      path: '/v1/deploy/manifest',
      token: owner.token,
      body: { site: site.name, base_revision: site.revision, files: [{ path: 'index.html', size: MISTAKE.length, sha256: sha(MISTAKE) }] },
    });
    expect(manifest.status).toBe(201);
    expect(manifest.json.missing).toEqual([sha(MISTAKE)]);
    // MCP: the same answers.
    const read = await rpc(server, {
      token: owner.token,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'promote_site', arguments: { site: site.name, revision: site.draft, base_revision: site.revision } },
      },
    });
    expect(read.json.result.content[0].text).toMatch(/^not_found: /);
    const again = await rpc(server, {
      token: owner.token,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_revision', arguments: { site: site.name, revision: site.draft } } },
    });
    expect(again.json.result.content[0].text).toMatch(/^not_found: /);
  });
});

describe('who may delete', () => {
  const anonymous = () => anonymousSite(server.store, clock + 72 * 3600_000);

  it.each<[string, number, () => Promise<Record<string, string>>]>([
    ['no credential', 401, async () => ({})],
    ['a viewer', 403, async () => ({ authorization: `Bearer ${viewer.token}` })],
    ['an editor', 403, async () => ({ authorization: `Bearer ${editor.token}` })],
    ['a non-member', 404, async () => ({ authorization: `Bearer ${outsider.token}` })],
    ['the site token of another site', 404, async () => ({ authorization: `Bearer ${(await anonymous()).siteToken}` })],
    ['an unknown API token', 401, async () => ({ authorization: `Bearer pl_${randomBytes(24).toString('base64url')}` })],
    ["the owner's token in a query parameter", 401, async () => ({})],
    ["the owner's token under the Basic scheme", 401, async () => ({ authorization: `Basic ${owner.token}` })],
  ])('refuses %s (%i) and changes nothing', async (_who, status, headers) => {
    const site = await siteWithMistake([
      [viewer, 'viewer'],
      [editor, 'editor'],
    ]);
    const before = { site: server.store.getSite(site.name), revision: server.store.getRevision(site.draft), files: server.store.listFiles(site.draft) };
    const res = await request({
      port: server.port,
      host: 'api.localhost',
      method: 'DELETE',
      path: `/v1/sites/${site.name}/revisions/${site.draft}?access_token=${owner.token}`,
      headers: await headers(),
    });
    expect(res.status, res.text).toBe(status);
    expect(server.store.getSite(site.name)).toEqual(before.site);
    expect(server.store.getRevision(site.draft)).toEqual(before.revision);
    expect(server.store.listFiles(site.draft)).toEqual(before.files);
    expect((await visit(`${site.label}.sites.localhost`, '/notes/oops.txt')).text).toBe(MISTAKE);
  });

  it('refuses the site token of a claimed site, and an owner naming another site’s revision', async () => {
    const anon = await anonymous();
    const draft = await deployTo(server.port, {
      token: anon.siteToken,
      contentType: 'application/json',
      body: jsonDeployBody(FILES, { site: anon.name, base_revision: anon.revision, publish: false }),
    });
    expect(draft.status).toBe(201);
    expect((await server.store.claimSite(hashToken(anon.claimToken), outsider.account.id)).ok).toBe(true);
    const claimed = await api(server, { method: 'DELETE', path: `/v1/sites/${anon.name}/revisions/${draft.json.revision.id}`, token: anon.siteToken });
    expect(claimed.status).toBe(403);
    expect(server.store.getRevision(draft.json.revision.id)).toBeDefined();

    // The owner of A names B's draft (by id, and by its number on A's address): B keeps it.
    const mine = await accountSite(server.store, owner);
    const theirs = await accountSite(server.store, outsider);
    const theirDraft = await deployTo(server.port, {
      token: outsider.token,
      contentType: 'application/json',
      body: jsonDeployBody(FILES, { site: theirs.name, base_revision: theirs.revision, publish: false }),
    });
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${mine.name}/revisions/${theirDraft.json.revision.id}`, token: owner.token })).status).toBe(
      404,
    );
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${mine.name}/revisions/2`, token: owner.token })).status).toBe(404);
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${theirs.name}/revisions/2`, token: owner.token })).status).toBe(404);
    expect(server.store.getRevision(theirDraft.json.revision.id)).toBeDefined();
    expect((await visit(`2--${theirs.name}.sites.localhost`, '/notes/oops.txt')).text).toBe(MISTAKE);
  });

  it('refuses the live revision, and a deleted or taken-down site, changing nothing', async () => {
    const site = await siteWithMistake();
    const live = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/1`, token: owner.token });
    expect(live.status).toBe(409);
    expect(live.json.agent_message).toContain('rollback');
    await server.store.setSiteState(site.name, 'taken_down');
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/${site.draft}`, token: owner.token })).status).toBe(403);
    expect(server.store.getRevision(site.draft)).toBeDefined();
    await server.store.setSiteState(site.name, 'deleted');
    expect((await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/${site.draft}`, token: owner.token })).status).toBe(410);
    expect(server.store.getRevision(site.draft)).toBeDefined();
  });

  it('refuses malformed revision names without touching anything', async () => {
    const site = await siteWithMistake();
    for (const id of ['0', '-1', '1e3', '%00', 'rev_', '..%2F1', `${site.draft}%20`, '2.0', '02']) {
      const res = await api(server, { method: 'DELETE', path: `/v1/sites/${site.name}/revisions/${id}`, token: owner.token });
      expect([400, 404], id).toContain(res.status);
    }
    expect(server.store.getRevision(site.draft)).toBeDefined();
    expect((await visit(`${site.label}.sites.localhost`, '/notes/oops.txt')).text).toBe(MISTAKE);
  });
});
