import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import pgClient from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBucketBlobStore } from '../../src/store/bucket-blob-store.js';
import { createBucketLedger, type BucketLedger } from '../../src/store/bucket-ledger.js';
import { createPackLedger } from '../../src/store/bucket-packs.js';
import { collectBucketGarbage, connectStore, type FileEntry, type Store } from '../../src/store/index.js';
import { queryRows, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { isObjectPut, startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * A cluster deploy packs its small blobs: one PUT of a pack object for many blobs, each blob's
 * range recorded in PostgreSQL before the commit. Another node reads a packed blob with a ranged
 * GET and checks it against its name; a blob already packed is never sent again; bucket garbage
 * collection deletes unreferenced old rows, then the packs no row points to.
 */

const HOUR = 3600_000;
const PACK_MAX = 64 * 1024;
let pg: TestPostgres;
let s3: TestS3;
const open: Store[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  s3 = await startS3('plinth-packs');
}, 30_000);

afterAll(async () => {
  for (const store of open) await store.close().catch(() => undefined);
  await pg?.stop();
  await s3?.stop();
});

/** A node: its own data directory (replica and blob cache), the shared database and bucket. */
async function node(packMaxBytes = PACK_MAX): Promise<Store> {
  const store = await connectStore({
    dir: tempDir('plinth-packs-node-'),
    databaseUrl: pg.url,
    bootstrap: true,
    bucket: s3.options({ graceMs: HOUR, packMaxBytes }),
  });
  open.push(store);
  return store;
}

const write = (store: Store, contents: Buffer[]): Promise<string[]> => Promise.all(contents.map(async (bytes) => (await store.blobs.write(bytes)).sha256));

const sql = <R extends pgClient.QueryResultRow = pgClient.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> =>
  queryRows<R>(pg.url, text, values);

const rowsOf = (shas: string[]) =>
  sql<{ key: string; pack: string; byte_offset: string; size: string; touched_ms: string }>(
    "SELECT * FROM plinth_packed_objects WHERE substring(key from '[0-9a-f]{64}') = ANY($1::text[]) ORDER BY byte_offset",
    [shas],
  );

/** Whether some query waits for a row lock (the other side of a race, started). */
const blockedOnLock = async (): Promise<boolean> =>
  (await sql<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"))[0]!.n !== '0';

/**
 * The real ledger on its own pool, counting the keys of each question (`findPlaced`) and of each
 * answer; `hold()`
 * keeps the next questions unanswered until the function it returns is called.
 */
function heldLedger(): { ledger: BucketLedger; questions: number[]; answered: number[]; hold: () => () => void; end: () => Promise<void> } {
  const pool = new pgClient.Pool({ connectionString: pg.url, max: 2 });
  const real = createBucketLedger(async (fn) => {
    const client = await pool.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  });
  const questions: number[] = [];
  const answered: number[] = [];
  let gate: Promise<void> | undefined;
  const ledger: BucketLedger = {
    ...real,
    async findPlaced(keys) {
      questions.push(keys.length);
      await gate;
      const found = await real.findPlaced(keys);
      answered.push(keys.length);
      return found;
    },
  };
  return {
    ledger,
    questions,
    answered,
    hold() {
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      return () => {
        gate = undefined;
        open();
      };
    },
    end: () => pool.end(),
  };
}

/** A node's blob store (its own cache, so nothing known to it yet) asking `ledger`. */
const storeAsking = (ledger: BucketLedger, dir: string) =>
  createBucketBlobStore({ dir: tempDir(dir), now: Date.now, bucket: s3.options({ graceMs: HOUR, packMaxBytes: PACK_MAX }), ledger });

describe('a cluster deploy packs its small blobs', () => {
  it('sends many small blobs in one PUT, and another node reads each back by its range', async () => {
    const contents = Array.from({ length: 20 }, (_, i) => randomBytes(1000 + i * 100));
    const a = await node();
    const shas = await write(a, contents);
    const from = await s3.mark();
    await a.blobs.publish(shas);
    const puts = (await s3.sentSince(from)).filter(isObjectPut);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.url).toMatch(/\/packs\/[0-9a-f-]{36}$/);
    // Not one of them was put alone.
    expect((await s3.list()).filter((object) => shas.some((sha) => object.key.includes(sha)))).toEqual([]);
    const rows = await rowsOf(shas);
    expect(rows).toHaveLength(20);
    expect(new Set(rows.map((row) => row.pack)).size).toBe(1);

    // A node with a cold cache.
    const b = await node();
    for (const [i, sha] of shas.entries()) {
      expect(b.blobs.isLocal(sha)).toBe(false);
      await b.blobs.fetch(sha);
      expect(readFileSync(b.blobs.pathOf(sha)).equals(contents[i]!)).toBe(true);
    }
  });

  it('says where each blob is packed, for the records; a node reads a blob there with no row, and falls back to the row when the place is wrong', async () => {
    const contents = Array.from({ length: 5 }, (_, i) => randomBytes(2000 + i * 10));
    const a = await node();
    const shas = await write(a, contents);
    const places = await a.blobs.publish(shas);
    const rows = await rowsOf(shas);
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const sha = row.key.match(/[0-9a-f]{64}/)![0];
      expect(places.get(sha)).toEqual({ key: row.pack, offset: Number(row.byte_offset) });
    }
    // Published again, by this node (it remembers) and by another (it asks the rows): the same places.
    expect(await a.blobs.publish(shas)).toEqual(places);
    const b = await node();
    await write(b, contents);
    expect(await b.blobs.publish(shas)).toEqual(places);

    // A place the rows do not hold: the wrong pack, then the right one. Reads check the bytes either way.
    const c = await node();
    const [first, second] = shas as [string, string];
    const place = (sha: string) => ({ ...places.get(sha)!, size: contents[shas.indexOf(sha)]!.byteLength });
    await c.blobs.fetch(first, undefined, { ...place(first), key: `packs/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}` });
    expect(readFileSync(c.blobs.pathOf(first)).equals(contents[0]!)).toBe(true);
    await c.blobs.fetch(second, undefined, { ...place(second), offset: place(second).offset + 1 });
    expect(readFileSync(c.blobs.pathOf(second)).equals(contents[1]!)).toBe(true);
    // No rows at all (a node that cannot reach PostgreSQL learns nothing from them): the place alone is enough.
    await sql('DELETE FROM plinth_packed_objects WHERE key = ANY($1::text[])', [rows.map((row) => row.key)]);
    for (const sha of shas.slice(2)) {
      await c.blobs.fetch(sha, undefined, place(sha));
      expect(readFileSync(c.blobs.pathOf(sha)).equals(contents[shas.indexOf(sha)]!)).toBe(true);
    }
  });

  it('sends nothing for blobs already packed, and renews rows older than half the grace period in place', async () => {
    const contents = [randomBytes(3000), randomBytes(4000)];
    const a = await node();
    await a.blobs.publish(await write(a, contents));

    const b = await node();
    const shas = await write(b, contents);
    let from = await s3.mark();
    await b.blobs.publish(shas);
    expect(await s3.sentSince(from)).toEqual([]);

    // Forty minutes old: past half the hour of grace, so renewed (in the database, not the bucket).
    await sql("UPDATE plinth_packed_objects SET touched_ms = touched_ms - 2400000 WHERE substring(key from '[0-9a-f]{64}') = ANY($1::text[])", [shas]);
    const before = Math.max(...(await rowsOf(shas)).map((row) => Number(row.touched_ms)));
    const c = await node();
    from = await s3.mark();
    await c.blobs.publish(await write(c, contents));
    expect(await s3.sentSince(from)).toEqual([]);
    for (const row of await rowsOf(shas)) expect(Number(row.touched_ms)).toBeGreaterThan(before);
  });

  it('packs again a blob whose row garbage collection deleted', async () => {
    const contents = [randomBytes(2500), randomBytes(2600)];
    const a = await node();
    const shas = await write(a, contents);
    await a.blobs.publish(shas);
    await sql("UPDATE plinth_packed_objects SET touched_ms = touched_ms - 2400000 WHERE substring(key from '[0-9a-f]{64}') = ANY($1::text[])", [shas]);
    await sql("DELETE FROM plinth_packed_objects WHERE substring(key from '[0-9a-f]{64}') = ANY($1::text[])", [shas]);

    const b = await node();
    const from = await s3.mark();
    await b.blobs.publish(await write(b, contents));
    expect((await s3.sentSince(from)).filter(isObjectPut)).toHaveLength(1);
    expect(await rowsOf(shas)).toHaveLength(2);
  });

  it('packs the variants a compression handed over from their bytes, not reading their files', async () => {
    const a = await node();
    const texts = [0, 1].map((i) => Buffer.from(`<p>variant ${i} ${randomBytes(8).toString('hex')}</p>`.repeat(200)));
    const shas = await write(a, texts);
    const variants = texts.map((text) => ({ gzip: gzipSync(text), br: brotliCompressSync(text) }));
    // No variant file on disk: what goes up can only be the bytes given.
    await a.blobs.publish(
      [],
      new Map(
        shas.map((sha, i) => [
          sha,
          { size: texts[i]!.byteLength, encodings: { gzip: variants[i]!.gzip.byteLength, br: variants[i]!.br.byteLength }, variantBytes: variants[i]! },
        ]),
      ),
    );
    const b = await node();
    for (const [i, sha] of shas.entries()) {
      for (const encoding of ['gzip', 'br'] as const) {
        await b.blobs.fetch(sha, encoding);
        expect(readFileSync(b.blobs.pathOf(sha, encoding)).equals(variants[i]![encoding])).toBe(true);
      }
    }
  });

  it('puts a lone new small blob as its own object: a pack of one would only add a row to write', async () => {
    const a = await node();
    const [sha] = await write(a, [randomBytes(3000)]);
    const from = await s3.mark();
    await a.blobs.publish([sha!]);
    const puts = (await s3.sentSince(from)).filter(isObjectPut);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.url).toContain(sha);
    expect(await rowsOf([sha!])).toEqual([]);
  });

  it('puts blobs handed over with their bytes, in packs or alone, with no file on disk: a small deploy writes its files after the answer', async () => {
    const a = await node();
    const contents = Array.from({ length: 5 }, () => randomBytes(900));
    const lone = randomBytes(1200);
    const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    for (const batch of [contents, [lone]]) {
      const publishing = a.blobs.publisher();
      for (const bytes of batch) publishing.add(sha(bytes), new Uint8Array(bytes));
      publishing.drain();
      await publishing.finish(batch.map(sha));
      await publishing.afterAnswer();
    }
    for (const bytes of [...contents, lone]) expect(existsSync(a.blobs.pathOf(sha(bytes)))).toBe(false);
    expect(await rowsOf(contents.map(sha))).toHaveLength(5);
    // Another node reads them all from the bucket.
    const b = await node();
    for (const bytes of [...contents, lone]) {
      await b.blobs.fetch(sha(bytes));
      expect(readFileSync(b.blobs.pathOf(sha(bytes))).equals(bytes)).toBe(true);
    }
  });

  it('reads blobs held until their files are written from memory on the thread holding them, asking the bucket nothing', async () => {
    const a = await node();
    const bytes = randomBytes(2000);
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(a.blobs.isLocal(sha)).toBe(false);
    const release = a.blobs.holdUnwritten!([{ sha256: sha, bytes: new Uint8Array(bytes) }]);
    expect(a.blobs.isLocal(sha)).toBe(true);
    expect(a.blobs.readSync(sha).equals(bytes)).toBe(true);
    // A reader of its path (a streamed answer) gets the file written from memory.
    expect(a.blobs.isLocal(sha, undefined, true)).toBe(false);
    const mark = await s3.mark();
    await a.blobs.fetch(sha);
    expect(await s3.sentSince(mark)).toEqual([]);
    expect(readFileSync(a.blobs.pathOf(sha)).equals(bytes)).toBe(true);
    release();
    // Let go, and its file gone (as before it was written): not on this node any more.
    rmSync(a.blobs.pathOf(sha));
    expect(a.blobs.isLocal(sha)).toBe(false);
  });

  it('sends the first packs while the rest of the deploy is still coming', async () => {
    const a = await node();
    const shas = await write(
      a,
      Array.from({ length: 40 }, () => randomBytes(700)),
    );
    const publishing = a.blobs.publisher();
    for (const sha of shas.slice(0, 32)) publishing.add(sha);
    // The first 32 go up before the last 8 are even announced.
    expect(await waitUntil(async () => (await rowsOf(shas.slice(0, 32))).length === 32, 5000)).toBe(true);
    await publishing.finish(shas);
    await publishing.afterAnswer();
    const rows = await rowsOf(shas);
    expect(rows).toHaveLength(40);
    expect(new Set(rows.map((row) => row.pack)).size).toBe(2);
  });

  it('sends a second early pack while the first is still in flight, not at the end; a burst is not split', async () => {
    const a = await node();
    const contents = Array.from({ length: 73 }, () => randomBytes(700));
    const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    const publishing = a.blobs.publisher();
    // Announced with their bytes in two bursts (two messages of a small site's unpack, which writes no file).
    for (const bytes of contents.slice(0, 32)) publishing.add(sha(bytes), new Uint8Array(bytes));
    await new Promise((resolve) => setImmediate(resolve));
    for (const bytes of contents.slice(32, 72)) publishing.add(sha(bytes), new Uint8Array(bytes));
    // Two packs go up with no `drain` or `finish`: only the last blob waits for the end.
    expect(await waitUntil(async () => (await rowsOf(contents.slice(0, 72).map(sha))).length === 72, 5000)).toBe(true);
    const packs = new Set((await rowsOf(contents.slice(0, 72).map(sha))).map((row) => row.pack));
    expect(packs.size).toBe(2);
    // The second burst of 40 is one pack, not 32 and then 8.
    expect(new Set((await rowsOf(contents.slice(32, 72).map(sha))).map((row) => row.pack)).size).toBe(1);
    // The last one, alone, goes up as its own object.
    publishing.add(sha(contents[72]!), new Uint8Array(contents[72]!));
    expect((await publishing.finish(contents.map(sha))).size).toBe(72);
    await publishing.afterAnswer();
  });

  it('leaves a deploy’s pack rows to its commit, written with the records; a commit that writes nothing, or one too late, writes none', async () => {
    const a = await node();
    const contents = Array.from({ length: 10 }, () => randomBytes(900));
    const shas = await write(a, contents);
    const publishing = a.blobs.publisher({ rowsToCommit: true });
    for (const sha of shas) publishing.add(sha);
    expect(() => publishing.places!()).toThrow();
    let finished = false;
    const finishing = publishing.finish(shas).then((placed) => {
      finished = true;
      return placed;
    });
    // Where each blob goes is known once the pack is cut, before it is in the bucket.
    const early = await publishing.places!();
    expect(finished).toBe(false);
    const places = await finishing;
    expect(places.size).toBe(10);
    expect(early).toEqual(places);
    // In the bucket, and no row yet: until the commit writes them, nothing points to the pack.
    expect(await rowsOf(shas)).toEqual([]);
    const packRows = publishing.rowsForCommit!()!;
    expect(new Set(packRows.rows.map((row) => row.key.match(/[0-9a-f]{64}/)![0]))).toEqual(new Set(shas));
    expect(packRows.expired()).toBe(false);
    const files = (): Map<string, FileEntry> =>
      new Map(shas.map((sha, i) => [`f${i}.txt`, { sha256: sha, size: contents[i]!.byteLength, type: 'text/plain', pack: places.get(sha)! }]));
    const site = (name: string) => ({
      site: name,
      create: { name, plan: 'free' as const, claimed: true },
      baseRevision: null,
      files: files(),
      kind: 'deploy' as const,
      createdBy: 'admin',
    });

    // Too late (past half the grace period): refused with the lock held, nothing written.
    await expect(a.commitRevision({ ...site('rows-late'), packRows: { ...packRows, expired: () => true } })).rejects.toMatchObject({
      code: 'BUCKET_UNAVAILABLE',
    });
    expect(a.getSite('rows-late')).toBeUndefined();
    expect(await rowsOf(shas)).toEqual([]);

    const committed = await a.commitRevision({ ...site('rows-in-commit'), packRows });
    if (!committed.ok) throw new Error(committed.reason);
    const rows = await rowsOf(shas);
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(places.get(row.key.match(/[0-9a-f]{64}/)![0])).toEqual({ key: row.pack, offset: Number(row.byte_offset) });
    publishing.rowsCommitted!();
    await publishing.afterAnswer();

    // A commit that writes nothing (the name is taken) writes no row either.
    await sql('DELETE FROM plinth_packed_objects WHERE key = ANY($1::text[])', [rows.map((row) => row.key)]);
    const taken = await a.commitRevision({ ...site('rows-in-commit'), packRows });
    expect(taken).toMatchObject({ ok: false, reason: 'name_taken' });
    expect(await rowsOf(shas)).toEqual([]);
  });

  it('writes its own pack rows without rowsToCommit, and for packs cut after finish', async () => {
    const a = await node();
    const shas = await write(
      a,
      Array.from({ length: 4 }, () => randomBytes(800)),
    );
    const publishing = a.blobs.publisher();
    for (const sha of shas) publishing.add(sha);
    await publishing.finish(shas);
    expect(publishing.rowsForCommit!()).toBeUndefined();
    expect(await rowsOf(shas)).toHaveLength(4);
    await publishing.afterAnswer();
  });

  it('sends the last pack once told every blob was announced, before finish', async () => {
    const a = await node();
    // Fewer than an early pack takes: before, they waited for `finish`.
    const shas = await write(
      a,
      Array.from({ length: 10 }, () => randomBytes(700)),
    );
    const publishing = a.blobs.publisher();
    for (const sha of shas) publishing.add(sha);
    publishing.drain();
    // Up and recorded with no `finish` yet, in one pack (the first blob alone was asked at once, and packed with the rest).
    expect(await waitUntil(async () => (await rowsOf(shas)).length === 10, 5000)).toBe(true);
    expect(new Set((await rowsOf(shas)).map((row) => row.pack)).size).toBe(1);
    const mark = await s3.mark();
    const packed = await publishing.finish(shas);
    // `finish` had nothing left to send, and says where each blob is.
    expect((await s3.sentSince(mark)).filter(isObjectPut)).toEqual([]);
    expect(packed.size).toBe(10);
    await publishing.afterAnswer();
  });

  it('asks the database about announced blobs 32 at a time, not as each arrives, in one statement for both tables', async () => {
    await node();
    // The store as a node opens it, on the real ledger, counting its questions.
    const pool = new pgClient.Pool({ connectionString: pg.url, max: 2 });
    const ledger = createBucketLedger(async (fn) => {
      const client = await pool.connect();
      try {
        return await fn(client);
      } finally {
        client.release();
      }
    });
    // One statement answers both: uploaded alone lately, and packed.
    const [alone, packed, neither] = ['a1', 'b2', 'c3'].map((tag) => `blobs/${tag}/${tag.repeat(32)}`) as [string, string, string];
    await ledger.note([{ key: alone, size: 10, touchedMs: 1000 }]);
    await ledger.packs.record([{ key: packed, pack: 'packs/00000000-0000-4000-8000-000000000002', offset: 7, size: 20, touchedMs: 2000 }]);
    const placed = await ledger.findPlaced([alone, packed, neither]);
    expect(placed.uploaded).toEqual(new Map([[alone, { size: 10, touchedMs: 1000 }]]));
    expect(placed.packed).toEqual(new Map([[packed, { pack: 'packs/00000000-0000-4000-8000-000000000002', offset: 7, size: 20, touchedMs: 2000 }]]));

    const questions: number[] = [];
    const counted: BucketLedger = { ...ledger, findPlaced: (keys) => (questions.push(keys.length), ledger.findPlaced(keys)) };
    const blobs = createBucketBlobStore({
      dir: tempDir('plinth-packs-asked-'),
      now: Date.now,
      bucket: s3.options({ graceMs: HOUR, packMaxBytes: PACK_MAX }),
      ledger: counted,
    });
    try {
      const shas = await Promise.all(Array.from({ length: 70 }, async () => (await blobs.write(randomBytes(900))).sha256));
      const publishing = blobs.publisher();
      for (const sha of shas) {
        publishing.add(sha);
        // As an unpack's announcements arrive: apart, each a turn of the event loop.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await publishing.finish(shas);
      // The first at once (a deploy of one file), then 32 or more at a time (more when some came in
      // while the question before was out): [1, 32, 32] here, against a question for every blob or
      // two before. What `finish` found waiting is new content too (nothing asked about was in the
      // bucket): it goes up unasked.
      expect(questions[0]).toBe(1);
      expect(questions.length).toBeLessThanOrEqual(3);
      expect(questions.slice(1).every((n) => n >= 32)).toBe(true);
      expect(questions.reduce((sum, n) => sum + n, 0)).toBeLessThan(70);
      expect(await rowsOf(shas)).toHaveLength(70);
    } finally {
      await pool.end();
    }
  });

  it('sends the last burst of new content unasked; one that met blobs in the bucket before is asked about first', async () => {
    await node();
    const { ledger, questions, answered, hold, end } = heldLedger();
    const blobs = storeAsking(ledger, 'plinth-packs-unasked-');
    try {
      // New content: the first burst is asked about (nothing found), the last goes up at once.
      const shas = await Promise.all(Array.from({ length: 40 }, async () => (await blobs.write(randomBytes(900))).sha256));
      const publishing = blobs.publisher();
      for (const sha of shas.slice(0, 32)) publishing.add(sha);
      expect(await waitUntil(async () => (await rowsOf(shas.slice(0, 32))).length === 32, 5000)).toBe(true);
      const release = hold();
      const mark = await s3.mark();
      for (const sha of shas.slice(32)) publishing.add(sha);
      publishing.drain();
      expect(await waitUntil(async () => (await s3.sentSince(mark)).some(isObjectPut), 5000)).toBe(true);
      expect((await publishing.finish(shas)).size).toBe(40);
      release();
      await publishing.afterAnswer();
      expect(questions).toEqual([32]);
      const rows = await rowsOf(shas.slice(32));
      expect(rows).toHaveLength(8);
      expect(new Set(rows.map((row) => row.pack)).size).toBe(1);

      // A redeploy from another node: its first burst finds its blobs in the bucket, so its last
      // one is asked about before anything of it is sent.
      const fresh = await Promise.all(Array.from({ length: 8 }, async () => (await blobs.write(randomBytes(900))).sha256));
      const other = storeAsking(ledger, 'plinth-packs-unasked-other-');
      const redeploy = other.publisher();
      for (const sha of shas.slice(0, 32)) redeploy.add(sha, undefined, undefined, 900);
      expect(await waitUntil(() => answered.length === 2, 5000)).toBe(true);
      const releaseAgain = hold();
      const before = await s3.mark();
      for (const sha of fresh) redeploy.add(sha, new Uint8Array(readFileSync(blobs.pathOf(sha))));
      redeploy.drain();
      expect(await waitUntil(() => questions.length === 3, 5000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await s3.sentSince(before)).filter(isObjectPut)).toEqual([]);
      releaseAgain();
      const placed = await redeploy.finish([...shas.slice(0, 32), ...fresh]);
      expect(questions).toEqual([32, 32, 8]);
      // The known blobs keep their places; the new ones went up in a pack of their own.
      for (const row of await rowsOf(shas.slice(0, 32)))
        expect(placed.get(row.key.match(/[0-9a-f]{64}/)![0])).toEqual({ key: row.pack, offset: Number(row.byte_offset) });
      expect(await rowsOf(fresh)).toHaveLength(8);
      await redeploy.afterAnswer();
    } finally {
      await end();
    }
  });

  it('a blob of an unasked last burst that the bucket held already: its row names the fresh copy, and the old place still reads', async () => {
    const a = await node();
    const contents = [randomBytes(1000), randomBytes(1000)];
    const [known, other] = (await write(a, contents)) as [string, string];
    const first = a.blobs.publisher();
    for (const sha of [known, other]) first.add(sha);
    const oldPlace = (await first.finish([known, other])).get(known)!;
    await first.afterAnswer();

    const { ledger, end } = heldLedger();
    const blobs = storeAsking(ledger, 'plinth-packs-unasked-known-');
    try {
      const shas = await Promise.all(Array.from({ length: 37 }, async () => (await blobs.write(randomBytes(900))).sha256));
      await blobs.write(contents[0]!);
      const publishing = blobs.publisher({ rowsToCommit: true });
      for (const sha of shas.slice(0, 32)) publishing.add(sha);
      expect(await waitUntil(async () => (await rowsOf(shas.slice(0, 32))).length === 0 && publishing.rowsForCommit!() !== undefined, 5000)).toBe(true);
      for (const sha of [...shas.slice(32), known]) publishing.add(sha);
      publishing.drain();
      const places = await publishing.finish([...shas, known]);
      const freshPlace = places.get(known)!;
      expect(freshPlace.key).not.toBe(oldPlace.key);
      expect(publishing.rowsForCommit!()!.rows.find((row) => row.key.includes(known))).toMatchObject({ pack: freshPlace.key, offset: freshPlace.offset });
      // Both copies read back, checked against the blob's name, from a node that has neither.
      const reader = await node();
      const size = contents[0]!.byteLength;
      await reader.blobs.fetch(known, undefined, { ...oldPlace, size });
      expect(readFileSync(reader.blobs.pathOf(known)).equals(contents[0]!)).toBe(true);
      const again = await node();
      await again.blobs.fetch(known, undefined, { ...freshPlace, size });
      expect(readFileSync(again.blobs.pathOf(known)).equals(contents[0]!)).toBe(true);
    } finally {
      await end();
    }
  });

  it('puts a blob larger than the bound alone, as without packing', async () => {
    const a = await node();
    const [sha] = await write(a, [randomBytes(PACK_MAX + 1)]);
    const from = await s3.mark();
    await a.blobs.publish([sha!]);
    const puts = (await s3.sentSince(from)).filter(isObjectPut);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.url).toContain(sha);
    expect(await rowsOf([sha!])).toEqual([]);
  });

  it('with packing off (0), puts each blob alone and reads packed blobs all the same', async () => {
    const packed = [randomBytes(1500), randomBytes(1600)];
    const a = await node();
    const packedShas = await write(a, packed);
    await a.blobs.publish(packedShas);

    const off = await node(0);
    const shas = await write(off, [randomBytes(1200), randomBytes(1300)]);
    const from = await s3.mark();
    await off.blobs.publish(shas);
    const puts = (await s3.sentSince(from)).filter(isObjectPut);
    expect(puts.map((r) => shas.findIndex((sha) => r.url.includes(sha))).sort()).toEqual([0, 1]);
    expect(await rowsOf(shas)).toEqual([]);

    await off.blobs.fetch(packedShas[0]!);
    expect(readFileSync(off.blobs.pathOf(packedShas[0]!)).equals(packed[0]!)).toBe(true);
  });

  it('refuses a range of a pack that does not hash to its name, and caches nothing', async () => {
    const contents = [randomBytes(2000), randomBytes(2000)];
    const a = await node();
    const shas = await write(a, contents);
    await a.blobs.publish(shas);
    const [row] = await rowsOf([shas[1]!]);
    const pack = await s3.get(row!.pack);
    const at = Number(row!.byte_offset) + 10;
    pack[at] = pack[at]! ^ 0xff;
    await s3.put(row!.pack, pack);

    const b = await node();
    await expect(b.blobs.fetch(shas[1]!)).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    expect(b.blobs.isLocal(shas[1]!)).toBe(false);
    // The rest of the pack is intact.
    await b.blobs.fetch(shas[0]!);
    expect(readFileSync(b.blobs.pathOf(shas[0]!)).equals(contents[0]!)).toBe(true);
  });

  it('lets the cache evict a packed blob: the bucket holds it', async () => {
    const dir = tempDir('plinth-packs-trim-');
    const store = await connectStore({
      dir,
      databaseUrl: pg.url,
      bootstrap: true,
      bucket: s3.options({ graceMs: HOUR, packMaxBytes: PACK_MAX, cacheBytes: 1, minIdleMs: 0 }),
    });
    open.push(store);
    const contents = [randomBytes(5000), randomBytes(5100)];
    const shas = await write(store, contents);
    await store.blobs.publish(shas);
    expect(await rowsOf(shas)).toHaveLength(2);
    const trimmed = await store.blobs.trimCache();
    expect(trimmed.files).toBeGreaterThanOrEqual(1);
    expect(store.blobs.isLocal(shas[0]!)).toBe(false);
    await store.blobs.fetch(shas[0]!);
    expect(readFileSync(store.blobs.pathOf(shas[0]!)).equals(contents[0]!)).toBe(true);
  });
});

