import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type FileEntry, type Store } from '../../src/store/index.js';
import { assertBuilt, fixture, markedEntry } from './helpers.js';

const FILES = 2000;
const COMMITS = 12;
const SITE = 'big-site';

let dir: string;
let store: Store;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'plinth-store-reader-'));
  store = openStore({ dir });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Every file of revision `marker` carries the same marker, so rows from two revisions are detectable. */
function revisionFiles(marker: number): Map<string, FileEntry> {
  const files = new Map<string, FileEntry>();
  for (let i = 0; i < FILES; i++) files.set(`/dir${i % 17}/file-${i}.html`, markedEntry(marker));
  return files;
}

it('never shows a reader on another thread a mix of two revisions', async () => {
  const first = await store.commitRevision({
    site: SITE,
    create: { name: SITE, plan: 'team', claimed: true },
    baseRevision: null,
    files: revisionFiles(1),
    kind: 'deploy',
    createdBy: 'test',
  });
  if (!first.ok) throw new Error(first.reason);

  const stop = new SharedArrayBuffer(4);
  const reader = new Worker(fixture('reader-worker.mjs'), { workerData: { dir, site: SITE, fileCount: FILES, stop } });
  const [ready] = (await once(reader, 'message')) as [{ type: string }];
  expect(ready.type).toBe('ready');
  const done = once(reader, 'message');

  let base = first.revision.id;
  for (let marker = 2; marker <= COMMITS + 1; marker++) {
    const result = await store.commitRevision({ site: SITE, baseRevision: base, files: revisionFiles(marker), kind: 'deploy', createdBy: 'test' });
    if (!result.ok) throw new Error(result.reason);
    base = result.revision.id;
    // Give the reader a few turns on each live revision.
    await sleep(5);
  }
  Atomics.store(new Int32Array(stop), 0, 1);

  const [report] = (await done) as [{ checks: number; mixedCount: number; mixed: unknown[]; revisionsSeen: number }];
  await once(reader, 'exit');
  expect(report.mixed).toEqual([]);
  expect(report.mixedCount).toBe(0);
  expect(report.checks).toBeGreaterThan(COMMITS);
  // The reader must actually have watched the pointer move for the check to mean anything.
  expect(report.revisionsSeen).toBeGreaterThan(2);
});
