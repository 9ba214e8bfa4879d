import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isBucketUnavailable, toErrorBody } from '../../src/errors.js';
import { createS3Bucket } from '../../src/store/bucket.js';
import { openBlobStore, type BlobStore, type BucketOptions, type Encoding } from '../../src/store/index.js';
import { isObjectPut, startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The blob store with a bucket, against s3rver (the stand-in for AWS S3, R2, MinIO and Ceph RGW):
 * what `publish` sends, what `fetch` brings back and checks, what `trimCache` may evict, and what
 * callers see when the bucket is gone.
 */

let s3: TestS3;

beforeAll(async () => {
  s3 = await startS3();
});

afterAll(async () => {
  await s3.stop();
});

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const keyOf = (sha: string, encoding?: Encoding): string =>
  `blobs/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}${encoding === 'br' ? '.br' : encoding === 'gzip' ? '.gz' : ''}`;

/** A blob store on a fresh data directory, with the test bucket behind it. */
function openBlobs(extra: Partial<BucketOptions> = {}, now?: () => number): { blobs: BlobStore; dir: string } {
  const dir = tempDir('plinth-bucket-');
  return { blobs: openBlobStore({ dir, now, bucket: s3.options(extra) }), dir };
}

/** Text that compresses, unique per call. */
const page = (label: string): Buffer =>
  Buffer.from(`<!doctype html><title>${label}</title>${'<p>Plinth serves this page. '.repeat(200)}${randomBytes(8).toString('hex')}`);

describe('a blob store with a bucket', () => {
  it('publishes a blob and its variants, each stored byte for byte (no aws-chunked framing)', async () => {
    const { blobs } = openBlobs();
    const bytes = page('one');
    const entry = await blobs.putFile(bytes, 'text/html; charset=utf-8', { compress: true });
    expect(Object.keys(entry.encodings ?? {}).sort()).toEqual(['br', 'gzip']);
    await blobs.publish([entry.sha256]);

    const keys = (await s3.list()).map((o) => o.key);
    expect(keys).toEqual(expect.arrayContaining([keyOf(entry.sha256), keyOf(entry.sha256, 'br'), keyOf(entry.sha256, 'gzip')]));
    expect(sha256(await s3.get(keyOf(entry.sha256)))).toBe(entry.sha256);
    expect(brotliDecompressSync(await s3.get(keyOf(entry.sha256, 'br')))).toEqual(bytes);
    expect((await s3.get(keyOf(entry.sha256, 'gzip'))).byteLength).toBe(entry.encodings!.gzip);
  });

  it('uploads only what the bucket lacks', async () => {
    const first = openBlobs();
    const old = [randomBytes(3000), randomBytes(4000)];
    const oldShas = await Promise.all(old.map(async (bytes) => (await first.blobs.write(bytes)).sha256));
    await first.blobs.publish(oldShas);

    // Another node: it has the old blobs on disk too (a redeploy), and one new one.
    const second = openBlobs();
    for (const bytes of old) await second.blobs.write(bytes);
    const fresh = randomBytes(5000);
    const freshSha = (await second.blobs.write(fresh)).sha256;
    const before = (await s3.list()).length;
    const from = await s3.mark();
    await second.blobs.publish([...oldShas, freshSha, freshSha]);

    expect((await s3.sentSince(from)).filter(isObjectPut)).toHaveLength(1);
    expect((await s3.sentSince(from)).filter(isObjectPut)[0]!.url).toContain(freshSha);
    expect((await s3.list()).length).toBe(before + 1);
    expect(sha256(await s3.get(keyOf(freshSha)))).toBe(freshSha);

    // Asked again soon after, it does not even ask the bucket.
    const again = await s3.mark();
    await second.blobs.publish([...oldShas, freshSha]);
    expect(await s3.sentSince(again)).toEqual([]);
  });

  it('replaces a variant the bucket holds at another size than the one about to be recorded', async () => {
    const { blobs } = openBlobs();
    const entry = await blobs.putFile(page('cut'), 'text/html; charset=utf-8', { compress: true });
    // What a store without atomic uploads keeps of an upload cut off half-way.
    await s3.put(keyOf(entry.sha256, 'br'), Buffer.from('cut short'));
    await blobs.publish([entry.sha256]);
    expect((await s3.get(keyOf(entry.sha256, 'br'))).byteLength).toBe(entry.encodings!.br);
  });

  it('keeps the whole object when an upload over it is cut off (the stand-in is atomic, as S3 is)', async () => {
    const bytes = randomBytes(5000);
    const key = keyOf(sha256(bytes));
    await s3.put(key, bytes);
    const aborted = new AbortController();
    const slow = new Readable({ read() {} });
    slow.push(randomBytes(100));
    const sending = s3.client
      .send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: slow, ContentLength: 5000 }), { abortSignal: aborted.signal })
      .catch((err: Error) => err.name);
    await new Promise((resolve) => setTimeout(resolve, 200));
    aborted.abort();
    expect(await sending).toBe('AbortError');
    expect(await s3.get(key)).toEqual(bytes);
  });

  it('uploads a blob as soon as it is added to a publisher, before its finish, and finish waits for every one', async () => {
    const { blobs } = openBlobs();
    const first = await blobs.write(randomBytes(4000));
    const second = await blobs.write(randomBytes(5000));
    const from = await s3.mark();
    const publisher = blobs.publisher();
    publisher.add(first.sha256);
    expect(
      await waitUntil(
        () =>
          s3
            .requests()
            .slice(from)
            .some((r) => isObjectPut(r) && r.url.includes(first.sha256)),
        5000,
        5,
      ),
    ).toBe(true);
    await publisher.finish([first.sha256, second.sha256]);
    // Each once, the one added before and the one only finish named.
    expect(
      (await s3.sentSince(from))
        .filter(isObjectPut)
        .map((r) => r.url.match(/[0-9a-f]{64}/)![0])
        .sort(),
    ).toEqual([first.sha256, second.sha256].sort());
    expect(sha256(await s3.get(keyOf(second.sha256)))).toBe(second.sha256);
  });

  it('takes the variants the unpack announced with a blob as all it has (none looked for on disk), and a variant announced later with it as well', async () => {
    const { blobs } = openBlobs();
    // Large blobs, so their variants go up before the answer, with finish.
    const big = (label: string): Buffer => Buffer.concat([Buffer.from(`<!doctype html>${label}`), Buffer.from('<p>Plinth '.repeat(120_000)), randomBytes(8)]);
    const named = big('named');
    const { sha256: namedSha } = await blobs.write(named);
    const namedVariants = blobs.compressSync(namedSha, named, ['gzip', 'br']);
    const unnamed = big('unnamed');
    const { sha256: unnamedSha } = await blobs.write(unnamed);
    blobs.compressSync(unnamedSha, unnamed, ['gzip']);
    const publisher = blobs.publisher();
    publisher.add(namedSha, undefined, { gzip: namedVariants.gzip! });
    // On disk, but the unpack said it has none (made for another type of file with the same bytes).
    publisher.add(unnamedSha, undefined, {});
    // The same bytes at another path, whose entry has the brotli variant too.
    publisher.add(namedSha, undefined, { gzip: namedVariants.gzip!, br: namedVariants.br! });
    await publisher.finish([namedSha, unnamedSha]);
    const keys = (await s3.list()).map((o) => o.key);
    expect(keys).toEqual(expect.arrayContaining([keyOf(namedSha), keyOf(namedSha, 'gzip'), keyOf(namedSha, 'br'), keyOf(unnamedSha)]));
    expect(keys).not.toContain(keyOf(unnamedSha, 'gzip'));
    expect((await s3.get(keyOf(namedSha, 'br'))).byteLength).toBe(namedVariants.br);
  });

  it('publishes what the caller knows of blobs (sizes, variants) as it is, looking for nothing on disk', async () => {
    const { blobs } = openBlobs();
    const bytes = page('known');
    const { sha256: sha } = await blobs.write(bytes);
    // As the compression after a deploy makes them and reports them.
    const made = blobs.compressSync(sha, bytes, ['gzip', 'br']);
    // Another blob with a variant on disk that the caller does not name: not looked for.
    const other = page('other');
    const { sha256: otherSha } = await blobs.write(other);
    blobs.compressSync(otherSha, other, ['gzip']);
    await blobs.publish(
      [],
      new Map([
        [sha, { size: bytes.byteLength, encodings: made }],
        [otherSha, { size: other.byteLength, encodings: {} }],
      ]),
    );
    const keys = (await s3.list()).map((o) => o.key);
    expect(keys).toEqual(expect.arrayContaining([keyOf(sha), keyOf(sha, 'gzip'), keyOf(sha, 'br'), keyOf(otherSha)]));
    expect(keys).not.toContain(keyOf(otherSha, 'gzip'));
    expect(await s3.get(keyOf(sha, 'br'))).toEqual(blobs.readSync(sha, 'br'));
  });

  it("leaves a small blob's variants for after the answer, and a node asked for one first makes it from the blob, byte for byte", async () => {
    const { blobs } = openBlobs();
    const bytes = page('after the answer');
    const { sha256: sha } = await blobs.write(bytes);
    // As a deploy makes it before its answer (the ingest worker's storeFile).
    const made = blobs.compressSync(sha, bytes, ['gzip']);
    // A large blob's variants still go up before the answer: they may be streamed by their recorded size.
    const large = Buffer.concat([Buffer.from('<!doctype html>'), Buffer.from('<p>Plinth '.repeat(120_000)), randomBytes(8)]);
    const { sha256: largeSha } = await blobs.write(large);
    blobs.compressSync(largeSha, large, ['gzip']);
    const publisher = blobs.publisher();
    publisher.add(sha);
    await publisher.finish([sha, largeSha]);
    let keys = (await s3.list()).map((o) => o.key);
    expect(keys).toEqual(expect.arrayContaining([keyOf(sha), keyOf(largeSha), keyOf(largeSha, 'gzip')]));
    expect(keys).not.toContain(keyOf(sha, 'gzip'));

    // Another node serves the new revision first: it has the blob's variant all the same.
    const node = openBlobs();
    await node.blobs.fetch(sha, 'gzip');
    expect(node.blobs.readSync(sha, 'gzip')).toEqual(blobs.readSync(sha, 'gzip'));
    expect(statSync(node.blobs.pathOf(sha, 'gzip')).size).toBe(made.gzip);
    expect(readdirTmp(node.dir)).toEqual([]);
    keys = (await s3.list()).map((o) => o.key);
    expect(keys).not.toContain(keyOf(sha, 'gzip'));

    await publisher.afterAnswer();
    expect(await s3.get(keyOf(sha, 'gzip'))).toEqual(blobs.readSync(sha, 'gzip'));
  });

  it('uploads a large blob in parts', async () => {
    const { blobs } = openBlobs({ multipartThresholdBytes: 256 * 1024, partSizeBytes: 100 * 1024 });
    const bytes = randomBytes(1024 * 1024 + 123);
    const { sha256: sha } = await blobs.write(bytes);
    const from = await s3.mark();
    await blobs.publish([sha]);

    const parts = (await s3.sentSince(from)).filter((r) => r.method === 'PUT' && r.url.includes('partNumber='));
    expect(parts).toHaveLength(11);
    expect((await s3.sentSince(from)).filter((r) => r.method === 'POST' && r.url.includes('uploads'))).toHaveLength(1);
    expect((await s3.sentSince(from)).filter((r) => r.method === 'POST' && r.url.includes('uploadId='))).toHaveLength(1);
    const stored = await s3.get(keyOf(sha));
    expect(stored.byteLength).toBe(bytes.byteLength);
    expect(sha256(stored)).toBe(sha);
  });

  it('fetches a blob that is not local into the cache, once for callers asking at once', async () => {
    const { blobs } = openBlobs();
    const bytes = page('fetched');
    const entry = await blobs.putFile(bytes, 'text/html; charset=utf-8', { compress: true });
    await blobs.publish([entry.sha256]);

    const node = openBlobs();
    expect(node.blobs.isLocal(entry.sha256)).toBe(false);
    const from = await s3.mark();
    const one = node.blobs.fetch(entry.sha256);
    const two = node.blobs.fetch(entry.sha256);
    expect(two).toBe(one);
    await Promise.all([one, two]);
    expect((await s3.sentSince(from)).filter((r) => r.method === 'GET')).toHaveLength(1);
    expect(node.blobs.isLocal(entry.sha256)).toBe(true);
    expect(node.blobs.readSync(entry.sha256)).toEqual(bytes);
    expect(readdirTmp(node.dir)).toEqual([]);

    // Variants come on their own, checked by what they decode to.
    expect(node.blobs.isLocal(entry.sha256, 'br')).toBe(false);
    await node.blobs.fetch(entry.sha256, 'br');
    await node.blobs.fetch(entry.sha256, 'gzip');
    expect(brotliDecompressSync(node.blobs.readSync(entry.sha256, 'br'))).toEqual(bytes);
    expect(statSync(node.blobs.pathOf(entry.sha256, 'gzip')).size).toBe(entry.encodings!.gzip);

    // A local file costs no request.
    const local = await s3.mark();
    await node.blobs.fetch(entry.sha256);
    expect(await s3.sentSince(local)).toEqual([]);
  });

  it.each([
    ['a blob whose bytes changed in the bucket', undefined, (bytes: Buffer) => Buffer.concat([bytes.subarray(0, -1), Buffer.from('!')])],
    ['a variant that decodes to other bytes', 'br' as const, (bytes: Buffer) => brotliCompressSync(Buffer.concat([bytes, Buffer.from('extra')]))],
    ['a variant that is not even brotli', 'br' as const, (bytes: Buffer) => gzipSync(bytes)],
  ])('refuses %s and keeps nothing of it', async (_, encoding, corrupt) => {
    const { blobs } = openBlobs();
    const bytes = page('corrupt');
    const entry = await blobs.putFile(bytes, 'text/html; charset=utf-8', { compress: true });
    await blobs.publish([entry.sha256]);
    await s3.put(keyOf(entry.sha256, encoding), corrupt(bytes));

    const node = openBlobs();
    await expect(node.blobs.fetch(entry.sha256, encoding)).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    expect(existsSync(node.blobs.pathOf(entry.sha256, encoding))).toBe(false);
    expect(node.blobs.isLocal(entry.sha256, encoding)).toBe(false);
    expect(readdirTmp(node.dir)).toEqual([]);
  });

  it('says when the bucket has no such blob, apart from the bucket being down', async () => {
    const { blobs } = openBlobs();
    const missing = sha256(randomBytes(10));
    const err = await blobs.fetch(missing).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BLOB_NOT_IN_BUCKET' });
    expect(isBucketUnavailable(err)).toBe(false);
    await expect(blobs.publish([missing])).rejects.toMatchObject({ code: 'BLOB_NOT_IN_BUCKET' });
  });

  it('renews an old object it reuses, so bucket garbage collection spares it', async () => {
    let clock = Date.now();
    const { blobs } = openBlobs({ graceMs: 3600_000 }, () => clock);
    const { sha256: sha } = await blobs.write(randomBytes(2000));
    await blobs.publish([sha]);
    const before = (await blobs.bucket!.head(keyOf(sha)))!.touchedMs;

    // Within half the grace period: nothing to do. Past it: a copy onto itself with a fresh stamp.
    clock += 20 * 60_000;
    const quiet = await s3.mark();
    await openBlobs({ graceMs: 3600_000 }, () => clock).blobs.publish([sha]);
    expect((await s3.sentSince(quiet)).filter((r) => r.copy)).toHaveLength(0);
    clock += 20 * 60_000;
    const from = await s3.mark();
    await openBlobs({ graceMs: 3600_000 }, () => clock).blobs.publish([sha]);
    expect((await s3.sentSince(from)).filter((r) => r.copy)).toHaveLength(1);
    expect((await s3.sentSince(from)).filter(isObjectPut)).toHaveLength(0);
    const after = (await blobs.bucket!.head(keyOf(sha)))!.touchedMs;
    expect(after).toBeGreaterThan(before);
    expect(after).toBe(clock);
    expect(sha256(await s3.get(keyOf(sha)))).toBe(sha);
  });
});