describe('bucket garbage collection of packs', () => {
  it('keeps referenced and young rows, deletes unreferenced old ones, then the packs no row points to', async () => {
    const a = await node();
    const kept = await write(a, [randomBytes(1800)]);
    const dropped = await write(a, [randomBytes(1900), randomBytes(2000)]);
    await a.blobs.publish([...kept, ...dropped]);
    const young = await write(a, [randomBytes(2100), randomBytes(2200)]);
    await a.blobs.publish(young);
    const [oldPack] = new Set((await rowsOf([...kept, ...dropped])).map((row) => row.pack));
    const [youngPack] = new Set((await rowsOf(young)).map((row) => row.pack));
    // The first pack and its rows two hours old; the second deploy's just made.
    await sql('UPDATE plinth_packed_objects SET touched_ms = touched_ms - $1 WHERE pack = $2', [2 * HOUR, oldPack]);
    const later = () => Date.now() + HOUR / 2;

    // Half an hour on: the first pack's rows are old, and the bucket's packs not yet.
    await collectBucketGarbage(a, { graceMs: HOUR, now: later, referenced: () => kept });
    expect((await rowsOf(dropped)).length).toBe(0);
    expect((await rowsOf(kept)).length).toBe(1);
    expect((await rowsOf(young)).length).toBe(2);
    // A kept row still points at the first pack: it stays.
    await expect(s3.get(oldPack!)).resolves.toBeInstanceOf(Buffer);

    // Once the kept blob is no longer referenced either, both its row and its pack go.
    const deleted = await collectBucketGarbage(a, { graceMs: HOUR, now: () => Date.now() + 2 * HOUR, referenced: () => young });
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await rowsOf(kept)).toEqual([]);
    await expect(s3.get(oldPack!)).rejects.toBeDefined();
    // The young deploy's blob is referenced: its row and its pack stay, old as they are.
    await expect(s3.get(youngPack!)).resolves.toBeInstanceOf(Buffer);
  });

  it('deletes a pack no row ever pointed to (its rows were never written) once older than the grace period', async () => {
    const a = await node();
    await s3.put('packs/00000000-0000-4000-8000-000000000000', randomBytes(100));
    await collectBucketGarbage(a, { graceMs: HOUR, now: () => Date.now() + HOUR / 2, referenced: () => [] });
    await expect(s3.get('packs/00000000-0000-4000-8000-000000000000')).resolves.toBeInstanceOf(Buffer);
    await collectBucketGarbage(a, { graceMs: HOUR, now: () => Date.now() + 2 * HOUR, referenced: () => [] });
    await expect(s3.get('packs/00000000-0000-4000-8000-000000000000')).rejects.toBeDefined();
  });

  it('a renewal and a delete of the same row: whichever locks it first wins, and the other sees it', async () => {
    const pool = new pgClient.Pool({ connectionString: pg.url, max: 4 });
    try {
      const ledger = createPackLedger(async (fn) => {
        const client = await pool.connect();
        try {
          return await fn(client);
        } finally {
          client.release();
        }
      });
      const old = Date.now() - 2 * HOUR;
      const key = `blobs/aa/bb/aabb${'0'.repeat(60)}`;
      await ledger.record([{ key, pack: 'packs/00000000-0000-4000-8000-000000000001', offset: 0, size: 1, touchedMs: old }]);

      // A renewal holds the row: the delete waits for it, then finds the row young and leaves it.
      const renewing = await pool.connect();
      await renewing.query('BEGIN');
      await renewing.query('UPDATE plinth_packed_objects SET touched_ms = $2 WHERE key = $1', [key, Date.now()]);
      const deleting = ledger.deleteOlderThan([key], Date.now() - HOUR);
      expect(await waitUntil(blockedOnLock, 5000)).toBe(true);
      await renewing.query('COMMIT');
      renewing.release();
      expect(await deleting).toBe(0);
      expect((await ledger.find([key])).has(key)).toBe(true);

      // A delete holds the row: the renewal waits for it, then finds nothing and says so.
      await sql('UPDATE plinth_packed_objects SET touched_ms = $2 WHERE key = $1', [key, old]);
      const collecting = await pool.connect();
      await collecting.query('BEGIN');
      await collecting.query('DELETE FROM plinth_packed_objects WHERE key = $1 AND touched_ms < $2', [key, Date.now() - HOUR]);
      const renewal = ledger.renew([key], Date.now());
      expect(await waitUntil(blockedOnLock, 5000)).toBe(true);
      await collecting.query('COMMIT');
      collecting.release();
      expect(await renewal).toEqual(new Set());
      expect((await ledger.find([key])).has(key)).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
