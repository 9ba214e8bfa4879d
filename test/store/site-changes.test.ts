import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';
import { assertBuilt, fixture, markedEntry } from './helpers.js';
import { waitUntil } from '../helpers/wait.js';

describe('site change feed', () => {
  let store: Store;

  beforeAll(() => assertBuilt());
  afterEach(async () => {
    await store?.close();
  });

  it('tells listeners in the same thread at once', async () => {
    store = openStore({ dir: tempDir() });
    const heard: string[] = [];
    const stop = store.onSiteChanged(({ name }) => heard.push(name));
    const first = await store.commitRevision({
      site: 'feed-a',
      create: { name: 'feed-a', plan: 'free', claimed: true },
      baseRevision: null,
      files: new Map([['index.html', markedEntry(1)]]),
      kind: 'deploy',
      createdBy: 'admin',
    });
    expect(first.ok).toBe(true);
    expect(heard).toEqual(['feed-a']);
    await store.setSiteState('feed-a', 'taken_down');
    expect(heard).toEqual(['feed-a', 'feed-a']);
    stop();
    await store.setSiteState('feed-a', 'active');
    expect(heard).toHaveLength(2);
  });

  it('tells other threads, which then read the new record rather than their old snapshot', async () => {
    const dir = tempDir();
    store = openStore({ dir });
    const first = await store.commitRevision({
      site: 'feed-b',
      create: { name: 'feed-b', plan: 'free', claimed: true },
      baseRevision: null,
      files: new Map([['index.html', markedEntry(1)]]),
      kind: 'deploy',
      createdBy: 'admin',
    });
    if (!first.ok) throw new Error('setup failed');
    const worker = new Worker(fixture('change-listener.mjs'), { workerData: { dir, site: 'feed-b' } });
    try {
      const [ready] = (await once(worker, 'message')) as [string];
      expect(ready).toBe('ready');
      const heard = once(worker, 'message');
      const second = await store.commitRevision({
        site: 'feed-b',
        baseRevision: first.revision.id,
        files: new Map([['index.html', markedEntry(2)]]),
        kind: 'deploy',
        createdBy: 'admin',
      });
      if (!second.ok) throw new Error('commit failed');
      const [report] = (await heard) as [{ change: { name: string; siteId: string }; liveRevision: string }];
      expect(report.change).toEqual({ name: 'feed-b', siteId: first.site.id });
      expect(report.liveRevision).toBe(second.revision.id);
    } finally {
      worker.postMessage('close');
      await once(worker, 'exit');
    }
  });

  it('marks changes made by another process, not those made in this one, and forgets ended processes', async () => {
    const dir = tempDir();
    store = openStore({ dir });
    const first = await store.commitRevision({
      site: 'feed-c',
      create: { name: 'feed-c', plan: 'free', claimed: true },
      baseRevision: null,
      files: new Map([['index.html', markedEntry(1)]]),
      kind: 'deploy',
      createdBy: 'admin',
    });
    if (!first.ok) throw new Error('setup failed');
    const before = store.siteChangesElsewhere();
    await store.setSiteState('feed-c', 'taken_down');
    expect(store.siteChangesElsewhere()).toBe(before);

    await promisify(execFile)(process.execPath, [fileURLToPath(fixture('set-state.mjs')), dir, 'feed-c', 'active']);
    // Seen once lmdb-js renews its read snapshot.
    expect(await waitUntil(() => store.siteChangesElsewhere() !== before, 2000, 5)).toBe(true);
    expect(store.getSite('feed-c')?.state).toBe('active');

    // The other process has exited: the next store opened drops its mark.
    const again = openStore({ dir });
    expect(await waitUntil(() => again.siteChangesElsewhere() === '', 2000, 5)).toBe(true);
    await again.close();
  });
});
