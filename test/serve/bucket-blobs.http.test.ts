import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken } from '../api/api-helpers.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { deployTo } from '../helpers/deploy-client.js';
import { callApi, request, type TestResponse } from '../helpers/http.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The real server with its blobs in a bucket (s3rver standing in for S3): a deploy goes to the
 * bucket before it goes live; a node that lost its local copies serves the same bytes from the
 * bucket; with the bucket gone, what the node has cached is still served, the rest is `503` with
 * `Retry-After`, and deploys are refused with SPEC's error body until it is back.
 */

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

let s3: TestS3;
let server: TestServer;
let token: string;
let site: string;
let revision: string;

const files = {
  'index.html': `<!doctype html><html><head><title>Bucket</title></head><body><h1>From the bucket</h1>${'<p>text '.repeat(300)}</body></html>`,
  'style.css': `body { color: #123456; }\n${'.rule-x { margin: 0 auto; padding: 1px 2px 3px 4px; }\n'.repeat(200)}`,
  'photo.bin': randomBytes(40 * 1024),
  // Past the stream threshold below: streamed from the cached file, never held in memory.
  'big.bin': randomBytes(3 * 1024 * 1024 + 11),
};

const visit = (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<TestResponse> =>
  request({ port: server.port, host: `${site}.sites.localhost`, path, headers, method });

const deploy = (content: Record<string, string | Buffer>, base?: string) =>
  deployTo(server.port, { body: tgzBytes(Object.entries(content)), token, ...(base ? { site, base } : {}) });

/** Removes every blob file of this node (the local cache), leaving the folders. */
function emptyLocalCache(dir = join(server.dataDir, 'blobs')): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name)) emptyLocalCache(join(dir, entry.name));
    else if (entry.isFile() && /^[0-9a-f]{64}/.test(entry.name)) rmSync(join(dir, entry.name));
  }
}

const localPath = (bytes: string | Buffer, encoding?: 'br' | 'gzip'): string => server.store.blobs.pathOf(sha256(Buffer.from(bytes)), encoding);

async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  let value: T | undefined;
  if (!(await waitUntil(async () => (value = await check()) !== undefined, ms, 25))) throw new Error(`timed out waiting for ${what}`);
  return value!;
}

beforeAll(async () => {
  s3 = await startS3('plinth-serve');
  server = await startTestServer({
    ...s3.env,
    // No memory cache: every request reads this node's disk, so the disk cache is what is tested.
    PLINTH_CACHE_MB: '0',
    PLINTH_STREAM_THRESHOLD_KB: '64',
    PLINTH_BLOB_CACHE_MB: '1',
  });
  ({ token } = await accountWithToken(server.store, 'free'));
  const deployed = await deploy(files);
  expect(deployed.status, deployed.text).toBe(201);
  site = deployed.json.site.name;
  revision = deployed.json.revision.id;
  // Variants are made after the deploy answers, and recorded once they are in the bucket.
  await until(async () => ((await visit('/style.css', { 'accept-encoding': 'br' })).headers['content-encoding'] === 'br' ? true : undefined), 'variants');
});

afterAll(async () => {
  await server?.close({ graceMs: 0 });
  await s3?.stop();
});

