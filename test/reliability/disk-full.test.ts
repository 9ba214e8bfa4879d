import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { accountWithToken } from '../api/api-helpers.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { deployTo, jsonDeployBody, type DeployAnswer } from '../helpers/deploy-client.js';
import { freePort } from '../helpers/edge.js';
import { request } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { fillDisk, freeBytes, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { recordFigures } from './figures.js';

// The data directory sits on a 48 MB tmpfs of its own, filled for real. A deploy that cannot be
// stored must get 503 `unavailable` with Retry-After, change nothing, and leave serving alone;
// once space is back, deploys work again. Each storage step is made to fail in turn: the upload
// spool, the blobs an ingest thread writes, and the LMDB commit.
const mount = mountTmpfs(48 * 1024 * 1024);
const tmpfs = 'dir' in mount ? mount : undefined;
if (!tmpfs) console.warn(`disk-full tests skipped: ${(mount as { unavailable: string }).unavailable}`);

describe.skipIf(!tmpfs)('a full disk', () => {
  const fs = tmpfs as Tmpfs;
  const dataDir = join(fs.dir, 'data');
  let server: TestServer;
  let token: string;
  let site: { name: string; revision: string; page: string };
  let filler: string | undefined;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    // Bodies are spooled, not received into memory, so that the spool stage can fail.
    server = await startTestServer({ PLINTH_DATA_DIR: dataDir, PLINTH_SITES_LIMIT_BUILDER: '1000', PLINTH_MEMORY_BODY_MB: '0' });
    token = (await accountWithToken(server.store, 'builder')).token;
    const page = '<h1>already published</h1>';
    const first = await deployTo(server.port, { body: jsonDeployBody([['index.html', page]]), contentType: 'application/json', token });
    expect(first.status).toBe(201);
    site = { name: first.json.site.name, revision: first.json.revision.id, page };
  });

  afterAll(async () => {
    try {
      release();
      await server?.close();
    } finally {
      fs.unmount();
      recordFigures('disk-full', figures);
    }
  });

  const fill = (leaveBytes: number): void => {
    if (filler) rmSync(filler);
    filler = fillDisk(fs.dir, leaveBytes);
  };
  function release(): void {
    if (filler) rmSync(filler);
    filler = undefined;
  }

  /** The site is still served as before, and nothing new was published anywhere. */
  async function expectNothingChanged(sitesBefore: number): Promise<void> {
    const page = await request({ port: server.port, host: `${site.name}.sites.localhost` });
    expect(page.status).toBe(200);
    expect(page.text).toBe(site.page);
    expect(server.store.getSite(site.name)?.liveRevision).toBe(site.revision);
    expect(server.store.listSiteIds()).toHaveLength(sitesBefore);
    expect(readdirSync(join(dataDir, 'tmp', 'uploads'))).toEqual([]);
  }

  function expectStorageFull(answer: DeployAnswer): void {
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('60');
    expect(answer.json).toEqual({
      error: { code: 'unavailable', message: expect.stringContaining('out of storage space'), details: { reason: 'storage_full' } },
      agent_message: expect.stringContaining('Nothing was published'),
    });
  }

  it('refuses a deploy whose upload cannot be spooled', async () => {
    const sites = server.store.listSiteIds().length;
    fill(0);
    figures.freeWhenFullBytes = freeBytes(fs.dir);
    const body = jsonDeployBody([
      ['index.html', '<h1>new</h1>'],
      ['data.bin', Buffer.alloc(300_000, 7)],
    ]);
    const answer = await deployTo(server.port, { body, contentType: 'application/json', token });
    expectStorageFull(answer);
    await expectNothingChanged(sites);
    figures.spoolStage = { status: answer.status, retryAfter: answer.headers['retry-after'] };
  });

  it('refuses a deploy whose blobs do not fit, though its upload did', async () => {
    const sites = server.store.listSiteIds().length;
    // 3 MB of text gzips to a few KB: the upload fits in what is left, the files do not.
    const archive = tgzBytes([
      ['index.html', '<h1>big</h1>'],
      ['big.txt', 'all work and no play\n'.repeat(150_000)],
    ]);
    fill(512 * 1024);
    const answer = await deployTo(server.port, { body: archive, token });
    expectStorageFull(answer);
    await expectNothingChanged(sites);
    figures.blobStage = { archiveBytes: archive.byteLength, unpackedBytes: 3_150_000, freeBytes: 512 * 1024, status: answer.status };
  });

  it('refuses a deploy whose index rows do not fit in LMDB, and LMDB stays intact', async () => {
    const sites = server.store.listSiteIds().length;
    // 2,000 paths of about 1 KB share one tiny blob: the archive is small, the index rows are not.
    const files: Array<[string, string]> = [['index.html', '<h1>many</h1>']];
    for (let i = 0; i < 1999; i++) files.push([`${'a'.repeat(200)}/${'b'.repeat(200)}/${'c'.repeat(200)}/${'d'.repeat(200)}/${i}.txt`, 'same']);
    const archive = tgzBytes(files);
    fill(1024 * 1024);
    const answer = await deployTo(server.port, { body: archive, token });
    expectStorageFull(answer);
    await expectNothingChanged(sites);
    figures.lmdbStage = { archiveBytes: archive.byteLength, indexRows: files.length, freeBytes: 1024 * 1024, status: answer.status };

    release();
    const again = await deployTo(server.port, { body: archive, token });
    expect(again.status).toBe(201);
    expect(again.json.revision.files).toBe(2000);
    const deep = await request({ port: server.port, host: `${again.json.site.name}.sites.localhost`, path: `/${files[1]![0]}` });
    expect(deep.text).toBe('same');
  });

  it('publishes again once space is freed, and every committed row points at a blob', async () => {
    fill(0);
    const body = jsonDeployBody([['index.html', '<h1>after the disk was full</h1>']]);
    expectStorageFull(await deployTo(server.port, { body, contentType: 'application/json', token }));
    release();
    const started = performance.now();
    const answer = await deployTo(server.port, { body, contentType: 'application/json', token });
    figures.firstDeployAfterFreeingMs = Math.round(performance.now() - started);
    expect(answer.status).toBe(201);
    const page = await request({ port: server.port, host: `${answer.json.site.name}.sites.localhost` });
    expect(page.text).toContain('after the disk was full');

    // Read through the server's own store: a second store opened on the same directory in this
    // thread opens its tables in synchronous write transactions, which wait for LMDB's write lock,
    // while the server's store may hold it for a transaction (recording the new deploy's
    // compressed variants) whose callback must run on this same thread: each waits for the other.
    const check: Store = server.store;
    // A small deploy's new blob files are written just after its answer, its bytes kept in the
    // index until then (the blob journal): settling writes any still missing and syncs them.
    await check.settleBlobJournal(() => check.blobs.flush());
    let rows = 0;
    for (const id of check.listSiteIds()) {
      const live = check.getSiteById(id)!.liveRevision!;
      for (const file of check.listFiles(live)) {
        rows++;
        expect(existsSync(check.blobs.pathOf(file.sha256)), file.path).toBe(true);
      }
    }
    figures.rowsCheckedAfter = rows;
  });
});

