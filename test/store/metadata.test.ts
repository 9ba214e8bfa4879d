import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, siteScope, type CommitInput, type FileEntry, type Store } from '../../src/store/index.js';
import { tempDir } from '../helpers/sites.js';
import { markedEntry } from './helpers.js';

let dir: string;
let store: Store;
let clock = 1_000_000;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plinth-store-meta-'));
  store = openStore({ dir, now: () => clock });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function deploy(site: string, baseRevision: string | null, files: [string, FileEntry][]): CommitInput {
  return { site, baseRevision, files: new Map(files), kind: 'deploy', createdBy: 'acct_1' };
}

async function createSite(name: string, files: [string, FileEntry][] = [['/index.html', markedEntry(1)]]) {
  const result = await store.commitRevision({
    ...deploy(name, null, files),
    create: { name, plan: 'free', claimed: true, accountId: 'acct_1' },
  });
  if (!result.ok) throw new Error(`create ${name} failed: ${result.reason}`);
  return result;
}

describe('commitRevision and reads', () => {
  it('creates a site with its first revision and reads it back', async () => {
    clock = 2_000_000;
    const { site, revision } = await createSite('alpha-site', [
      ['/index.html', { sha256: 'a'.repeat(64), size: 10, type: 'text/html; charset=utf-8', encodings: { br: 5 } }],
      ['/app.js', markedEntry(20)],
    ]);

    expect(site).toMatchObject({ name: 'alpha-site', plan: 'free', state: 'active', claimed: true, createdAt: 2_000_000 });
    expect(site.id).toMatch(/^site_[a-z2-7]{26}$/);
    expect(revision).toMatchObject({ siteId: site.id, number: 1, files: 2, bytes: 30, kind: 'deploy', createdBy: 'acct_1' });
    expect(revision.id).toMatch(/^rev_[a-z2-7]{26}$/);
    expect(store.getSite('alpha-site')).toEqual(site);
    expect(store.getSiteById(site.id)).toEqual(site);
    expect(site).toMatchObject({ liveRevision: revision.id, liveNumber: 1, lastNumber: 1 });
    expect(store.getRevision(revision.id)).toEqual(revision);
    expect(store.getFile(revision.id, '/index.html')).toEqual({
      sha256: 'a'.repeat(64),
      size: 10,
      type: 'text/html; charset=utf-8',
      encodings: { br: 5 },
    });
    expect(store.isNameUsed('alpha-site')).toBe(true);
  });

  it('records a commit’s audit event in the same transaction, or neither when the event cannot be made', async () => {
    clock = 2_500_000;
    const { site } = await createSite('evented-site');
    const result = await store.commitRevision({
      ...deploy('evented-site', site.liveRevision!, [['/index.html', markedEntry(2)]]),
      event: (committed, revision) => ({
        kind: 'deploy.published',
        actor: { kind: 'site_token' },
        siteId: committed.id,
        siteName: committed.name,
        details: { revision: revision.id, number: revision.number },
      }),
    });
    if (!result.ok) throw new Error(result.reason);
    expect(result.event).toMatchObject({ kind: 'deploy.published', at: 2_500_000, siteId: site.id, details: { revision: result.revision.id, number: 2 } });
    const listed = store.listEvents(siteScope(site.id), { limit: 10 }).events;
    expect(listed.map((event) => event.id)).toEqual([result.event!.id]);

    await expect(
      store.commitRevision({
        ...deploy('evented-site', result.revision.id, [['/index.html', markedEntry(3)]]),
        event: () => {
          throw new Error('no event');
        },
      }),
    ).rejects.toThrow('no event');
    expect(store.getSite('evented-site')).toMatchObject({ liveRevision: result.revision.id, lastNumber: 2 });
    expect(store.listEvents(siteScope(site.id), { limit: 10 }).events).toHaveLength(1);
  });

  it('returns undefined for absent records', () => {
    expect(store.getSite('nope')).toBeUndefined();
    expect(store.getSiteById('site_nope')).toBeUndefined();
    expect(store.getRevision('rev_nope')).toBeUndefined();
    expect(store.getFile('rev_nope', '/index.html')).toBeUndefined();
    expect(store.getFile('rev_nope', `/${'x'.repeat(3000)}`)).toBeUndefined();
    // Past lmdb-js's key buffer: a miss, not a RangeError (a site URL limit may be set to 64 KB).
    for (const length of [4090, 4094, 5000, 65_536]) expect(store.getFile('rev_nope', `/${'x'.repeat(length)}`)).toBeUndefined();
    expect(store.listFiles('rev_nope')).toEqual([]);
    expect(store.isNameUsed('nope')).toBe(false);
  });

  it('lists a revision in code point order of the path, astral characters included', async () => {
    const paths = ['/z.txt', '/a/b.txt', '/a.txt', '/\u{1F600}.png', '/\uffee.txt', '/\u00e9.txt', '/A.txt', `/${'l'.repeat(90)}`];
    const { revision } = await createSite(
      'order-site',
      paths.map((p, i) => [p, markedEntry(i + 1)]),
    );
    // Neighbour revisions must not leak into the range.
    await createSite('order-neighbour', [['/a.txt', markedEntry(99)]]);

    const listed = store.listFiles(revision.id);
    const byCodePoint = [...paths].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(listed.map((f) => f.path)).toEqual(byCodePoint);
    expect(listed.find((f) => f.path === '/\u{1F600}.png')).toEqual({ path: '/\u{1F600}.png', ...markedEntry(4) });
  });

  it('numbers revisions and pages them newest first', async () => {
    let { site, revision } = await createSite('paged-site');
    for (let i = 2; i <= 7; i++) {
      clock += 1000;
      const result = await store.commitRevision(deploy('paged-site', revision.id, [['/index.html', markedEntry(i)]]));
      if (!result.ok) throw new Error(result.reason);
      expect(result.revision.number).toBe(i);
      ({ site, revision } = result);
    }
    expect(site).toMatchObject({ liveNumber: 7, lastNumber: 7, liveRevision: revision.id });

    const first = store.listRevisions(site.id, { limit: 3 });
    expect(first.revisions.map((r) => r.number)).toEqual([7, 6, 5]);
    expect(first.nextBefore).toBe(5);
    const second = store.listRevisions(site.id, { limit: 3, before: first.nextBefore });
    expect(second.revisions.map((r) => r.number)).toEqual([4, 3, 2]);
    const last = store.listRevisions(site.id, { limit: 3, before: second.nextBefore });
    expect(last).toEqual({ revisions: [expect.objectContaining({ number: 1 })] });
    expect(store.listRevisions(site.id).revisions.map((r) => r.number)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(store.listRevisions(site.id, { limit: 7 }).nextBefore).toBeUndefined();
    expect(store.listRevisions('site_other').revisions).toEqual([]);
  });

  it('refuses a name that was ever used', async () => {
    await createSite('taken-name');
    const again = await store.commitRevision({
      ...deploy('taken-name', null, [['/index.html', markedEntry(2)]]),
      create: { name: 'taken-name', plan: 'anonymous', claimed: false },
    });
    expect(again).toEqual({ ok: false, reason: 'name_taken' });
    expect(store.getSite('taken-name')?.lastNumber).toBe(1);
  });

  it('reports not_found for an update of an unknown site', async () => {
    expect(await store.commitRevision(deploy('ghost-site', null, []))).toEqual({ ok: false, reason: 'not_found' });
    expect(store.isNameUsed('ghost-site')).toBe(false);
  });

  it('rejects a stale base revision and changes nothing', async () => {
    const created = await createSite('stale-site');
    const next = await store.commitRevision(deploy('stale-site', created.revision.id, [['/new.html', markedEntry(2)]]));
    if (!next.ok) throw new Error(next.reason);

    const stale = await store.commitRevision(deploy('stale-site', created.revision.id, [['/x.html', markedEntry(3)]]));
    expect(stale).toEqual({ ok: false, reason: 'conflict', liveRevision: next.revision.id });
    expect(store.getSite('stale-site')).toEqual(next.site);
    expect(store.listRevisions(next.site.id).revisions).toHaveLength(2);
  });

  it('lets only one of two commits queued in the same turn win', async () => {
    const { revision } = await createSite('same-turn');
    const results = await Promise.all([
      store.commitRevision(deploy('same-turn', revision.id, [['/a', markedEntry(2)]])),
      store.commitRevision(deploy('same-turn', revision.id, [['/b', markedEntry(3)]])),
    ]);
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, reason: 'conflict', liveRevision: store.getSite('same-turn')?.liveRevision }]);
  });

  it('commits with a null base regardless of the live revision', async () => {
    const { revision: earlier } = await createSite('admin-site');
    const result = await store.commitRevision({
      ...deploy('admin-site', null, [['/index.html', markedEntry(5)]]),
      kind: 'rollback',
      rollbackOf: earlier.id,
      createdBy: 'admin',
    });
    expect(result).toMatchObject({ ok: true, revision: { number: 2, kind: 'rollback', rollbackOf: earlier.id } });
  });

  it('refuses a rollback whose source revision is gone (deleted meanwhile), writing nothing', async () => {
    const { revision: first } = await createSite('rollback-source');
    const second = await store.commitRevision(deploy('rollback-source', first.id, [['/index.html', markedEntry(6)]]));
    expect(second.ok).toBe(true);
    expect((await store.deleteRevision(store.getSite('rollback-source')!.id, first.id, 'admin')).ok).toBe(true);
    const result = await store.commitRevision({
      ...deploy('rollback-source', null, [['/index.html', markedEntry(1)]]),
      kind: 'rollback',
      rollbackOf: first.id,
      createdBy: 'admin',
    });
    expect(result).toEqual({ ok: false, reason: 'no_revision' });
    expect(store.getSite('rollback-source')?.lastNumber).toBe(2);
  });

  it('refuses a path too long for an index key before writing anything', async () => {
    const { revision } = await createSite('long-path');
    const files: [string, FileEntry][] = [
      ['/ok', markedEntry(1)],
      [`/${'x'.repeat(2000)}`, markedEntry(2)],
    ];
    await expect(store.commitRevision(deploy('long-path', revision.id, files))).rejects.toThrow(RangeError);
    expect(store.getSite('long-path')?.lastNumber).toBe(1);

    // rev_ ids are 30 bytes; with the 0x00 separator a 1947-byte path is exactly LMDB's 1978.
    const longest = `/${'y'.repeat(1946)}`;
    const fits = await store.commitRevision(deploy('long-path', revision.id, [[longest, markedEntry(3)]]));
    if (!fits.ok) throw new Error(fits.reason);
    expect(store.listFiles(fits.revision.id).map((f) => f.path)).toEqual([longest]);
    await expect(store.commitRevision(deploy('long-path', fits.revision.id, [[`${longest}y`, markedEntry(4)]]))).rejects.toThrow(RangeError);
  });

  it('records a state change with its time; a deleted site stays deleted', async () => {
    await createSite('stateful');
    clock = 9_000_000;
    const updated = await store.setSiteState('stateful', 'taken_down');
    expect(updated).toMatchObject({ ok: true, site: { state: 'taken_down', stateChangedAt: 9_000_000 } });
    expect(store.getSite('stateful')).toEqual(updated.ok && updated.site);
    expect(await store.setSiteState('missing', 'deleted')).toEqual({ ok: false, reason: 'not_found' });
    expect((await store.setSiteState('stateful', 'deleted')).ok).toBe(true);
    expect(await store.setSiteState('stateful', 'active')).toEqual({ ok: false, reason: 'deleted' });
    expect(store.getSite('stateful')?.state).toBe('deleted');
  });

  it('deletes a manifest for exactly one of two racing deletes', async () => {
    const record = {
      owner: 'anonymous',
      mode: 'create' as const,
      plan: 'anonymous' as const,
      files: [],
      skipped: [],
      known: {},
      missing: [],
      createdAt: clock,
      expiresAt: clock + 3600_000,
    };
    await store.putManifest('mf_race', record);
    expect(await Promise.all([store.deleteManifest('mf_race'), store.deleteManifest('mf_race')])).toEqual([true, false]);
    expect(store.getManifest('mf_race')).toBeUndefined();
    expect(await store.deleteManifest('mf_never')).toBe(false);
  });

  it('records parts of an open manifest only; one take of racing ones wins, and an untake gives it back', async () => {
    const record = {
      owner: 'anonymous',
      mode: 'create' as const,
      plan: 'anonymous' as const,
      files: [{ path: 'index.html', size: 3, sha256: 'a'.repeat(64) }],
      skipped: [],
      known: {},
      missing: ['a'.repeat(64)],
      createdAt: clock,
      expiresAt: clock + 3600_000,
    };
    await store.putManifest('mf_parts', record);
    expect([...(await store.addManifestParts('mf_parts', [{ sha256: 'a'.repeat(64), size: 3 }]))!.keys()]).toEqual(['a'.repeat(64)]);
    expect(store.manifestBlobs().has('a'.repeat(64))).toBe(true);
    expect(await Promise.all([store.takeManifest('mf_parts'), store.takeManifest('mf_parts')])).toEqual([true, false]);
    // Taken: no more parts, and its parts stay held until it is deleted.
    expect(await store.addManifestParts('mf_parts', [{ sha256: 'b'.repeat(64), size: 3 }])).toBeUndefined();
    expect(store.manifestBlobs().has('a'.repeat(64))).toBe(true);
    await store.untakeManifest('mf_parts');
    expect(store.getManifest('mf_parts')?.takenAt).toBeUndefined();
    expect(await store.takeManifest('mf_parts')).toBe(true);
    expect(await store.deleteManifest('mf_parts')).toBe(true);
    expect(store.listManifestParts('mf_parts').size).toBe(0);
    expect(store.manifestBlobs().has('a'.repeat(64))).toBe(false);
    // Refused: parts dropped, nothing more recorded.
    await store.putManifest('mf_refused', record);
    await store.addManifestParts('mf_refused', [{ sha256: 'a'.repeat(64), size: 3 }]);
    expect(await store.refuseManifest('mf_refused', { code: 'blocked_secret', message: 'a key' })).toBe(true);
    expect(store.listManifestParts('mf_refused').size).toBe(0);
    expect(await store.addManifestParts('mf_refused', [{ sha256: 'a'.repeat(64), size: 3 }])).toBeUndefined();
    expect(store.getManifest('mf_refused')?.refused?.code).toBe('blocked_secret');
  });
});

