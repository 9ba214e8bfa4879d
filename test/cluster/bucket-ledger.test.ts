import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectBucketGarbage, connectStore, type Store } from '../../src/store/index.js';
import { queryRows, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { isObjectPut, startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';

/**
 * A cluster deploy asks the database which of its blobs the bucket holds (the ledger every node
 * notes its uploads in), not the bucket: a blob another node uploaded costs no request, a new one
 * one PUT. The ledger is believed only while young enough for garbage collection to spare what
 * it names; past that, and for what garbage collection deleted, the bucket is asked again.
 */

const HOUR = 3600_000;
let pg: TestPostgres;
let s3: TestS3;
const open: Store[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  s3 = await startS3('plinth-ledger');
}, 30_000);

afterAll(async () => {
  for (const store of open) await store.close().catch(() => undefined);
  await pg?.stop();
  await s3?.stop();
});

/** A node: its own data directory (replica and blob cache), the shared database and bucket. */
async function node(): Promise<Store> {
  const store = await connectStore({ dir: tempDir('plinth-ledger-node-'), databaseUrl: pg.url, bootstrap: true, bucket: s3.options({ graceMs: HOUR }) });
  open.push(store);
  return store;
}

/** Writes the blobs into the node's own cache, as its ingest workers do for a deploy; resolves their hashes. */
const write = (store: Store, contents: Buffer[]): Promise<string[]> => Promise.all(contents.map(async (bytes) => (await store.blobs.write(bytes)).sha256));

const sql = (text: string, values: unknown[]): Promise<unknown[]> => queryRows(pg.url, text, values);

describe('a cluster deploy asks the database what the bucket holds', () => {
  it('sends no request to the bucket for blobs another node uploaded', async () => {
    const contents = [randomBytes(3000), randomBytes(4000), randomBytes(5000)];
    const a = await node();
    await a.blobs.publish(await write(a, contents));

    // The same content deployed again through another node (a redeploy, another site).
    const b = await node();
    const shas = await write(b, contents);
    const from = await s3.mark();
    await b.blobs.publish(shas);
    expect(await s3.sentSince(from)).toEqual([]);
  });

  it('puts a new blob in one request, without asking the bucket first', async () => {
    const a = await node();
    const [sha] = await write(a, [randomBytes(6000)]);
    const from = await s3.mark();
    await a.blobs.publish([sha!]);
    expect((await s3.sentSince(from)).map((r) => r.method)).toEqual(['PUT']);
    expect((await s3.sentSince(from))[0]!.url).toContain(sha);
  });

  it('asks the bucket again once its note is older than half the grace period', async () => {
    const contents = [randomBytes(2500)];
    const a = await node();
    const shas = await write(a, contents);
    await a.blobs.publish(shas);
    // The note, 40 minutes old: past half the hour of grace, it is no longer believed.
    await sql("UPDATE plinth_bucket_objects SET touched_ms = touched_ms - 2400000 WHERE key LIKE '%' || $1", [shas[0]]);

    const b = await node();
    const from = await s3.mark();
    await b.blobs.publish(await write(b, contents));
    expect((await s3.sentSince(from)).map((r) => r.method)).toEqual(['HEAD']);

    // What the bucket answered is noted: a third node asks nothing.
    const c = await node();
    const again = await s3.mark();
    await c.blobs.publish(await write(c, contents));
    expect(await s3.sentSince(again)).toEqual([]);
  });

  it('forgets what bucket garbage collection deleted, so the next deploy of it uploads it again', async () => {
    const contents = [randomBytes(3500)];
    const a = await node();
    const shas = await write(a, contents);
    await a.blobs.publish(shas);

    // Nothing references it: two hours on, the sweep takes it.
    const deleted = await collectBucketGarbage(a, { graceMs: HOUR, now: () => Date.now() + 2 * HOUR });
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect((await s3.list()).some((object) => object.key.includes(shas[0]!))).toBe(false);

    const b = await node();
    const from = await s3.mark();
    await b.blobs.publish(await write(b, contents));
    expect((await s3.sentSince(from)).filter(isObjectPut)).toHaveLength(1);
    expect((await s3.list()).some((object) => object.key.includes(shas[0]!))).toBe(true);
  });
});