describe('a node whose clock is days off', () => {
  // The first request such a node's client sends is refused (RequestTimeTooSkewed); the SDK learns
  // the bucket's time from the answer. In a cluster that first request is an upload: the ledger
  // skips the question (HEAD) that would have taught it first.
  it.each([
    ['a small blob (sent from memory)', 5000],
    ['a blob past 1 MiB (streamed)', 2 * 1024 * 1024 + 17],
  ])('uploads %s on its first request to the bucket', async (_, size) => {
    const dir = tempDir('plinth-skew-');
    const bytes = randomBytes(size);
    const path = join(dir, 'blob');
    writeFileSync(path, bytes);
    const key = keyOf(sha256(bytes));
    const realNow = Date.now.bind(Date);
    const skewed = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 4 * 24 * 3600_000);
    const bucket = createS3Bucket(s3.options());
    try {
      await bucket.upload(key, path, size);
    } finally {
      bucket.close();
      skewed.mockRestore();
    }
    expect(sha256(await s3.get(key))).toBe(sha256(bytes));
  });
});

describe('the local cache', () => {
  /** A node with `count` published blobs of `size` bytes, used one after the other. */
  async function filledCache(count: number, size: number, extra: Partial<BucketOptions>) {
    const node = openBlobs({ minIdleMs: 0, ...extra });
    const shas: string[] = [];
    for (let i = 0; i < count; i++) shas.push((await node.blobs.write(randomBytes(size))).sha256);
    await node.blobs.publish(shas);
    const base = Date.now() / 1000 - 3600;
    shas.forEach((sha, i) => utimesSync(node.blobs.pathOf(sha), base + i, base + i));
    return { ...node, shas };
  }

  it('evicts the least recently used blobs until it is within its budget', async () => {
    const { blobs, shas } = await filledCache(6, 10_000, { cacheBytes: 35_000 });
    // Using the oldest makes it the newest.
    expect(blobs.isLocal(shas[0]!)).toBe(true);

    expect(await blobs.trimCache()).toEqual({ files: 3, bytes: 30_000, cachedBytes: 30_000 });
    expect(shas.map((sha) => existsSync(blobs.pathOf(sha)))).toEqual([true, false, false, false, true, true]);
    // An evicted blob comes back from the bucket, and counts as a download.
    expect(blobs.counters()).toEqual({ downloads: 0, downloadedBytes: 0, bucketErrors: 0 });
    await blobs.fetch(shas[1]!);
    expect(sha256(blobs.readSync(shas[1]!))).toBe(shas[1]);
    expect(blobs.counters()).toEqual({ downloads: 1, downloadedBytes: 10_000, bucketErrors: 0 });
  });

  it('never evicts a blob the bucket does not hold yet, nor one used within the idle time', async () => {
    const { blobs, shas } = await filledCache(3, 10_000, { cacheBytes: 15_000, minIdleMs: 60_000 });
    const unpublished = (await blobs.write(randomBytes(10_000))).sha256;
    const old = Date.now() / 1000 - 7200;
    utimesSync(blobs.pathOf(unpublished), old, old);
    // Used just now: kept whatever its rank.
    utimesSync(blobs.pathOf(shas[0]!), Date.now() / 1000, Date.now() / 1000);

    expect(await blobs.trimCache()).toEqual({ files: 2, bytes: 20_000, cachedBytes: 20_000 });
    expect(existsSync(blobs.pathOf(unpublished))).toBe(true);
    expect(existsSync(blobs.pathOf(shas[0]!))).toBe(true);
    expect(existsSync(blobs.pathOf(shas[1]!))).toBe(false);
  });

  it('keeps serving a file that is evicted while it is being read', async () => {
    const { blobs, shas } = await filledCache(2, 2 * 1024 * 1024, { cacheBytes: 1 });
    const path = blobs.pathOf(shas[0]!);
    const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
    const chunks: Buffer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('end', resolve).on('error', reject);
    });
    await new Promise<void>((resolve) => stream.once('data', (chunk) => (chunks.push(chunk as Buffer), stream.pause(), resolve())));

    expect((await blobs.trimCache()).files).toBe(2);
    expect(existsSync(path)).toBe(false);
    stream.on('data', (chunk) => chunks.push(chunk as Buffer));
    stream.resume();
    await done;
    expect(sha256(Buffer.concat(chunks))).toBe(shas[0]);
  });

  it('keeps every blob with a budget of 0', async () => {
    const { blobs, shas } = await filledCache(3, 10_000, { cacheBytes: 0 });
    expect(await blobs.trimCache()).toEqual({ files: 0, bytes: 0 });
    expect(shas.every((sha) => existsSync(blobs.pathOf(sha)))).toBe(true);
  });
});

