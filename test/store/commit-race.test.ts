import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { assertBuilt, fixture, markedEntry } from './helpers.js';

const ROUNDS = 20;
const SITE = 'race-site';

interface WorkerResult {
  round: number;
  name: string;
  ok: boolean;
  revisionId?: string;
  number?: number;
  reason?: string;
  liveRevision?: string;
}

let dir: string;
let store: Store;
let workers: Worker[] = [];

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'plinth-store-race-'));
  store = openStore({ dir });
  const created = await store.commitRevision({
    site: SITE,
    create: { name: SITE, plan: 'free', claimed: true },
    baseRevision: null,
    files: new Map([['/index.html', markedEntry(1)]]),
    kind: 'deploy',
    createdBy: 'test',
  });
  expect(created.ok).toBe(true);
});

afterAll(async () => {
  for (const w of workers) w.postMessage({ type: 'close' });
  await Promise.all(workers.map((w) => once(w, 'exit')));
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

it('lets exactly one of two threads commit on the same base, every round', async () => {
  const barrier = new SharedArrayBuffer(4 * ROUNDS);
  const names = ['left', 'right'];
  workers = names.map((name) => new Worker(fixture('commit-worker.mjs'), { workerData: { dir, site: SITE, name, barrier, parties: names.length } }));
  const results: WorkerResult[] = [];
  const waiters: (() => void)[] = [];
  for (const w of workers) {
    w.on('message', (m: WorkerResult) => {
      results.push(m);
      waiters.shift()?.();
    });
    w.on('error', (err) => {
      throw err;
    });
  }
  const nextResult = () => new Promise<void>((resolve) => waiters.push(resolve));

  for (let round = 0; round < ROUNDS; round++) {
    const before = store.getSite(SITE);
    const base = before?.liveRevision ?? null;
    workers.forEach((w, i) => w.postMessage({ round, base, marker: (round * 2 + i).toString(16).padStart(64, '0') }));
    await Promise.all([nextResult(), nextResult()]);
    // lmdb-js keeps this thread's read snapshot until a setTimeout(0) renews it; a worker's commit
    // can be reported back sooner than that.
    await sleep(1);

    const pair = results.filter((r) => r.round === round);
    const winners = pair.filter((r) => r.ok);
    const losers = pair.filter((r) => !r.ok);
    expect(winners, `round ${round}`).toHaveLength(1);
    expect(losers, `round ${round}`).toEqual([expect.objectContaining({ reason: 'conflict', liveRevision: winners[0]?.revisionId })]);
    const after = store.getSite(SITE);
    expect(after?.liveRevision).toBe(winners[0]?.revisionId);
    expect(after?.lastNumber).toBe((before?.lastNumber ?? 0) + 1);
  }

  const site = store.getSite(SITE);
  const history = store.listRevisions(site?.id ?? '', { limit: ROUNDS + 10 }).revisions;
  expect(history.map((r) => r.number)).toEqual(Array.from({ length: ROUNDS + 1 }, (_, i) => ROUNDS + 1 - i));
  // Both threads won some rounds, or the barrier did not make them race.
  const winnersByThread = new Set(results.filter((r) => r.ok).map((r) => r.name));
  expect(winnersByThread.size, JSON.stringify(results.filter((r) => r.ok).map((r) => r.name))).toBe(2);
});