describe('rate counters', () => {
  it('counts hits per fixed window, all or nothing, and reports when to retry', async () => {
    let clock = 10 * 3600_000 + 600_000; // ten minutes into an hour window
    const store = openStore({ dir: tempDir(), now: () => clock });
    try {
      const sites = { scope: 'sites:net', limit: 2, windowMs: 3600_000 };
      const deploys = { scope: 'deploys:net', limit: 3, windowMs: 3600_000 };
      expect(await store.takeRateTokens([sites, deploys])).toEqual({ allowed: true });
      expect(await store.takeRateTokens([sites, deploys])).toEqual({ allowed: true });
      // The site cap is reached: nothing is counted, not even the deploy.
      expect(await store.takeRateTokens([sites, deploys])).toEqual({ allowed: false, retryAfterMs: 50 * 60_000, refusedBy: 'sites:net' });
      expect(await store.takeRateTokens([deploys])).toEqual({ allowed: true });
      expect(await store.takeRateTokens([deploys])).toEqual({ allowed: false, retryAfterMs: 50 * 60_000, refusedBy: 'deploys:net' });
      // Refusals are counted by the kind of cap, never by its key (the network here).
      expect(store.counters().rateLimited).toEqual({ sites: 1, deploys: 1 });
      clock += 50 * 60_000;
      expect(await store.takeRateTokens([sites, deploys])).toEqual({ allowed: true });
      expect(await store.pruneCounters(clock)).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('takes several hits at once only when all of them fit, in every check', async () => {
    const clock = 3600_000; // the start of a minute window
    const store = openStore({ dir: tempDir(), now: () => clock });
    try {
      const credential = { scope: 'credential:c', limit: 5, windowMs: 60_000 };
      const network = { scope: 'network:n', limit: 10, windowMs: 60_000 };
      expect(await store.takeRateTokens([credential, network])).toEqual({ allowed: true });
      expect(
        await store.takeRateTokens([
          { ...credential, hits: 3 },
          { ...network, hits: 3 },
        ]),
      ).toEqual({ allowed: true });
      // One hit is left on the credential: a take of two is refused and counts nothing anywhere.
      expect(
        await store.takeRateTokens([
          { ...credential, hits: 2 },
          { ...network, hits: 2 },
        ]),
      ).toEqual({ allowed: false, retryAfterMs: 60_000, refusedBy: 'credential:c' });
      expect(await store.takeRateTokens([{ ...network, hits: 6 }])).toEqual({ allowed: true });
      expect(await store.takeRateTokens([credential])).toEqual({ allowed: true });
      expect(await store.takeRateTokens([credential])).toEqual({ allowed: false, retryAfterMs: 60_000, refusedBy: 'credential:c' });
    } finally {
      await store.close();
    }
  });
});
