import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { openStore, type Store } from '../../src/store/index.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { publishSite, tempDir } from '../helpers/sites.js';

const HOUR = 3600_000;
let s3: TestS3;
let store: Store;

beforeAll(async () => {
  s3 = await startS3('plinth-sweep');
  store = openStore({ dir: tempDir('plinth-sweep-bucket-'), bucket: s3.options({ graceMs: HOUR }) });
});

afterAll(async () => {
  await store.close();
  await s3.stop();
});

describe('the sweeper with a blob bucket', () => {
  it('collects the bucket as well as the local cache, and keeps what revisions reference', async () => {
    const { revision } = await publishSite(store, 'swept-site', { 'index.html': '<h1>kept</h1>' });
    const kept = store.listFiles(revision)[0]!.sha256;
    const orphan = (await store.blobs.write(randomBytes(4000))).sha256;
    await store.blobs.publish([kept, orphan]);

    const report = await sweep({ store, log: createLogger({ level: 'silent' }), blobGraceMs: HOUR, now: () => Date.now() + 2 * HOUR });
    expect(report.deletedBucketObjects).toBe(1);
    const keys = (await s3.list()).map((object) => object.key);
    expect(keys.some((key) => key.endsWith(kept))).toBe(true);
    expect(keys.some((key) => key.endsWith(orphan))).toBe(false);
  });

  it("fails with the bucket's error when the bucket is down", async () => {
    await s3.pause();
    try {
      await expect(sweep({ store, log: createLogger({ level: 'silent' }), blobGraceMs: HOUR })).rejects.toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
    } finally {
      await s3.resume();
    }
  });
});
