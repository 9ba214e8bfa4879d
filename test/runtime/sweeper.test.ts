import { existsSync, utimesSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { openStore, type FileEntry, type Store } from '../../src/store/index.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { tempDir } from '../helpers/sites.js';

const DAY = 24 * 3600_000;

async function commit(store: Store, name: string, content: string, create?: { plan: 'anonymous' | 'free' | 'builder' }): Promise<string> {
  const entry: FileEntry = await store.blobs.putFile(Buffer.from(content), 'text/html; charset=utf-8', { compress: false });
  const live = store.getSite(name)?.liveRevision ?? null;
  const result = await store.commitRevision({
    site: name,
    create: create && { name, plan: create.plan, claimed: create.plan !== 'anonymous' },
    baseRevision: create ? null : live,
    files: new Map([['index.html', entry]]),
    kind: 'deploy',
    createdBy: 'test',
  });
  if (!result.ok) throw new Error(result.reason);
  return result.revision.id;
}

describe('lifecycle sweeper', () => {
  it("prunes history past each plan's reach and collects blobs only pruned revisions used", async () => {
    let clock = Date.now() - 30 * DAY;
    const dir = tempDir();
    const store = openStore({ dir, now: () => clock });
    try {
      // Free: 7 days of history. Anonymous: only the live revision. Builder: a year.
      const freeOld = await commit(store, 'free-site', 'free v1', { plan: 'free' });
      const anonOld = await commit(store, 'anon-site', 'anon v1', { plan: 'anonymous' });
      const builderOld = await commit(store, 'builder-site', 'builder v1', { plan: 'builder' });
      const oldBlob = store.listFiles(freeOld)[0]!.sha256;
      clock += 29 * DAY;
      const freeNew = await commit(store, 'free-site', 'free v2');
      const anonNew = await commit(store, 'anon-site', 'anon v2');
      await commit(store, 'builder-site', 'builder v2');

      // Age the blob past the grace period, on the store's clock.
      const agedMs = (clock - 2 * 3600_000) / 1000;
      utimesSync(store.blobs.pathOf(oldBlob), agedMs, agedMs);

      const report = await sweep({ store, log: createLogger({ level: 'silent' }), blobGraceMs: 3600_000, now: () => clock });
      expect(report.sites).toBe(3);
      expect(report.prunedRevisions).toBe(2);
      expect(store.getRevision(freeOld)).toBeUndefined();
      expect(store.getRevision(anonOld)).toBeUndefined();
      expect(store.getRevision(builderOld)).toBeDefined();
      expect(store.getRevision(freeNew)).toBeDefined();
      expect(store.getRevision(anonNew)).toBeDefined();
      expect(existsSync(store.blobs.pathOf(oldBlob))).toBe(false);
      // Blobs of live revisions stay.
      expect(existsSync(store.blobs.pathOf(store.listFiles(freeNew)[0]!.sha256))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
