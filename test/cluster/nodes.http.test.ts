import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStore, hashToken, type Store } from '../../src/store/index.js';
import { accountWithToken } from '../api/api-helpers.js';
import { callApi, type ApiResponse } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { waitUntil } from '../helpers/proc-stats.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Three Plinth processes, each with its own data directory, on one PostgreSQL: what any node
 * acknowledges, every node knows; races between nodes have one winner; a node that was killed
 * catches up; an outage of PostgreSQL stops writes (503) and nothing else.
 */

let pg: TestPostgres;
let operator: Store;
const nodes: Array<{ dir: string; main?: MainProcess }> = [];

const env = (dir: string) => mainEnv(dir, { PLINTH_DATABASE_URL: pg.url });

async function startNode(index: number): Promise<MainProcess> {
  const main = await startMain(env(nodes[index]!.dir));
  nodes[index]!.main = main;
  return main;
}

const portOf = (index: number): number => nodes[index]!.main!.port;
const api = (index: number, call: Parameters<typeof callApi>[1]): Promise<ApiResponse> => callApi(portOf(index), call);

beforeAll(async () => {
  pg = await startPostgres();
  for (let i = 0; i < 3; i++) nodes.push({ dir: tempDir(`plinth-cluster-${i}-`) });
  for (let i = 0; i < 3; i++) await startNode(i);
  // The operator's own replica, as `plinth admin` keeps one.
  operator = await connectStore({ dir: tempDir('plinth-operator-'), databaseUrl: pg.url, bootstrap: true });
}, 60_000);

afterAll(async () => {
  for (const node of nodes) await killMain(node.main);
  await operator?.close();
  await pg?.stop();
});

/** Polls until `ready` holds on every node, or fails after `ms`. */
async function onEveryNode(ms: number, ready: (index: number) => Promise<boolean>): Promise<void> {
  for (let i = 0; i < nodes.length; i++) expect(await waitUntil(() => ready(i), ms, 20), `node ${i}`).toBe(true);
}

const deployBody = (html: string, extra: Record<string, unknown> = {}) => ({ files: [{ path: 'index.html', content: html }], ...extra });

describe('three nodes on one PostgreSQL', () => {
  it('an account and its token made anywhere work on every node', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
  });

  it('a deploy acknowledged by one node is known to every node, and by itself at once', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
    const created = await api(0, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>from node 0</h1>') });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    expect((await api(0, { path: `/v1/sites/${name}`, token: owner.token })).json.live_revision.id).toBe(created.json.revision.id);
    await onEveryNode(
      2000,
      async (i) => (await api(i, { path: `/v1/sites/${name}`, token: owner.token })).json?.live_revision?.id === created.json.revision.id,
    );
  });

  it('of two nodes deploying on the same base revision, one answers 201 and the other 409', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
    const created = await api(0, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>base</h1>') });
    const name = created.json.site.name as string;
    const base = created.json.revision.id as string;
    await onEveryNode(2000, async (i) => (await api(i, { path: `/v1/sites/${name}`, token: owner.token })).json?.live_revision?.id === base);
    const update = (i: number) =>
      api(i, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody(`<h1>from ${i}</h1>`, { site: name, base_revision: base }) });
    const answers = await Promise.all([update(0), update(1), update(2)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
  });

  it('a revoked token is refused on every node within a second', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
    const row = operator.listApiTokens(owner.account.id)[0]!;
    await operator.revokeApiToken(owner.account.id, row.id);
    expect(operator.findToken(hashToken(owner.token))).toBeUndefined();
    const revokedAt = Date.now();
    await onEveryNode(1000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 401);
    expect(Date.now() - revokedAt).toBeLessThan(1000 * nodes.length);
  });

  it('a node killed in the middle of things catches up when it starts again', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
    const deploying = api(1, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>while dying</h1>') }).catch(() => undefined);
    await killMain(nodes[1]!.main);
    await deploying;
    // Meanwhile the others go on.
    const created = await api(0, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>meanwhile</h1>') });
    expect(created.status).toBe(201);
    await startNode(1);
    expect((await api(1, { path: `/v1/sites/${created.json.site.name}`, token: owner.token })).json.live_revision.id).toBe(created.json.revision.id);
  });

  it('while PostgreSQL is away, writes answer 503 with Retry-After and reads go on; then writes work again', async () => {
    const owner = await accountWithToken(operator, 'builder');
    await onEveryNode(2000, async (i) => (await api(i, { path: '/v1/me', token: owner.token })).status === 200);
    const created = await api(2, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>before the outage</h1>') });
    const name = created.json.site.name as string;
    await pg.pause();
    try {
      const refused = await api(2, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>during</h1>') });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.json.error).toMatchObject({ code: 'unavailable', details: { reason: 'records_unavailable' } });
      expect((await api(2, { path: `/v1/sites/${name}`, token: owner.token })).status).toBe(200);
    } finally {
      await pg.resume();
    }
    expect(
      await waitUntil(
        async () => (await api(2, { method: 'POST', path: '/v1/deploy', token: owner.token, body: deployBody('<h1>after</h1>') })).status === 201,
        10_000,
        100,
      ),
    ).toBe(true);
  });
});
