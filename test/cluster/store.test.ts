import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pgClient from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { RECORDS_UNAVAILABLE_CODE } from '../../src/errors.js';
import { hashToken, type FileEntry, type Store } from '../../src/store/index.js';
import { postgresBinDir, queryRows, usePostgresNodes } from '../helpers/postgres.js';
import { loadPg } from '../../src/store/records-connections.js';
import { openRecordsLog } from '../../src/store/records-log.js';
import type { RecordWrite } from '../../src/store/replicated-dbs.js';
import { waitUntil } from '../helpers/wait.js';
import { tempDir } from '../helpers/sites.js';
import { markedEntry } from '../store/helpers.js';

/**
 * The store with its records in PostgreSQL: several nodes (each its own data directory and LMDB
 * replica) on one database. Each operation is the same code as the embedded store's; these tests
 * check what only a cluster can get wrong: order, races between nodes, single use, catch-up.
 */

const cluster = usePostgresNodes();
const node = (dir?: string, databaseUrl?: string): Promise<Store> => cluster.node(dir, databaseUrl);

const files = (marker: number) => new Map([['index.html', markedEntry(marker, 'text/html; charset=utf-8')]]);

async function createSite(store: Store, name: string): Promise<string> {
  const result = await store.commitRevision({
    site: name,
    create: { name, plan: 'free', claimed: true },
    baseRevision: null,
    files: files(1),
    kind: 'deploy',
    createdBy: 'admin',
  });
  if (!result.ok) throw new Error(result.reason);
  return result.revision.id;
}