describe('with the bucket down', () => {
  it('fails fetch and publish as unavailable (503 with Retry-After), evicts nothing, and works again once it is back', async () => {
    const { blobs } = openBlobs({ cacheBytes: 1, minIdleMs: 0 });
    const bytes = randomBytes(5000);
    const { sha256: sha } = await blobs.write(bytes);
    await blobs.publish([sha]);
    const node = openBlobs();
    const pending = (await node.blobs.write(randomBytes(3000))).sha256;

    await s3.pause();
    try {
      const fetchError = await node.blobs.fetch(sha).catch((e: unknown) => e);
      expect(fetchError).toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
      expect(isBucketUnavailable(fetchError)).toBe(true);
      const mapped = toErrorBody(fetchError);
      expect(mapped.status).toBe(503);
      expect(mapped.headers['Retry-After']).toMatch(/^\d+$/);
      expect(mapped.body.error).toMatchObject({ code: 'unavailable', details: { reason: 'storage_unreachable' } });
      expect(JSON.stringify(mapped.body)).not.toContain('127.0.0.1');

      await expect(node.blobs.publish([pending])).rejects.toMatchObject({ code: 'BUCKET_UNAVAILABLE' });
      // Whether the bucket holds a file cannot be known now, so the cache keeps everything.
      expect(await blobs.trimCache()).toEqual({ files: 0, bytes: 0, cachedBytes: 5000 });
      expect(node.blobs.counters().bucketErrors).toBeGreaterThan(0);
      expect(blobs.isLocal(sha)).toBe(true);
      // What is cached is still read locally.
      expect(blobs.readSync(sha)).toEqual(bytes);
    } finally {
      await s3.resume();
    }
    await node.blobs.fetch(sha);
    expect(node.blobs.readSync(sha)).toEqual(bytes);
    await node.blobs.publish([pending]);
  });
});

/** Temp files left in the blob folder (a download that failed must leave none). */
function readdirTmp(dataDir: string): string[] {
  const tmp = join(dataDir, 'blobs', 'tmp');
  return existsSync(tmp) ? readdirSync(tmp) : [];
}
