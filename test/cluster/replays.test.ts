import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { usePostgresNodes } from '../helpers/postgres.js';

/**
 * Replay records (idempotency keys, published manifests' answers) in a cluster: kept in
 * PostgreSQL like every record, so a retry that reaches another node gets the same answer, and
 * a key claimed on one node is claimed on all.
 */

const cluster = usePostgresNodes();
const node = (): Promise<Store> => cluster.node();
const HOUR_MS = 3600_000;

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
