import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import type { RevisionExtras } from '../../src/rules/index.js';
import { ServiceError } from '../../src/errors.js';
import { createIngestPool, type IngestPool } from '../../src/ingest/index.js';
import { createLogger } from '../../src/log.js';
import type { OperationsDeps } from '../../src/sites/deps.js';
import { analyzeSite } from '../../src/sites/deploy-analyze.js';
import { assembleFiles, contentsToRejudge } from '../../src/sites/deploy-assemble.js';
import type { Decision } from '../../src/sites/deploy-decision.js';
import { publishRevision } from '../../src/sites/deploy-publish.js';
import { assembleManifest, remainingContents } from '../../src/sites/manifest.js';
import { openStore, type FileEntry, type ManifestPart, type ManifestRecord, type Store } from '../../src/store/index.js';
import { builtWorker } from '../fixtures/ingest-pool.js';
import { publishSite, storeFiles, tempDir } from '../helpers/sites.js';

/**
 * The inner steps of a deploy, each called as `beginDeploy` calls it, over a real store and a real
 * ingest pool but no HTTP: assemble the file set, analyse it, publish it.
 */

const log = createLogger({ level: 'silent' });
let dir: string;
let config: Readonly<Config>;
let store: Store;
let ingest: IngestPool;
let deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'now' | 'ingest'>;

beforeAll(() => {
  dir = tempDir('plinth-deploy-steps-');
  config = loadConfig({ PLINTH_DATA_DIR: dir });
  store = openStore({ dir });
  ingest = createIngestPool({ maxThreads: 1, maxQueue: 8, idleTimeoutMs: 10_000, workerFile: builtWorker });
  deps = { store, config, log, now: Date.now, ingest };
});

