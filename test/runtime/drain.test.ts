import { afterAll, describe, expect, it } from 'vitest';
import { gateCommits, settlesWithin, waitForEmpty } from '../../src/runtime/drain.js';
import { openStore } from '../../src/store/index.js';
import { storeFiles, tempDir } from '../helpers/sites.js';

describe('graceful-stop helpers', () => {
  const store = openStore({ dir: tempDir() });
  afterAll(() => store.close());

  it('waits for pending work to drain, up to the grace period', async () => {
    const pending = new Set([1]);
    setTimeout(() => pending.clear(), 50);
    expect(await waitForEmpty(pending, 5000)).toBe(true);
    expect(await waitForEmpty(new Set([1]), 60)).toBe(false);
    const hurry = new AbortController();
    hurry.abort();
    expect(await waitForEmpty(new Set([1]), 60_000, hurry.signal)).toBe(false);
  });

  it('tells whether work settled in time', async () => {
    expect(await settlesWithin(Promise.resolve(), 0)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('x')), 10)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 30)).toBe(false);
  });

  it('lets a commit under way finish and refuses every commit after the seal', async () => {
    const gate = gateCommits(store);
    const files = await storeFiles(store, { 'index.html': '<h1>gated</h1>' });
    const commit = (name: string) =>
      gate.store.commitRevision({
        site: name,
        create: { name, plan: 'builder', claimed: true },
        baseRevision: null,
        files,
        kind: 'deploy',
        createdBy: 'admin',
      });
    const underWay = commit('gate-before');
    await gate.seal();
    expect((await underWay).ok).toBe(true);
    await expect(commit('gate-after')).rejects.toMatchObject({ code: 'unavailable' });
    expect(store.getSite('gate-after')).toBeUndefined();
    // Reads and everything else go on as before.
    expect(gate.store.getSite('gate-before')?.name).toBe('gate-before');
  });
});