describe('the LMDB map', () => {
  it('grows past its initial size as the index grows, and reopens intact', async () => {
    const { tempDir } = await import('../helpers/sites.js');
    const dir = tempDir('plinth-map-');
    const store = openStore({ dir });
    const entry = await store.blobs.putFile(Buffer.from('x'), 'text/plain', { compress: false });
    const files = new Map<string, typeof entry>();
    for (let i = 0; i < 20_000; i++) files.set(`${'p'.repeat(900)}/${i}`, entry);
    const result = await store.commitRevision({
      site: 'map-grows',
      create: { name: 'map-grows', plan: 'company', claimed: true },
      baseRevision: null,
      files,
      kind: 'deploy',
      createdBy: 'admin',
    });
    expect(result.ok).toBe(true);
    await store.close();
    const size = statSync(join(dir, 'meta', 'data.mdb')).size;
    // lmdb-js starts with a 128 KB map; 20,000 rows of ~1 KB need well over 100 times that.
    expect(size).toBeGreaterThan(16 * 1024 * 1024);
    const again = openStore({ dir });
    try {
      expect(again.listFiles(again.getSite('map-grows')!.liveRevision!)).toHaveLength(20_000);
    } finally {
      await again.close();
    }
    recordFigures('lmdb-map', { rows: 20_000, dataMdbBytes: size });
  });
});