afterAll(async () => {
  await ingest.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A site published through the store, and the decision of a deploy based on its live revision. */
async function existing(name: string, files: Record<string, string>): Promise<Extract<Decision, { mode: 'update' }>> {
  const { revision } = await publishSite(store, name, files);
  return { mode: 'update', site: store.getSite(name)!, base: revision, createdBy: 'owner@example.com' };
}

/** Files as the ingest worker hands them back: stored, with their final paths. */
async function unpacked(files: Record<string, string>): Promise<Array<FileEntry & { path: string }>> {
  return [...(await storeFiles(store, files))].map(([path, entry]) => ({ path, ...entry }));
}

const create: Decision = { mode: 'create', plan: 'anonymous', createdBy: 'anonymous' };

async function refusal(work: Promise<unknown> | (() => unknown)): Promise<ServiceError> {
  const error = await (typeof work === 'function' ? Promise.resolve().then(work) : work).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('assembling the file set', () => {
  it('is the upload alone for a whole deploy', async () => {
    const files = assembleFiles(deps, create, { files: await unpacked({ 'index.html': '<p>hi</p>', 'a.css': 'p{}' }) }, undefined);
    expect([...files.keys()].sort()).toEqual(['a.css', 'index.html']);
    expect(files.get('a.css')).toMatchObject({ type: expect.stringMatching(/^text\/css/) });
  });

  it('keeps the base revision for a patch, removes what it deletes and adds what it sends', async () => {
    const decision = await existing('patch-me', { 'index.html': 'one', 'old.html': 'old', 'keep.txt': 'k' });
    const files = assembleFiles(deps, decision, { files: await unpacked({ 'new.html': 'new', 'index.html': 'two' }) }, ['old.html']);
    expect([...files.keys()].sort()).toEqual(['index.html', 'keep.txt', 'new.html']);
    expect(files.get('index.html')!.sha256).toBe((await unpacked({ x: 'two' }))[0]!.sha256);
  });

  it('refuses to delete a path the base revision does not have', async () => {
    const decision = await existing('patch-missing', { 'index.html': 'one' });
    const error = await refusal(() => assembleFiles(deps, decision, { files: [] }, ['nope.html']));
    expect(error).toMatchObject({
      code: 'bad_request',
      message: 'Cannot delete nope.html: the base revision has no such file.',
      details: { file: 'nope.html' },
    });
  });

  it('refuses a site without index.html at its root', async () => {
    const error = await refusal(async () => assembleFiles(deps, create, { files: await unpacked({ 'docs/index.html': 'x' }) }, undefined));
    expect(error).toMatchObject({ code: 'bad_request', message: 'The site has no index.html at its root.' });
  });

  it("resolves files sent by sha256 against the site's own contents only, and checks their size", async () => {
    const decision = await existing('by-digest', { 'index.html': 'home', 'logo.svg': '<svg/>' });
    const logo = store.getFile(decision.base, 'logo.svg')!;
    const files = assembleFiles(
      deps,
      decision,
      { files: await unpacked({ 'index.html': 'home 2' }), references: [{ path: 'img/logo.svg', sha256: logo.sha256, size: logo.size }] },
      undefined,
    );
    expect(files.get('img/logo.svg')).toMatchObject({ sha256: logo.sha256, size: logo.size });

    const wrongSize = await refusal(() =>
      assembleFiles(deps, decision, { files: [], references: [{ path: 'index.html', sha256: logo.sha256, size: logo.size + 1 }] }, undefined),
    );
    expect(wrongSize.message).toBe(`index.html: size ${logo.size + 1} does not match the content with that sha256 (${logo.size} bytes).`);

    const unknown = await refusal(() =>
      assembleFiles(deps, decision, { files: [], references: [{ path: 'index.html', sha256: 'f'.repeat(64), size: 1 }] }, undefined),
    );
    expect(unknown).toMatchObject({ code: 'bad_request', details: { file: 'index.html', missing: ['index.html'] } });
    // A new site has no contents of its own to refer to.
    await refusal(() => assembleFiles(deps, create, { files: [], references: [{ path: 'index.html', sha256: logo.sha256, size: logo.size }] }, undefined));
  });

  it('reads reused contents again only where they land at a .br path the base did not already have', async () => {
    const decision = await existing('rejudge', { 'index.html': 'x', 'a.br': 'bytes' });
    const kept = store.getFile(decision.base, 'a.br')!.sha256;
    expect(contentsToRejudge(store, decision.base, [{ path: 'a.br', sha256: kept }])).toEqual([]);
    expect(
      contentsToRejudge(store, decision.base, [
        { path: 'b.br', sha256: kept },
        { path: 'c.txt', sha256: kept },
        { path: 'd/e.br', sha256: kept },
      ]),
    ).toEqual([{ sha256: kept, paths: ['b.br', 'd/e.br'] }]);
    expect(contentsToRejudge(store, undefined, [{ path: 'a.br', sha256: kept }])).toEqual([{ sha256: kept, paths: ['a.br'] }]);
  });
});

describe('analysing the assembled site', () => {
  it('lists links that lead nowhere, in path order, with their total', async () => {
    const files = await storeFiles(store, {
      'index.html': '<a href="/missing.html">x</a><a href="/about.html">about</a>',
      'about.html': '<img src="/gone.png">',
    });
    const extras = await analyzeSite(deps, files);
    expect(extras.warningsTotal).toBe(2);
    expect(extras.warnings!.map((warning) => [warning.file, warning.ref])).toEqual([
      ['about.html', '/gone.png'],
      ['index.html', '/missing.html'],
    ]);
  });

  it('refuses a _redirects line it cannot compile, as the deploy would', async () => {
    const files = await storeFiles(store, { 'index.html': 'x', _redirects: '/a /b 999\n' });
    const error = await refusal(analyzeSite(deps, files));
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/_redirects/);
  });
});

describe('publishing', () => {
  it('creates an anonymous site with a site token and a claim link, live at once', async () => {
    const files = await storeFiles(store, { 'index.html': 'new' });
    const { view, revisionId } = await publishRevision(deps, { decision: create, files, skipped: ['.git/'], patch: false, extras: {}, live: true });
    const site = store.getSite(view.site.name)!;
    expect(site).toMatchObject({ plan: 'anonymous', claimed: false, liveRevision: revisionId });
    expect(view).toMatchObject({ site_token: expect.stringMatching(/^st_/), claim_url: expect.stringContaining('/claim/ct_'), skipped: ['.git/'] });
    expect(view.agent_message).toContain('Left out on purpose (never published): .git/.');
  });

  it('refuses a draft of a site that does not exist yet', async () => {
    const files = await storeFiles(store, { 'index.html': 'draft' });
    const error = await refusal(publishRevision(deps, { decision: create, files, skipped: [], patch: false, extras: {}, live: false }));
    expect(error).toMatchObject({ code: 'bad_request' });
    expect(error.message).toMatch(/^A draft \(publish: false\)/);
  });

  it('stores a draft without making it live', async () => {
    const decision = await existing('draft-site', { 'index.html': 'one' });
    const files = await storeFiles(store, { 'index.html': 'two' });
    const { view, revisionId } = await publishRevision(deps, { decision, files, skipped: [], patch: false, extras: {}, live: false });
    expect(store.getSite('draft-site')!.liveRevision).toBe(decision.base);
    expect(view.agent_message).toMatch(/^Stored draft revision 2 of /);
    expect(revisionId).not.toBe(decision.base);
  });

  it('refuses an update whose base is no longer live with the conflict, naming the live revision', async () => {
    const decision = await existing('raced', { 'index.html': 'one' });
    const first = await publishRevision(deps, {
      decision,
      files: await storeFiles(store, { 'index.html': 'two' }),
      skipped: [],
      patch: false,
      extras: {},
      live: true,
    });
    const error = await refusal(
      publishRevision(deps, { decision, files: await storeFiles(store, { 'index.html': 'three' }), skipped: [], patch: false, extras: {}, live: true }),
    );
    expect(error).toMatchObject({ code: 'conflict', details: { live_revision: first.revisionId } });
    expect(store.getSite('raced')!.liveRevision).toBe(first.revisionId);
  });

  it('says how many links lead nowhere in its answer, and lists them', async () => {
    const decision = await existing('warned', { 'index.html': 'one' });
    const extras: RevisionExtras = { warnings: [{ file: 'index.html', line: 3, ref: '/x.html', kind: 'broken_link' }], warningsTotal: 1 };
    const { view } = await publishRevision(deps, {
      decision,
      files: await storeFiles(store, { 'index.html': 'two' }),
      skipped: [],
      patch: true,
      extras,
      live: true,
    });
    expect(view.agent_message).toContain(
      '1 link or asset reference leads nowhere on the site (published all the same), for example /x.html in index.html line 3',
    );
    expect(view).toMatchObject({ warnings: [{ file: 'index.html', line: 3, ref: '/x.html' }], warnings_total: 1 });
  });
});

describe("assembling a digest deploy's manifest", () => {
  const [a, b, c] = ['a', 'b', 'c'].map((letter) => letter.repeat(64)) as [string, string, string];
  const record: ManifestRecord = {
    owner: 'anonymous',
    mode: 'update',
    plan: 'free',
    files: [
      { path: 'index.html', size: 5, sha256: a },
      { path: 'copy.html', size: 5, sha256: a },
      { path: 'style.css', size: 7, sha256: b },
      { path: 'logo.svg', size: 3, sha256: c },
    ],
    skipped: [],
    known: { [c]: { size: 3, encodings: { gzip: 2 } } },
    missing: [a, b],
    createdAt: 0,
    expiresAt: 1,
  };
  const part = (size: number): ManifestPart => ({ size, at: 0 });

  it('says what is still missing, and refuses to assemble until it has arrived', async () => {
    const parts = new Map([[a, part(5)]]);
    expect(remainingContents(record, parts)).toEqual([b]);
    const error = await refusal(() => assembleManifest(record, parts));
    expect(error).toMatchObject({
      code: 'bad_request',
      message: '1 missing contents were not uploaded, for example style.css.',
      details: { file: 'style.css' },
    });
  });

  it('places every content at each of its paths, uploaded and reused alike, with its type', () => {
    const files = assembleManifest(
      record,
      new Map([
        [a, part(5)],
        [b, part(7)],
      ]),
    );
    expect(
      remainingContents(
        record,
        new Map([
          [a, part(5)],
          [b, part(7)],
        ]),
      ),
    ).toEqual([]);
    expect([...files.keys()].sort()).toEqual(['copy.html', 'index.html', 'logo.svg', 'style.css']);
    expect(files.get('copy.html')).toMatchObject({ sha256: a, size: 5, type: expect.stringMatching(/^text\/html/) });
    expect(files.get('logo.svg')).toMatchObject({ sha256: c, size: 3, type: expect.stringMatching(/^image\/svg\+xml/) });
  });

  it('refuses a part whose size is not the one the manifest names', async () => {
    const error = await refusal(() =>
      assembleManifest(
        record,
        new Map([
          [a, part(5)],
          [b, part(8)],
        ]),
      ),
    );
    expect(error.message).toBe('style.css: the manifest says 7 bytes, the content has 8.');
  });
});
