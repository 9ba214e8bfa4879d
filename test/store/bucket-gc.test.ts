import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectBucketGarbage, openStore, referencedBlobs, type Store } from '../../src/store/index.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { publishSite, tempDir } from '../helpers/sites.js';

/**
 * Garbage collection of the blob bucket: only unreferenced objects older than the grace period
 * go, with their variants; a blob a deploy has just published (or renewed) stays.
 */

const HOUR = 3600_000;
let s3: TestS3;
let store: Store;
// The store's clock, which `publish` stamps renewals with; collection runs later still.
let clock = Date.now();

beforeAll(async () => {
  s3 = await startS3('plinth-gc');
  store = openStore({ dir: tempDir('plinth-bucket-gc-'), now: () => clock, bucket: s3.options({ graceMs: HOUR }) });
});

afterAll(async () => {
  await store.close();
  await s3.stop();
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const keys = async (): Promise<string[]> => (await s3.list()).map((object) => object.key).sort();
const has = (all: string[], sha: string): boolean => all.some((key) => key.includes(sha));

describe('bucket garbage collection', () => {
  it('deletes unreferenced objects past the grace period with their variants, and nothing else', async () => {
    const page = (label: string): string => `<!doctype html><title>${label}</title>${'<p>kept text '.repeat(100)}${randomBytes(6).toString('hex')}`;
    const { revision } = await publishSite(store, 'kept-site', { 'index.html': page('kept') });
    const kept = store.listFiles(revision).map((file) => file.sha256);
    await store.blobs.publish(kept);

    // An orphan with variants (its site's revision is gone), an orphan a deploy is about to
    // reuse, and a fresh orphan (a deploy in flight).
    const orphan = await store.blobs.putFile(Buffer.from(page('orphan')), 'text/html; charset=utf-8', { compress: true });
    const reused = await store.blobs.write(randomBytes(3000));
    await store.blobs.publish([orphan.sha256, reused.sha256]);
    // Someone else's object under the prefix is never ours to delete.
    await s3.put('blobs/notes/readme.txt', Buffer.from('not a blob'));

    // Two hours on: every object is past the grace period by its LastModified.
    clock += 2 * HOUR;
    // A deploy reusing `reused` renews it (the bucket's LastModified does not show it: s3rver,
    // like some stores, keeps it on a copy onto itself; the stamp is in the metadata).
    await openStore({ dir: tempDir(), now: () => clock, bucket: s3.options({ graceMs: HOUR }) }).blobs.publish([reused.sha256]);

    const before = await keys();
    expect(has(before, orphan.sha256)).toBe(true);
    const deleted = await collectBucketGarbage(store, {
      graceMs: HOUR,
      now: () => Date.now() + 2 * HOUR,
    });

    const after = await keys();
    expect(deleted).toBe(3);
    expect(has(after, orphan.sha256)).toBe(false);
    for (const sha of kept) expect(has(after, sha)).toBe(true);
    expect(has(after, reused.sha256)).toBe(true);
    expect(after).toContain('blobs/notes/readme.txt');
    expect(before.length - after.length).toBe(3);
  });

  it('deletes nothing from a bucket whose marker names another installation, or none', async () => {
    const orphan = await store.blobs.write(randomBytes(2000));
    await store.blobs.publish([orphan.sha256]);
    const later = () => Date.now() + 2 * HOUR;
    const ours = { kind: 'install', id: 'this-install' } as const;
    // No marker yet: the node marks the bucket at start-up, so an unmarked one is not its own.
    await expect(collectBucketGarbage(store, { graceMs: HOUR, now: later, owner: ours })).rejects.toThrow(
      'The bucket belongs to no installation (it has no marker), not to the embedded install this-install: nothing was deleted from it.',
    );
    await s3.put('plinth/owner.json', Buffer.from(JSON.stringify({ owner: { kind: 'cluster', id: 'another-cluster' } })));
    try {
      await expect(collectBucketGarbage(store, { graceMs: HOUR, now: later, owner: ours })).rejects.toThrow(
        'The bucket belongs to the cluster another-cluster, not to the embedded install this-install',
      );
      expect(has(await keys(), orphan.sha256)).toBe(true);
      await s3.put('plinth/owner.json', Buffer.from(JSON.stringify({ owner: ours })));
      expect(await collectBucketGarbage(store, { graceMs: HOUR, now: later, owner: ours })).toBeGreaterThanOrEqual(1);
      expect(has(await keys(), orphan.sha256)).toBe(false);
    } finally {
      await s3.remove('plinth/owner.json');
    }
  });

  it('keeps unreferenced objects younger than the grace period', async () => {
    const young = await store.blobs.write(randomBytes(1000));
    await store.blobs.publish([young.sha256]);
    expect(await collectBucketGarbage(store, { graceMs: HOUR, now: () => Date.now() })).toBe(0);
    expect(has(await keys(), young.sha256)).toBe(true);
  });

  it('reads every revision of every site for the referenced set', async () => {
    const first = await publishSite(store, 'history-site', { 'index.html': 'one' });
    const second = await store.commitRevision({
      site: 'history-site',
      baseRevision: first.revision,
      files: new Map([['index.html', await store.blobs.putFile(Buffer.from('two'), 'text/html; charset=utf-8', { compress: false })]]),
      kind: 'deploy',
      createdBy: 'admin',
    });
    expect(second.ok).toBe(true);
    const referenced = referencedBlobs(store);
    expect(referenced.has(sha256(Buffer.from('one')))).toBe(true);
    expect(referenced.has(sha256(Buffer.from('two')))).toBe(true);
  });

  it('does nothing without a bucket', async () => {
    const local = openStore({ dir: tempDir() });
    try {
      expect(await collectBucketGarbage(local, { graceMs: HOUR })).toBe(0);
    } finally {
      await local.close();
    }
  });
});
