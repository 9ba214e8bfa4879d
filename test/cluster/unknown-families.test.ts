import { join } from 'node:path';
import pgClient from 'pg';
import { describe, expect, it } from 'vitest';
import { openMetadataDbs } from '../../src/store/metadata-dbs.js';
import type { Store } from '../../src/store/index.js';
import { usePostgresNodes } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Rolling upgrades: a newer release may add a record family (a replicated database) that nodes
 * of the release before do not know. Its writes reach every replica through the change log; an
 * older replica skips them (counted, said once) and applies the rest, instead of stalling on
 * the first such change. Once upgraded, a replica that skipped a family it now knows is rebuilt.
 * The newer node is played here by writing its change rows straight into PostgreSQL.
 */

const cluster = usePostgresNodes();
const node = (dir?: string): Promise<Store> => cluster.node(dir);
const HOUR_MS = 3600_000;

/** What a newer node commits: its records and one change row naming them, as records-log.ts writes them. */
async function commitAsNewerNode(writes: Array<[db: string, key: string, value: unknown]>): Promise<number> {
  const client = new pgClient.Client({ connectionString: cluster.pg.url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const [db, key, value] of writes) {
      await client.query('INSERT INTO plinth_records (db, key, value) VALUES ($1, $2, $3) ON CONFLICT (db, key) DO UPDATE SET value = EXCLUDED.value', [
        db,
        JSON.stringify(key),
        JSON.stringify(value),
      ]);
    }
    const row = await client.query<{ seq: string }>("INSERT INTO plinth_changes (origin, writes) VALUES ('newer-node', $1) RETURNING seq", [
      JSON.stringify(writes.map(([db, key, value]) => [db, JSON.stringify(key), value])),
    ]);
    await client.query('COMMIT');
    return Number(row.rows[0]!.seq);
  } finally {
    await client.end();
  }
}

const replay = (status: number, now: number) => ({ fingerprint: 'e'.repeat(64), status, sealed: 'iv.body.tag', createdAt: now, expiresAt: now + HOUR_MS });

describe('a record family this release does not know', () => {
  it('is skipped by a following replica, which applies the rest of the change and every change after it', async () => {
    const [a, b] = [await node(), await node()];
    const now = a.now();
    const told: Array<[string, number]> = [];
    const stop = await b.cluster!.follow(50, undefined, (db, writes) => told.push([db, writes]));
    try {
      const seq = await commitAsNewerNode([
        ['analytics', 'day:2026-11-29', { views: 3 }],
        ['replays', 'from-newer-node', replay(201, now)],
      ]);
      await a.putReplay('after-it', replay(202, now));
      // The follower got past the change: the known write of it, and the change after it.
      expect(await waitUntil(() => b.getReplay('after-it') !== undefined, 10_000)).toBe(true);
      expect(b.getReplay('from-newer-node')?.status).toBe(201);
      expect(b.cluster!.applied()).toBeGreaterThan(seq);
      expect(b.cluster!.health().applyFailure).toBeUndefined();
      // A node that commits catches up through the same change before its write.
      expect(a.getReplay('from-newer-node')?.status).toBe(201);

      await commitAsNewerNode([['analytics', 'day:2026-11-30', { views: 5 }]]);
      await commitAsNewerNode([['auditEvents', 'e1', { what: 'x' }]]);
      await a.putReplay('after-more', replay(203, now));
      expect(await waitUntil(() => b.getReplay('after-more') !== undefined, 10_000)).toBe(true);
      // The replica's records are visible when its transaction commits; the counts follow a moment later.
      await waitUntil(() => b.cluster!.health().skippedWrites?.auditEvents === 1, 5_000);
      expect(b.cluster!.health().skippedWrites).toEqual({ analytics: 2, auditEvents: 1 });
      // Said once per family, not once per write.
      expect(told).toEqual([
        ['analytics', 1],
        ['auditEvents', 1],
      ]);
    } finally {
      await stop();
    }
  });

  it('is left out of the snapshot a new node starts from', async () => {
    const a = await node();
    const now = a.now();
    await commitAsNewerNode([['webhooks', 'hook-1', { url: 'http://127.0.0.1:9/hook' }]]);
    await a.putReplay('before-new-node', replay(204, now));
    const fresh = await node();
    expect(fresh.getReplay('before-new-node')?.status).toBe(204);
    expect(fresh.cluster!.applied()).toBe(a.cluster!.applied());
  });

  it('has a replica that skipped it rebuilt once it runs a release that knows the family', async () => {
    const a = await node();
    const dir = tempDir('plinth-node-');
    const b = await node(dir);
    const now = a.now();
    await a.putReplay('skipped-by-old-release', replay(205, now));
    await b.cluster!.catchUp();
    await cluster.close(b);
    // As a node of the release before `replays` existed leaves its replica: without the family's
    // records, and noting it skipped writes to it.
    const raw = openMetadataDbs(join(dir, 'meta'));
    await raw.env.transaction(() => {
      void raw.replays.remove('skipped-by-old-release');
      void raw.replicaState.put('skipped:replays', 1);
    });
    await raw.env.close();

    const upgraded = await node(dir);
    expect(upgraded.getReplay('skipped-by-old-release')?.status).toBe(205);
  });
});
