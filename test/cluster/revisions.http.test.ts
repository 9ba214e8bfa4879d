import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../api/api-helpers.js';
import { accountOnEveryNode, startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi, request, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Deleting a revision and keeping previews to members across two nodes: the change replicates
 * through the change log like any other store write, and every node's caches drop it.
 */

const PUBLIC = {
  PLINTH_PUBLIC_APP_URL: 'http://app.localhost:8080',
  PLINTH_PUBLIC_API_URL: 'http://api.localhost:8080',
  PLINTH_PUBLIC_SITE_URL: 'http://{name}.sites.localhost:8080',
};

let cluster: TestCluster;
let owner: TestAccount;

const api = (node: number, call: ApiCall): Promise<ApiResponse> => callApi(cluster.port(node), call);
const visit = (node: number, label: string, path = '/', headers: Record<string, string> = {}) =>
  request({ port: cluster.port(node), host: `${label}.sites.localhost:8080`, path, headers });

beforeAll(async () => {
  cluster = await startCluster({ count: 2, env: PUBLIC });
  owner = await accountOnEveryNode(cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('revisions across nodes', () => {
  it('a revision deleted on one node is gone from the other, whose caches held it', async () => {
    const created = await cluster.deploy(0, { 'index.html': '<h1>live</h1>' }, { token: owner.token });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    const draft = await cluster.deploy(
      0,
      { 'index.html': '<h1>mistake</h1>' },
      { token: owner.token, fields: { site: name, base_revision: created.json.revision.id, publish: false } },
    );
    expect(draft.status).toBe(201);
    // Node 1 serves the draft (and so caches its site record, target and body).
    expect(await waitUntil(async () => (await visit(1, `2--${name}`)).text.includes('mistake'), 5000, 20)).toBe(true);

    const deleted = await api(0, { method: 'DELETE', path: `/v1/sites/${name}/revisions/2`, token: owner.token });
    expect(deleted.status).toBe(200);
    expect((await visit(0, `2--${name}`)).status).toBe(410);
    expect(await waitUntil(async () => (await visit(1, `2--${name}`)).status === 410, 2000, 10)).toBe(true);
    expect((await visit(1, `2--${name}`)).text).not.toContain('mistake');
    const listed = await api(1, { path: `/v1/sites/${name}/revisions`, token: owner.token });
    expect(listed.json.revisions.map((r: { number: number }) => r.number)).toEqual([1]);
    expect((await visit(1, name)).text).toContain('live');
    // The number stays used cluster-wide.
    const next = await cluster.deploy(
      1,
      { 'index.html': '<h1>three</h1>' },
      { token: owner.token, fields: { site: name, base_revision: created.json.revision.id, publish: false } },
    );
    expect(next.json.revision.number).toBe(3);
  });

  it('a preview link handed out by one node opens the preview on the other, until the setting is turned off', async () => {
    const created = await cluster.deploy(0, { 'index.html': '<h1>live</h1>' }, { token: owner.token });
    const name = created.json.site.name as string;
    expect((await api(0, { method: 'PUT', path: `/v1/sites/${name}/access`, token: owner.token, body: { previews: 'members' } })).status).toBe(200);
    const draft = await cluster.deploy(
      0,
      { 'index.html': '<h1>review</h1>' },
      { token: owner.token, fields: { site: name, base_revision: created.json.revision.id, publish: false } },
    );
    const link = new URL(draft.json.revision.preview_url);
    // Node 1 may know the site's setting (a bare visit gets 401) before it knows the draft: the
    // link opens once it has both.
    let opened = await visit(1, `2--${name}`, `${link.pathname}${link.search}`);
    expect(await waitUntil(async () => (opened = await visit(1, `2--${name}`, `${link.pathname}${link.search}`)).status === 303, 2000, 10)).toBe(true);
    expect((await visit(1, `2--${name}`)).status).toBe(401);
    const cookie = String(opened.headers['set-cookie']).split(';')[0]!;
    expect((await visit(1, `2--${name}`, '/', { cookie })).text).toContain('review');
    expect((await visit(0, `2--${name}`, '/', { cookie })).text).toContain('review');

    expect((await api(0, { method: 'PUT', path: `/v1/sites/${name}/access`, token: owner.token, body: { previews: 'public' } })).status).toBe(200);
    expect((await api(0, { method: 'PUT', path: `/v1/sites/${name}/access`, token: owner.token, body: { previews: 'members' } })).status).toBe(200);
    expect(await waitUntil(async () => (await visit(1, `2--${name}`, '/', { cookie })).status === 401, 2000, 10)).toBe(true);
    expect((await visit(1, `2--${name}`, `${link.pathname}${link.search}`)).status).toBe(401);
  });
});
