// A small deploy's blobs are made durable by its commit (PLINTH_DEPLOY_JOURNAL_KB): its answer
// comes before any sync of the blob files, which a settle writes out after it.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openStore, type FileEntry, type JournaledBlob } from '../../src/store/index.js';
import { tarGzWithTool, writeTree, type TreeFiles } from '../fixtures/archives.js';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';

const work = tempDir('plinth-deploy-journal-');
let counter = 0;
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function tgz(files: TreeFiles): Buffer {
  const dir = join(work, `tree-${++counter}`);
  mkdirSync(dir, { recursive: true });
  writeTree(dir, files);
  return readFileSync(tarGzWithTool(dir, join(work, `a-${counter}.tgz`)));
}

const page = '<!doctype html><h1>journaled</h1>\n' + '<p>text that compresses</p>\n'.repeat(200);
const image = randomBytes(20_000);
const site = (): Buffer => tgz({ 'index.html': page, 'img/photo.jpg': image });

async function deployTo(target: TestServer, body: Buffer) {
  const res = await request({ port: target.port, host: 'api.localhost', method: 'POST', path: '/v1/deploy', body });
  expect(res.status).toBe(201);
  return JSON.parse(res.text) as { site: { name: string }; revision: { id: string } };
}

// Files past 16 KB are streamed from their file (`sendfile`), not read into memory.
const server = useTestServer({ PLINTH_STREAM_THRESHOLD_KB: '16' });

describe('a deploy within PLINTH_DEPLOY_JOURNAL_KB', () => {
  it('is answered with its blobs carried by the commit, serves them, then writes them out and drops the rows', async () => {
    const { site: created } = await deployTo(server, site());
    // The rows go only after the deploy's compression and a sync of the filesystem, both after the
    // answer: several milliseconds of disk at least, against this read right after it.
    expect(server.store.journaledBlobs()).toBe(2);
    const served = await request({ port: server.port, host: `${created.name}.sites.localhost`, path: '/img/photo.jpg' });
    expect(served.status).toBe(200);
    expect(served.body.equals(image)).toBe(true);
    expect(await waitUntil(() => server.store.journaledBlobs() === 0, 10_000)).toBe(true);
    const files = server.store.listFiles(server.store.getSite(created.name)!.liveRevision!);
    for (const file of files) expect(sha256(readFileSync(server.store.blobs.pathOf(file.sha256)))).toBe(file.sha256);
    // Compressed after the answer as before.
    expect(files.find((file) => file.path === 'index.html')?.encodings?.br).toBeGreaterThan(0);
  });

  it('serves blobs whose files are not written yet from the journal: GET, a range, HEAD, a variant made on demand, a streamed file', async () => {
    // A commit as a small deploy's makes it, answered before the compressor writes the files.
    // Not a page: a free site's pages get its badge.
    const text = Buffer.from('p.journal { color: teal; }\n'.repeat(400));
    const page = Buffer.from('<!doctype html><title>early</title><p>a page with its badge</p>');
    const [ranged, streamed, headed, small] = [randomBytes(40_000), randomBytes(40_000), randomBytes(40_000), randomBytes(2_000)];
    const contents: Array<[string, Buffer, string]> = [
      ['style.css', text, 'text/css; charset=utf-8'],
      ['index.html', page, 'text/html; charset=utf-8'],
      ['ranged.bin', ranged!, 'application/octet-stream'],
      ['streamed.bin', streamed!, 'application/octet-stream'],
      ['headed.bin', headed!, 'application/octet-stream'],
      ['small.bin', small!, 'application/octet-stream'],
    ];
    const files = new Map<string, FileEntry>();
    const journal: JournaledBlob[] = [];
    for (const [path, bytes, type] of contents) {
      files.set(path, { sha256: sha256(bytes), size: bytes.byteLength, type });
      journal.push({ sha256: sha256(bytes), bytes });
    }
    const committed = await server.store.commitRevision({
      site: 'unwritten',
      create: { name: 'unwritten', plan: 'free', claimed: true },
      baseRevision: null,
      files,
      kind: 'deploy',
      createdBy: 'test',
      journal,
    });
    expect(committed.ok).toBe(true);
    for (const [, bytes] of contents) expect(existsSync(server.store.blobs.pathOf(sha256(bytes)))).toBe(false);
    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      request({ port: server.port, host: 'unwritten.sites.localhost', path, headers, method });

    const head = await get('/headed.bin', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('40000');
    const gzipped = await get('/style.css', { 'accept-encoding': 'gzip' });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).equals(text)).toBe(true);
    const range = await get('/ranged.bin', { range: 'bytes=100-1099' });
    expect(range.status).toBe(206);
    expect(range.body.equals(ranged!.subarray(100, 1100))).toBe(true);
    const whole = await get('/streamed.bin');
    expect(whole.status).toBe(200);
    expect(whole.body.equals(streamed!)).toBe(true);
    const badged = await get('/');
    expect(badged.status).toBe(200);
    expect(badged.text).toContain('<p>a page with its badge</p>');
    const read = await get('/small.bin');
    expect(read.body.equals(small!)).toBe(true);
    // Each file a reader needed was written from its row; the rows stay until a settle syncs them.
    expect(server.store.journaledBlobs()).toBe(contents.length);
    expect(await server.store.settleBlobJournal(() => server.store.blobs.flush())).toBe(contents.length);
    for (const [, bytes] of contents) expect(readFileSync(server.store.blobs.pathOf(sha256(bytes))).equals(bytes)).toBe(true);
  });

  it('starts again after a power cut with the blob files it took put back from the index', async () => {
    const dataDir = join(work, 'power-cut');
    // A deploy's commit, as the server makes it, answered before its files were written.
    const store = openStore({ dir: dataDir });
    const sha = sha256(image);
    const committed = await store.commitRevision({
      site: 'power-cut',
      create: { name: 'power-cut', plan: 'free', claimed: true },
      baseRevision: null,
      files: new Map([['index.html', { sha256: sha, size: image.byteLength, type: 'image/jpeg' }]]),
      kind: 'deploy',
      createdBy: 'test',
      journal: [{ sha256: sha, bytes: image }],
    });
    expect(committed.ok).toBe(true);
    await store.close();
    rmSync(store.blobs.pathOf(sha), { force: true });

    const again = await startTestServer({ PLINTH_DATA_DIR: dataDir });
    try {
      // Written out at the start: nothing left to settle.
      expect(again.store.journaledBlobs()).toBe(0);
      const res = await request({ port: again.port, host: 'power-cut.sites.localhost', path: '/' });
      expect(res.status).toBe(200);
      expect(res.body.equals(image)).toBe(true);
    } finally {
      await again.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('carries nothing with PLINTH_DEPLOY_JOURNAL_KB=0, or past the bound: the worker syncs the files first', async () => {
    for (const kb of ['0', '8']) {
      const other = await startTestServer({ PLINTH_DEPLOY_JOURNAL_KB: kb });
      try {
        await deployTo(other, site());
        expect(other.store.journaledBlobs()).toBe(0);
      } finally {
        await other.close();
      }
    }
  });
});
