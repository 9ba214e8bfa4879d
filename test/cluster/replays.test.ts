import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStore, type Store } from '../../src/store/index.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Replay records (idempotency keys, published manifests' answers) in a cluster: kept in
 * PostgreSQL like every record, so a retry that reaches another node gets the same answer, and
 * a key claimed on one node is claimed on all.
 */

let pg: TestPostgres;
const open: Store[] = [];
const HOUR_MS = 3600_000;

beforeAll(async () => {
  pg = await startPostgres();
}, 30_000);
afterAll(async () => {
  for (const store of open) await store.close().catch(() => undefined);
  await pg?.stop();
});

async function node(): Promise<Store> {
  const store = await connectStore({ dir: tempDir('plinth-node-'), databaseUrl: pg.url, bootstrap: true });
  open.push(store);
  return store;
}

describe('replay records in PostgreSQL', () => {
  it('lets one claim through across nodes, and every node then sees the kept answer', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    const now = a.now();
    const pending = { createdAt: now, expiresAt: now + HOUR_MS };
    const claims = await Promise.all([a, b, c, a, b].map((store) => store.claimReplay('key-race', pending)));
    expect(claims.filter((claim) => claim === undefined)).toHaveLength(1);

    const answer = { fingerprint: 'c'.repeat(64), status: 201, sealed: 'iv.body.tag', createdAt: now, expiresAt: now + 24 * HOUR_MS };
    await a.putReplay('key-race', answer);
    await b.cluster!.catchUp();
    expect(b.getReplay('key-race')).toEqual(answer);
    expect(await c.claimReplay('key-race', pending)).toEqual(answer);
  });

  it('survives a node that starts afresh from PostgreSQL', async () => {
    const a = await node();
    const now = a.now();
    await a.putReplay('kept-for-new-nodes', { fingerprint: 'd'.repeat(64), status: 202, sealed: 's', createdAt: now, expiresAt: now + HOUR_MS });
    const fresh = await node();
    expect(fresh.getReplay('kept-for-new-nodes')?.status).toBe(202);
  });
});
