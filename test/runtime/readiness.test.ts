import { describe, expect, it } from 'vitest';
import { judgeReadiness, type ReadinessFacts } from '../../src/runtime/readiness.js';

const NOW = Date.parse('2026-11-23T09:00:00Z');
const MB = 1024 * 1024;
const BOUNDS = { minFreeBytes: 64 * MB, maxReplicaLagMs: 10_000 };
const healthy: ReadinessFacts = {
  now: NOW,
  stopping: false,
  threads: [{ answered: true }, { answered: true }],
  disk: { freeBytes: 10_000 * MB },
};
const followingReplica = { applied: 40, head: 40, lastContact: NOW - 200 };

describe('judgeReadiness', () => {
  it.each<[string, Partial<ReadinessFacts>, RegExp | undefined]>([
    ['an embedded node with room on its disk', {}, undefined],
    ['a cluster node at the head of the log', { replica: followingReplica }, undefined],
    ['a replica catching up within the bound', { replica: { ...followingReplica, head: 45, behindSince: NOW - 9_000 } }, undefined],
    [
      'PostgreSQL away: reported, still ready',
      { replica: { ...followingReplica, databaseFailure: { message: 'ECONNREFUSED', since: NOW - 30_000 } } },
      undefined,
    ],
    ['a node that is stopping', { stopping: true }, /stopping/],
    ['a thread that does not answer', { threads: [{ answered: true }, { answered: false }] }, /HTTP thread 1 did not answer/],
    ['a thread whose store is closed', { threads: [{ answered: true, problem: 'the store cannot be read: database is closed' }] }, /HTTP thread 0: the store/],
    ["the main thread's store failing a read", { storeProblem: "the main thread's store cannot be read: closed" }, /main thread's store/],
    ['a disk with less free than the bound', { disk: { freeBytes: 10 * MB } }, /disk is full: 10\.0 MB free, under the 64 MB of PLINTH_READY_MIN_FREE_MB/],
    ['a disk that refuses a write (quota, read-only)', { disk: { freeBytes: 10_000 * MB, writeError: 'EDQUOT' } }, /takes no writes \(EDQUOT\)/],
    [
      'a replica that fails to apply the log',
      { replica: { ...followingReplica, head: 41, behindSince: NOW - 500, applyFailure: { message: 'MDB_MAP_FULL', code: 'MDB_MAP_FULL', since: NOW - 500 } } },
      /replica has failed to apply the change log since 2026-11-23T08:59:59\.500Z \(MDB_MAP_FULL\)/,
    ],
    [
      'a replica behind for longer than the bound',
      { replica: { ...followingReplica, head: 90, behindSince: NOW - 12_000 } },
      /12 s behind the change log, past the 10 s/,
    ],
  ])('%s', (_name, facts, unready) => {
    const readiness = judgeReadiness({ ...healthy, ...facts }, BOUNDS);
    expect(readiness.ready).toBe(unready === undefined);
    if (unready) expect(readiness.reason).toMatch(unready);
    else expect(readiness.reason).toBeUndefined();
  });

  it('reports a database that is away with its cause, without making the node unready', () => {
    const readiness = judgeReadiness(
      { ...healthy, replica: { ...followingReplica, lastContact: NOW - 30_000, databaseFailure: { message: 'connect ECONNREFUSED', since: NOW - 29_000 } } },
      BOUNDS,
    );
    expect(readiness.ready).toBe(true);
    expect(readiness.checks.database).toEqual({
      ok: false,
      message: expect.stringMatching(/PostgreSQL has not answered since .*connect ECONNREFUSED.*writes answer 503, sites are served from the replica/),
      last_contact: '2026-11-23T08:59:30.000Z',
    });
  });

  it('names every failing check in the reason, and gives the facts behind each', () => {
    const readiness = judgeReadiness(
      {
        ...healthy,
        disk: { freeBytes: 0, writeError: 'ENOSPC' },
        replica: { ...followingReplica, head: 41, behindSince: NOW - 1000, applyFailure: { message: 'No space left on device', since: NOW - 1000 } },
      },
      BOUNDS,
    );
    expect(readiness.ready).toBe(false);
    expect(readiness.reason).toMatch(/ENOSPC.*; the replica has failed/);
    expect(readiness.checks.disk).toMatchObject({ ok: false, free_bytes: 0, min_free_bytes: 64 * MB });
    expect(readiness.checks.replica).toMatchObject({ ok: false, applied: 40, head: 41, lag_seconds: 1 });
  });

  it.each([
    ['PLINTH_READY_MIN_FREE_MB=0: a nearly full disk that still takes writes', { disk: { freeBytes: 1 } }],
    ['PLINTH_READY_REPLICA_LAG_S=0: a replica that is slow but applying', { replica: { ...followingReplica, head: 90, behindSince: NOW - 600_000 } }],
  ])('with the bounds off, %s', (_name, facts) => {
    expect(judgeReadiness({ ...healthy, ...facts }, { minFreeBytes: 0, maxReplicaLagMs: 0 }).ready).toBe(true);
  });
});