describe('records in PostgreSQL', () => {
  it('a commit on one node is seen by another once it catches up, and at once by its own', async () => {
    const a = await node();
    const b = await node();
    const revision = await createSite(a, 'shared-site');
    expect(a.getSite('shared-site')?.liveRevision).toBe(revision);
    expect(b.getSite('shared-site')).toBeUndefined();
    await b.cluster!.catchUp();
    expect(b.getSite('shared-site')?.liveRevision).toBe(revision);
    expect(b.getFile(revision, 'index.html')?.sha256).toBe(markedEntry(1).sha256);
    expect(b.cluster!.applied()).toBe(a.cluster!.applied());
  });

  it('commits a change in three round trips: BEGIN with the lock and the look at the log, the change with its records and notification, COMMIT', async () => {
    // Every query any connection sends, with the connection that sent it.
    const Client = loadPg().Client;
    const query = Client.prototype.query;
    const sent: Array<{ client: unknown; text: string }> = [];
    const spy = vi.spyOn(Client.prototype, 'query').mockImplementation(function (this: unknown, ...args: unknown[]) {
      const config = args[0];
      sent.push({ client: this, text: typeof config === 'string' ? config : String((config as { text?: string }).text) });
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    const a = await node();
    const listener = new pgClient.Client({ connectionString: cluster.pg.url });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (notification) => told.push(notification.payload ?? ''));
    await listener.query('LISTEN plinth_changes');
    try {
      sent.length = 0;
      await createSite(a, 'four-trips');
    } finally {
      spy.mockRestore();
    }
    try {
      const write = sent.find((s) => s.text.includes('INSERT INTO plinth_changes'));
      expect(write).toBeDefined();
      const mine = sent.filter((s) => s.client === write!.client).map((s) => s.text.trim().split(/\s+/)[0]);
      const at = mine.lastIndexOf('BEGIN;', mine.indexOf('WITH'));
      expect(mine.slice(at, mine.indexOf('COMMIT', at) + 1)).toEqual(['BEGIN;', 'WITH', 'COMMIT']);
      // The look at the log is in the first: the last change's number, against the replica's.
      expect(sent.find((s) => s.client === write!.client && s.text.startsWith('BEGIN;'))?.text).toContain('max(seq) FROM plinth_changes');
      // The change is in the log with its records, and the other nodes were told of it (its
      // number, then the replica that applied it).
      expect(await waitUntil(() => told.some((payload) => payload.split(' ')[0] === String(a.cluster!.applied())), 5000, 10)).toBe(true);
      expect(told.find((payload) => payload.split(' ')[0] === String(a.cluster!.applied()))).toMatch(/^\d+ [\w-]{16}$/);
      const b = await node();
      await b.cluster!.catchUp();
      expect(b.getSite('four-trips')?.liveRevision).toBe(a.getSite('four-trips')?.liveRevision);
      const records = await queryRows(cluster.pg.url, "SELECT 1 FROM plinth_records WHERE db = 'sites' AND value->>'name' = 'four-trips'");
      expect(records).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it("a node that has not seen another node's change catches up under the lock before its own commit, which follows it in the log", async () => {
    const a = await node();
    const b = await node();
    const first = await createSite(a, 'first-of-two');
    expect(b.cluster!.applied()).toBeLessThan(a.cluster!.applied());
    await createSite(b, 'second-of-two');
    expect(b.getSite('first-of-two')?.liveRevision).toBe(first);
    expect(b.getSite('second-of-two')?.liveRevision).toBeDefined();
    expect(b.cluster!.applied()).toBe(a.cluster!.applied() + 1);
    const changes = await queryRows<{ seq: string }>(cluster.pg.url, 'SELECT seq FROM plinth_changes ORDER BY seq DESC LIMIT 2');
    expect(changes.map((row) => Number(row.seq))).toEqual([b.cluster!.applied(), a.cluster!.applied()]);
    await a.cluster!.catchUp();
    expect(a.getSite('second-of-two')?.liveRevision).toBe(b.getSite('second-of-two')?.liveRevision);
  });

  it('wakes a follower for changes other replicas applied, not for those its own replica applied', async () => {
    const url = await cluster.pg.createDatabase('own_changes');
    // Two handles on one replica (as a node's main thread and HTTP thread), and another node's.
    const follower = await openRecordsLog({ url, replica: 'replica-one' });
    const sibling = await openRecordsLog({ url, replica: 'replica-one' });
    const other = await openRecordsLog({ url, replica: 'replica-two' });
    const listener = new pgClient.Client({ connectionString: url });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (notification) => told.push(notification.payload ?? ''));
    await listener.query('LISTEN plinth_changes');
    let woken = 0;
    const stop = await follower.listen(() => woken++);
    let applied = 0;
    const commit = async (log: typeof follower, key: string): Promise<void> => {
      const { change } = await log.commit(
        async (changes) => {
          applied = changes.at(-1)!.seq;
        },
        () => applied,
        () => ({ result: undefined, writes: [['secrets', key, 'value']] }),
      );
      applied = change!.seq;
    };
    try {
      // Notifications arrive in commit order: once the other replica's has woken the follower,
      // its sibling's, committed before, has been delivered too.
      for (const round of [1, 2]) {
        await commit(sibling, `own-${round}`);
        await commit(other, `other-${round}`);
        expect(await waitUntil(() => woken >= round, 5000, 10)).toBe(true);
        expect(woken).toBe(round);
      }
      expect(await waitUntil(() => told.length === 4, 5000, 10)).toBe(true);
      expect(told.map((payload) => payload.split(' ')[1])).toEqual(['replica-one', 'replica-two', 'replica-one', 'replica-two']);
      // What the follower was not woken for, its poll still reads.
      expect((await follower.changesSince(0)).map((change) => change.writes[0]![1])).toEqual(['own-1', 'other-1', 'own-2', 'other-2']);
    } finally {
      await stop();
      await listener.end();
      await Promise.all([follower.close(), sibling.close(), other.close()]);
    }
  });

  it("writes a change's records as its last write of each key: a put, a put replaced, a removal, a removal replaced", async () => {
    const url = await cluster.pg.createDatabase('last_writes');
    const log = await openRecordsLog({ url });
    const rows = async (): Promise<Record<string, unknown>> =>
      Object.fromEntries(
        (await queryRows<{ key: string; value: unknown }>(url, "SELECT key, value FROM plinth_records WHERE db = 'sites' ORDER BY key")).map((row) => [
          row.key,
          row.value,
        ]),
      );
    let applied = 0;
    const commit = async (writes: RecordWrite[]): Promise<void> => {
      const { change } = await log.commit(
        async () => undefined,
        () => applied,
        () => ({ result: undefined, writes }),
      );
      applied = change!.seq;
    };
    try {
      await commit([
        ['sites', 'a', { v: 1 }],
        ['sites', 'b', { v: 1 }],
        ['sites', 'gone', { v: 1 }],
      ]);
      await commit([
        ['sites', 'a', { v: 2 }],
        ['sites', 'b', null],
        ['sites', 'a', { v: 3 }],
        ['sites', 'gone', null],
        ['sites', 'c', null],
        ['sites', 'c', { v: 1 }],
        ['sites', 'd', { v: 1 }],
        ['sites', 'd', null],
      ]);
      expect(await rows()).toEqual({ '"a"': { v: 3 }, '"c"': { v: 1 } });
      // The log keeps every write, in order, for the replicas.
      const [change] = await log.changesSince(applied - 1);
      expect(change!.writes.map(([, key, value]) => [key, value])).toEqual([
        ['a', { v: 2 }],
        ['b', null],
        ['a', { v: 3 }],
        ['gone', null],
        ['c', null],
        ['c', { v: 1 }],
        ['d', { v: 1 }],
        ['d', null],
      ]);
      await commit([['sites', 'c', null]]);
      expect(await rows()).toEqual({ '"a"': { v: 3 } });
      // A change large enough to be compressed is stored with lz4 where the server has it.
      await commit(Array.from({ length: 200 }, (_, i): RecordWrite => ['sites', `many-${i}`, { v: i, text: 'x'.repeat(40) }]));
      const [server] = await queryRows<{ lz4: boolean }>(url, "SELECT 'lz4' = ANY(enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'");
      const [stored] = await queryRows<{ method: string }>(url, 'SELECT pg_column_compression(writes) AS method FROM plinth_changes ORDER BY seq DESC LIMIT 1');
      expect(stored?.method).toBe(server?.lz4 ? 'lz4' : 'pglz');
      expect((await log.changesSince(applied - 1))[0]!.writes).toHaveLength(200);
    } finally {
      await log.close();
    }
  });

  it("replicates a revision's compiled site rules and link warnings with it", async () => {
    const a = await node();
    const b = await node();
    const extras = {
      redirects: {
        rules: [{ line: 1, from: { parts: ['old'], splat: false }, to: ['/new'], ownQuery: false, status: 301 as const, force: false }],
        usesQuery: false,
      },
      headers: { blocks: [{ line: 1, pattern: { parts: [], splat: true }, set: [['X-Frame-Options', 'DENY'] as const], remove: [] }] },
      warnings: [{ file: 'index.html', line: 2, ref: 'gone.png', kind: 'broken_link' as const }],
      warningsTotal: 1,
    };
    const result = await a.commitRevision({
      site: 'ruled-site',
      create: { name: 'ruled-site', plan: 'free', claimed: true },
      baseRevision: null,
      files: files(1),
      kind: 'deploy',
      createdBy: 'admin',
      extras,
    });
    if (!result.ok) throw new Error(result.reason);
    await b.cluster!.catchUp();
    expect(b.getRevisionExtras(result.revision.id)).toEqual(extras);
  });

  it('of two nodes deploying on the same base revision, exactly one wins', async () => {
    const a = await node();
    const b = await node();
    const base = await createSite(a, 'race-site');
    await b.cluster!.catchUp();
    const deploy = (store: Store, marker: number) =>
      store.commitRevision({ site: 'race-site', baseRevision: base, files: files(marker), kind: 'deploy', createdBy: 'admin' });
    const results = await Promise.all([deploy(a, 2), deploy(b, 3), deploy(a, 4), deploy(b, 5)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(['conflict', 'conflict', 'conflict']);
    await a.cluster!.catchUp();
    await b.cluster!.catchUp();
    expect(a.getSite('race-site')?.liveRevision).toBe(b.getSite('race-site')?.liveRevision);
    expect(a.getSite('race-site')?.lastNumber).toBe(2);
  });

  it('a commit prepared while its uploads are in flight takes the lock only once they are up, and runs again under it if the log moved meanwhile', async () => {
    const a = await node();
    const b = await node();
    const base = await createSite(a, 'ahead-site');
    await b.cluster!.catchUp();
    // Each run of the operation makes its event once: how many times it ran.
    let runs = 0;
    const gated = (store: Store, site: string, baseRevision: string, marker: number, paths: Map<string, FileEntry> = files(marker)) => {
      let open!: () => void;
      let fail!: (err: Error) => void;
      const uploads = new Promise<void>((resolve, reject) => {
        open = resolve;
        fail = reject;
      });
      const committing = store.commitRevision({
        site,
        baseRevision,
        files: paths,
        kind: 'deploy',
        createdBy: 'admin',
        uploads,
        event: (committed, revision) => {
          runs++;
          return {
            kind: 'deploy.published',
            actor: { kind: 'site_token' },
            siteId: committed.id,
            siteName: committed.name,
            details: { revision: revision.id },
          };
        },
      });
      return { committing, open, fail };
    };
    const seq = async (): Promise<number> => Number((await queryRows<{ seq: string }>(cluster.pg.url, 'SELECT max(seq) AS seq FROM plinth_changes'))[0]!.seq);

    // Nothing moved: the outcome prepared ahead stands, and nothing is written before the uploads
    // are up; then it is written in one round trip, its values as literals (a path that plays
    // with SQL's quoting comes back as it was, on every node).
    const hostile = "it's $q$ \\ $$ $1 ü.html";
    const quiet = gated(b, 'ahead-site', base, 2, new Map([...files(2), [hostile, markedEntry(2, 'text/html')]]));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runs).toBe(1);
    const before = await seq();
    quiet.open();
    const kept = await quiet.committing;
    if (!kept.ok) throw new Error(kept.reason);
    expect(runs).toBe(1);
    expect(await seq()).toBe(before + 1);
    expect(b.getSite('ahead-site')?.liveRevision).toBe(kept.revision.id);
    await a.cluster!.catchUp();
    for (const store of [a, b]) expect(store.listFiles(kept.revision.id).map((file) => file.path)).toContain(hostile);

    // Another node commits meanwhile: the operation runs again on the replica caught up.
    await a.cluster!.catchUp();
    runs = 0;
    const moved = gated(b, 'ahead-site', kept.revision.id, 3);
    await createSite(a, 'ahead-other');
    const beforeMoved = await seq();
    moved.open();
    const again = await moved.committing;
    if (!again.ok) throw new Error(again.reason);
    expect(runs).toBe(2);
    // The round trip of the outcome prepared ahead wrote nothing: one change, the one made again.
    expect(await seq()).toBe(beforeMoved + 1);
    expect(b.getSite('ahead-other')).toBeDefined();
    expect(b.getSite('ahead-site')).toMatchObject({ liveRevision: again.revision.id, lastNumber: 3 });

    // Another node deploys the same site meanwhile: the deploy prepared on the old live revision is refused.
    await a.cluster!.catchUp();
    const late = gated(b, 'ahead-site', again.revision.id, 4);
    const won = await a.commitRevision({ site: 'ahead-site', baseRevision: again.revision.id, files: files(5), kind: 'deploy', createdBy: 'admin' });
    if (!won.ok) throw new Error(won.reason);
    late.open();
    expect(await late.committing).toMatchObject({ ok: false, reason: 'conflict', liveRevision: won.revision.id });

    // Uploads that fail refuse the commit: nothing is written.
    await b.cluster!.catchUp();
    const failed = gated(b, 'ahead-site', won.revision.id, 6);
    const atFailure = await seq();
    failed.fail(new Error('bucket gone'));
    await expect(failed.committing).rejects.toThrow('bucket gone');
    expect(await seq()).toBe(atFailure);
    expect(b.getSite('ahead-site')?.liveRevision).toBe(won.revision.id);
  });

  it('takes a name once, cluster-wide', async () => {
    const a = await node();
    const b = await node();
    const create = (store: Store) =>
      store.commitRevision({
        site: 'one-name',
        create: { name: 'one-name', plan: 'free', claimed: true },
        baseRevision: null,
        files: files(6),
        kind: 'deploy',
        createdBy: 'admin',
      });
    const results = await Promise.all([create(a), create(b), create(a), create(b)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'name_taken')).toBe(true);
  });

  it('uses a single-use secret once, cluster-wide', async () => {
    const a = await node();
    const b = await node();
    await a.putManifest('mf_cluster', {
      owner: 'anonymous',
      mode: 'create',
      plan: 'anonymous',
      files: [],
      skipped: [],
      known: {},
      missing: [],
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
    });
    await b.cluster!.catchUp();
    const taken = await Promise.all([
      a.deleteManifest('mf_cluster'),
      b.deleteManifest('mf_cluster'),
      a.deleteManifest('mf_cluster'),
      b.deleteManifest('mf_cluster'),
    ]);
    expect(taken.filter(Boolean)).toHaveLength(1);
  });

  it('uses a members-only access ticket once, cluster-wide, and every node sees a site made private', async () => {
    const a = await node();
    const b = await node();
    await a.createAccessTicket('ticket-hash', { siteId: 'site_x', accountId: 'acct_x', host: 'x', expiresAt: Date.now() + 60_000 });
    await b.cluster!.catchUp();
    const used = await Promise.all([
      a.useAccessTicket('ticket-hash'),
      b.useAccessTicket('ticket-hash'),
      a.useAccessTicket('ticket-hash'),
      b.useAccessTicket('ticket-hash'),
    ]);
    expect(used.filter((ticket) => ticket !== undefined)).toHaveLength(1);

    const site = await a.commitRevision({
      site: 'private-cluster',
      create: { name: 'private-cluster', plan: 'builder', claimed: true },
      baseRevision: null,
      files: new Map(),
      kind: 'deploy',
      createdBy: 'admin',
    });
    if (!site.ok) throw new Error('commit failed');
    await a.changeSiteAccess(site.site.id, { access: { mode: 'members', since: Date.now() } });
    await b.cluster!.catchUp();
    expect(b.getSite('private-cluster')?.access?.mode).toBe('members');
  });

  it('keeps a device sign-in cluster-wide: started on one node, approved on another, exchanged once', async () => {
    const a = await node();
    const b = await node();
    const account = (await a.createAccount({ email: `device-${Date.now()}@example.com`, plan: 'free' }))!;
    const deviceHash = hashToken(`pld_cluster_${Date.now()}`);
    const code = 'BCDFGHJK';
    const grant = {
      clientId: 'plinth-cli',
      clientName: 'Plinth CLI',
      deviceName: 'cluster laptop',
      scope: 'sites',
      network: '192.0.2.0/24',
      createdAt: Date.now(),
      expiresAt: Date.now() + 600_000,
      intervalS: 5,
    };
    expect(await a.createDeviceGrant(deviceHash, code, grant)).toBe(true);
    await b.cluster!.catchUp();
    // The user code is taken on every node, and leads to the sign-in there.
    expect(await b.createDeviceGrant(hashToken('pld_other'), code, grant)).toBe(false);
    expect(b.findDeviceGrant(code)?.deviceName).toBe('cluster laptop');
    expect(await b.decideDeviceGrant(code, account.id, 'approved')).toMatchObject({ ok: true });
    const polls = await Promise.all([a, b, a, b].map((store, i) => store.pollDeviceGrant(deviceHash, 'plinth-cli', hashToken(`pl_cluster_${i}`))));
    expect(polls.filter((poll) => poll.outcome === 'issued')).toHaveLength(1);
    expect(polls.filter((poll) => poll.outcome === 'used')).toHaveLength(3);
    await a.cluster!.catchUp();
    expect(a.listApiTokens(account.id).map((token) => token.name)).toEqual(['cluster laptop']);
  });

  it('counts rate caps across nodes', async () => {
    const a = await node();
    const b = await node();
    const check = [{ scope: `cluster-cap-${Date.now()}`, limit: 3, windowMs: 60_000 }];
    const results = await Promise.all([a, b, a, b, a].map((store) => store.takeRateTokens(check)));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
  });

  it('refuses a revoked token on every node once they catch up', async () => {
    const a = await node();
    const b = await node();
    const account = (await a.createAccount({ email: `revoke-${Date.now()}@example.com`, plan: 'free' }))!;
    const info = await a.addApiToken({ accountId: account.id, tokenHash: hashToken('pl_cluster'), name: 'ci' });
    await b.cluster!.catchUp();
    expect(b.findToken(hashToken('pl_cluster'))).toBeDefined();
    await a.revokeApiToken(account.id, info.id);
    await b.cluster!.catchUp();
    expect(b.findToken(hashToken('pl_cluster'))).toBeUndefined();
  });

  it('two sites on two nodes claim one domain side by side; of two activations at once, one holds it', async () => {
    const a = await node();
    const b = await node();
    await createSite(a, 'claims-one');
    await createSite(b, 'claims-two');
    await Promise.all([a.cluster!.catchUp(), b.cluster!.catchUp()]);
    const [one, two] = [a.getSite('claims-one')!.id, b.getSite('claims-two')!.id];
    const domain = 'www.two-nodes.example';
    const first = await a.addDomain({ domain, siteId: one, token: 't1', maxPerSite: 5 });
    const second = await b.addDomain({ domain, siteId: two, token: 't2', maxPerSite: 5 });
    if (!first.ok || !second.ok) throw new Error('both claims should be added');
    const [x, y] = await Promise.all([
      a.updateDomain(domain, first.record.claim, { status: 'active' }),
      b.updateDomain(domain, second.record.claim, { status: 'active' }),
    ]);
    expect([x!.status, y!.status].sort()).toEqual(['active', 'pending']);
    await Promise.all([a.cluster!.catchUp(), b.cluster!.catchUp()]);
    expect(a.getDomainHolder(domain)).toEqual(b.getDomainHolder(domain));
    expect([a.getDomainClaim(domain, one), a.getDomainClaim(domain, two)].filter((claim) => claim?.status === 'active')).toHaveLength(1);
  });

  it('moves domain claims stored in the former layout through PostgreSQL once, for every node', async () => {
    const a = await node();
    await createSite(a, 'legacy-domains');
    const siteId = a.getSite('legacy-domains')!.id;
    const domain = 'www.legacy-cluster.example';
    const record = { domain, siteId, claim: 'dom_legacy', status: 'active', token: 'plinth-verify=x', primary: false, createdAt: 1, verifiedAt: 2 };
    // As the previous version stored them: one record per domain, keyed by the domain.
    const client = new pgClient.Client({ connectionString: cluster.pg.url });
    await client.connect();
    try {
      await client.query("INSERT INTO plinth_records (db, key, value) VALUES ('domains', $1, $2), ('siteDomains', $3, '1')", [
        JSON.stringify(domain),
        JSON.stringify(record),
        JSON.stringify([siteId, domain]),
      ]);
      // A node built from a snapshot now finds them in the former layout, and moves them.
      const b = await node();
      expect(b.getDomain(domain)).toEqual(record);
      expect(b.listDomains(siteId)).toEqual([record]);
      // A node that never saw the rows gets the moved claim from the change log.
      await a.cluster!.catchUp();
      expect(a.getDomain(domain)).toEqual(record);
      const rows = await client.query<{ db: string; key: string }>(
        "SELECT db, key FROM plinth_records WHERE db IN ('domains', 'domainClaims') AND key LIKE '%legacy-cluster%'",
      );
      expect(rows.rows).toEqual([{ db: 'domainClaims', key: JSON.stringify([domain, siteId]) }]);
      const c = await node();
      expect(await c.liftLegacyDomains()).toBe(0);
      expect(c.getDomainHolder(domain)).toEqual(record);
    } finally {
      await client.end();
    }
  });

  it('builds a new node from a snapshot, then follows the log', async () => {
    const a = await node();
    const revision = await createSite(a, 'before-new-node');
    const fresh = await node();
    expect(fresh.getSite('before-new-node')?.liveRevision).toBe(revision);
    const later = await createSite(a, 'after-new-node');
    await fresh.cluster!.catchUp();
    expect(fresh.getSite('after-new-node')?.liveRevision).toBe(later);
  });

  it('rebuilds a data directory that followed another cluster', async () => {
    const other = await cluster.pg.createDatabase(`other_${Date.now()}`);
    const dir = tempDir('plinth-node-');
    const first = await node(dir, other);
    await createSite(first, 'only-in-other');
    await cluster.close(first);
    const moved = await node(dir);
    expect(moved.getSite('only-in-other')).toBeUndefined();
  });

  it('prunes old changes from the log; a node that fell behind them is told, and rebuilt at its next start', async () => {
    const behind = await node();
    const dir = tempDir('plinth-node-');
    const a = await node(dir);
    await createSite(a, 'before-prune');
    await createSite(a, 'after-prune');
    // Everything committed so far is older than "now + 1 minute"; the newest change is always kept.
    expect(await a.cluster!.pruneLog(Date.now() + 60_000)).toBeGreaterThan(0);
    const told: string[] = [];
    const stop = await behind.cluster!.follow(10, () => told.push('behind'));
    try {
      expect(await waitUntil(async () => told.length > 0, 2000, 10)).toBe(true);
    } finally {
      await stop();
    }
    await expect(behind.cluster!.catchUp()).rejects.toMatchObject({ code: 'EREPLICA_BEHIND' });
    // The same data directory opened again is rebuilt from a snapshot.
    await cluster.close(behind);
    const rebuilt = await node(cluster.dirOf(behind));
    expect(rebuilt.getSite('after-prune')).toBeDefined();
    expect(rebuilt.cluster!.applied()).toBe(a.cluster!.applied());
  });

  it('rebuilds at start-up a replica that is ahead of a PostgreSQL restored to an earlier point', async () => {
    const url = await cluster.pg.createDatabase(`restored_${Date.now()}`);
    const dir = tempDir('plinth-node-');
    const a = await node(dir, url);
    await createSite(a, 'before-dump');
    const dump = join(tempDir('plinth-dump-'), 'records.dump');
    execFileSync(join(postgresBinDir()!, 'pg_dump'), ['--format=custom', `--file=${dump}`, `--dbname=${url}`]);
    await createSite(a, 'after-dump');
    await cluster.close(a);
    execFileSync(join(postgresBinDir()!, 'pg_restore'), ['--clean', '--if-exists', `--dbname=${url}`, dump]);
    // Another node writes first: its change takes the number "after-dump" had.
    const b = await node(undefined, url);
    await createSite(b, 'after-restore');
    const restarted = await node(dir, url);
    expect(restarted.getSite('before-dump')).toBeDefined();
    expect(restarted.getSite('after-dump')).toBeUndefined();
    expect(restarted.getSite('after-restore')).toBeDefined();
    expect(restarted.cluster!.applied()).toBe(b.cluster!.applied());
  });

  it('keeps reading while PostgreSQL is down, refuses writes with RECORDS_UNAVAILABLE, and writes again once it is back', async () => {
    const a = await node();
    await createSite(a, 'outage-site');
    await cluster.pg.pause();
    try {
      expect(a.getSite('outage-site')).toBeDefined();
      await expect(createSite(a, 'during-outage')).rejects.toMatchObject({ code: RECORDS_UNAVAILABLE_CODE });
      // Rate caps fall back to this node's own count.
      expect((await a.takeRateTokens([{ scope: 'outage', limit: 5, windowMs: 60_000 }])).allowed).toBe(true);
    } finally {
      await cluster.pg.resume();
    }
    expect(await createSite(a, 'after-outage')).toMatch(/^rev_/);
  });
});