describe('blobs in a bucket', () => {
  it('puts every blob of a deploy, and the variants it serves, in the bucket', async () => {
    const keys = (await s3.list()).map((object) => object.key);
    // The bucket's keys are nested (`blobs/<aa>/<bb>/<sha256>`, bucket.ts), whatever the local layout.
    const bucketKey = (hash: string): string => `blobs/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}`;
    for (const content of Object.values(files)) expect(keys).toContain(bucketKey(sha256(Buffer.from(content))));
    const css = sha256(Buffer.from(files['style.css']));
    expect(keys.some((key) => key.endsWith(`${css}.br`))).toBe(true);
    expect(sha256(await s3.get(keys.find((key) => key.endsWith(sha256(files['big.bin'])))!))).toBe(sha256(files['big.bin']));
  });

  it('serves the same bytes from the bucket once the local cache is gone', async () => {
    const before = {
      page: (await visit('/')).text,
      photo: (await visit('/photo.bin')).body,
      big: (await visit('/big.bin')).body,
    };
    expect(before.page).toContain('From the bucket');
    expect(sha256(before.big)).toBe(sha256(files['big.bin']));

    emptyLocalCache();
    expect(existsSync(localPath(files['big.bin']))).toBe(false);

    const page = await visit('/');
    expect(page.status).toBe(200);
    // The badged page is built again from the fetched blob.
    expect(page.text).toBe(before.page);
    const photo = await visit('/photo.bin');
    expect(photo.status).toBe(200);
    expect(photo.body).toEqual(files['photo.bin']);
    const big = await visit('/big.bin');
    expect(big.status).toBe(200);
    expect(sha256(big.body)).toBe(sha256(files['big.bin']));
    const range = await visit('/big.bin', { range: 'bytes=100-199' });
    expect(range.status).toBe(206);
    expect(range.body).toEqual(files['big.bin'].subarray(100, 200));
    const css = await visit('/style.css', { 'accept-encoding': 'br' });
    expect(css.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(css.body).toString()).toBe(files['style.css']);
    expect(existsSync(localPath(files['big.bin']))).toBe(true);
    expect(existsSync(localPath(files['style.css'], 'br'))).toBe(true);

    // The API's read-back of a file fetches it too.
    emptyLocalCache();
    const read = await callApi(server.port, { path: `/v1/sites/${site}/files/style.css`, token });
    expect(read.status).toBe(200);
    expect(read.text).toBe(files['style.css']);
  });

  it('answers many visitors of a file that is not cached yet with one download', async () => {
    emptyLocalCache();
    const from = s3.requests().length;
    const answers = await Promise.all(Array.from({ length: 8 }, () => visit('/photo.bin')));
    for (const answer of answers) expect(answer.body).toEqual(files['photo.bin']);
    const gets = s3
      .requests()
      .slice(from)
      .filter((r) => r.method === 'GET' && r.url.includes(sha256(files['photo.bin'])));
    expect(gets).toHaveLength(1);
  });

  it('keeps streaming a file that the cache evicts meanwhile', async () => {
    await visit('/big.bin');
    const path = localPath(files['big.bin']);
    const body = new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/big.bin', headers: { host: `${site}.sites.localhost` }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.pause();
        // Evicted (aged past the idle time, over the 1 MB budget) while the answer is under way.
        res.once('readable', () => {
          const old = Date.now() / 1000 - 3600;
          utimesSync(path, old, old);
          server.store.blobs.trimCache().then((evicted) => {
            expect(evicted.files).toBeGreaterThan(0);
            expect(existsSync(path)).toBe(false);
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.resume();
          }, reject);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(sha256(await body)).toBe(sha256(files['big.bin']));
  });

  it('serves a signed-in visitor of a private site a file this node had to fetch first', async () => {
    const builder = await accountWithToken(server.store, 'builder');
    const made = await deployTo(server.port, {
      body: tgzBytes(Object.entries({ 'index.html': '<h1>private page</h1>', 'photo.bin': files['photo.bin'] })),
      token: builder.token,
    });
    expect(made.status, made.text).toBe(201);
    const name = made.json.site.name as string;
    const set = await callApi(server.port, {
      method: 'PUT',
      path: `/v1/sites/${name}/access`,
      token: builder.token,
      body: { mode: 'password', password: 'correct horse battery' },
    });
    expect(set.status, set.text).toBe(200);
    const host = `${name}.sites.localhost`;
    const signIn = await request({
      port: server.port,
      host,
      path: '/.plinth/login',
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: `http://${host}` },
      body: 'password=correct+horse+battery&return=%2F',
    });
    expect(signIn.status).toBe(303);
    const cookie = ([] as string[]).concat(signIn.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    emptyLocalCache();
    // The download happens after the gate let the visitor in: the answer must not ask again.
    const photo = await request({ port: server.port, host, path: '/photo.bin', headers: { cookie } });
    expect(photo.status).toBe(200);
    expect(sha256(photo.body)).toBe(sha256(files['photo.bin']));
    expect(photo.headers['cache-control']).toBe('private, no-store');
    const stranger = await request({ port: server.port, host, path: '/photo.bin' });
    expect(stranger.status).toBe(401);
  });

  it('with the bucket down serves what is cached, answers the rest 503, refuses deploys, and recovers', async () => {
    emptyLocalCache();
    // Cached on this node: the page and the photo.
    expect((await visit('/')).status).toBe(200);
    expect((await visit('/photo.bin')).status).toBe(200);

    await s3.pause();
    try {
      const page = await visit('/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('From the bucket');
      expect((await visit('/photo.bin')).body).toEqual(files['photo.bin']);

      const missing = await visit('/big.bin');
      expect(missing.status).toBe(503);
      expect(missing.headers['retry-after']).toMatch(/^\d+$/);
      expect(missing.headers['content-type']).toMatch(/^text\/html/);
      expect(missing.headers['cache-control']).toBe('no-store');
      expect(missing.text).not.toContain(files['big.bin'].subarray(0, 16).toString('hex'));
      // HEAD needs no bytes: the records answer it.
      const head = await visit('/big.bin', {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(files['big.bin'].byteLength));

      const read = await callApi(server.port, { path: `/v1/sites/${site}/files/big.bin`, token });
      expect(read.status).toBe(503);
      expect(read.json.error).toMatchObject({ code: 'unavailable', details: { reason: 'storage_unreachable' } });

      // The deploy's blobs are written on this node, but cannot reach the bucket: not published.
      const refused = await deploy({ ...files, 'index.html': '<h1>second</h1>' }, revision);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.json).toEqual({
        error: { code: 'unavailable', message: expect.any(String), details: { reason: 'storage_unreachable' } },
        agent_message: expect.stringContaining('Retry'),
      });
      // Nothing was published.
      expect((await visit('/')).text).toContain('From the bucket');
      expect(server.store.getSite(site)!.liveRevision).toBe(revision);
    } finally {
      await s3.resume();
    }

    const back = await visit('/big.bin');
    expect(back.status).toBe(200);
    expect(sha256(back.body)).toBe(sha256(files['big.bin']));
    const second = await deploy({ ...files, 'index.html': '<h1>second</h1>' }, revision);
    expect(second.status, second.text).toBe(201);
    expect((await visit('/')).text).toContain('second');
  });
});