// The health check operators used (`GET /` on the docs host) said 200 however full the disk was.
// The operator listener's /readyz says what is wrong: here two nodes share a full tmpfs, one with
// a free-space bound (the disk is full) and one without (a write fails).
const readyMount = mountTmpfs(48 * 1024 * 1024);
const readyFs = 'dir' in readyMount ? readyMount : undefined;

describe.skipIf(!readyFs)('readiness on a full disk', () => {
  const fs = readyFs as Tmpfs;
  const nodes: Array<{ main: MainProcess; opsPort: number }> = [];
  let filler: string | undefined;

  beforeAll(async () => {
    for (const [name, minFree] of [
      ['bounded', '8'],
      ['unbounded', '0'],
    ] as const) {
      const opsPort = await freePort();
      const main = await startMain(mainEnv(join(fs.dir, name), { PLINTH_OPS_PORT: String(opsPort), PLINTH_READY_MIN_FREE_MB: minFree }), { timeoutMs: 60_000 });
      nodes.push({ main, opsPort });
    }
  }, 150_000);

  afterAll(async () => {
    try {
      if (filler) rmSync(filler);
      for (const node of nodes) await killMain(node.main, 'SIGKILL');
    } finally {
      fs.unmount();
    }
  });

  const readyz = async (opsPort: number) => {
    const res = await request({ port: opsPort, host: '127.0.0.1', path: '/readyz' });
    return { status: res.status, body: JSON.parse(res.text) as { ready: boolean; reason?: string; checks: Record<string, { ok: boolean }> } };
  };
  const until = async <T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await probe();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('answers /readyz 503 with the reason while the docs host goes on saying 200, and 200 again once space is back', async () => {
    for (const node of nodes) expect((await readyz(node.opsPort)).status).toBe(200);
    filler = fillDisk(fs.dir, 0);

    const [bounded, unbounded] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    const full = await until(
      () => readyz(bounded.opsPort),
      (answer) => answer.status === 503,
    );
    expect(full.status).toBe(503);
    expect(full.body.ready).toBe(false);
    expect(full.body.reason).toMatch(/the data directory's disk is full: \d+\.\d MB free, under the 8 MB of PLINTH_READY_MIN_FREE_MB/);
    expect(full.body.checks.disk!.ok).toBe(false);
    // Without a bound on free space, the write that fails tells it.
    const failing = await until(
      () => readyz(unbounded.opsPort),
      (answer) => answer.status === 503,
    );
    expect(failing.status).toBe(503);
    expect(failing.body.reason).toMatch(/the data directory takes no writes \(ENOSPC\)/);

    for (const node of nodes) {
      // The old check still says all is well; the process itself runs.
      expect((await request({ port: node.main.port, host: 'localhost', path: '/' })).status).toBe(200);
      expect((await request({ port: node.opsPort, host: '127.0.0.1', path: '/healthz' })).status).toBe(200);
    }

    rmSync(filler);
    filler = undefined;
    for (const node of nodes)
      expect(
        (
          await until(
            () => readyz(node.opsPort),
            (answer) => answer.status === 200,
          )
        ).status,
      ).toBe(200);
  }, 60_000);
});
