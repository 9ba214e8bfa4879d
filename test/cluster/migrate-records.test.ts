import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStore, copyRecordsToCluster, hashToken, openStore } from '../../src/store/index.js';
import { accountSite, accountWithToken } from '../api/api-helpers.js';
import { killMain, mainEnv, startMain } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/sites.js';

/** The records of an embedded install move into an empty cluster whole, or not at all. */

let pg: TestPostgres;

beforeAll(async () => {
  pg = await startPostgres();
}, 30_000);
afterAll(async () => {
  await pg?.stop();
});

async function embeddedInstall() {
  const dir = tempDir('plinth-embedded-');
  const store = openStore({ dir });
  const owner = await accountWithToken(store, 'builder');
  const editor = await accountWithToken(store, 'free');
  const site = await accountSite(store, owner, [[editor, 'editor']]);
  await store.close();
  return { dir, owner, editor, site };
}

describe('copying an embedded install into a cluster', () => {
  it('copies every record, and a new node of the cluster knows the sites, files, accounts, tokens and members', async () => {
    const { dir, owner, editor, site } = await embeddedInstall();
    const url = await pg.createDatabase(`migrate_${Date.now()}`);
    const report = await copyRecordsToCluster(dir, url);
    expect(report.records).toBeGreaterThan(10);
    expect(report.digest.sites.records).toBe(1);

    const node = await connectStore({ dir: tempDir('plinth-node-'), databaseUrl: url, bootstrap: true });
    try {
      expect(node.getSite(site.name)?.liveRevision).toBe(site.revision);
      expect(node.getFile(site.revision, 'index.html')).toBeDefined();
      expect(node.findToken(hashToken(owner.token))?.accountId).toBe(owner.account.id);
      expect(node.listMembers(site.id).find((member) => member.accountId === editor.account.id)?.role).toBe('editor');
      // Writes go on from where the embedded install stopped.
      await node.setAccountPlan(editor.account.id, 'builder');
      expect(node.getAccount(editor.account.id)?.plan).toBe('builder');
    } finally {
      await node.close();
    }
  });

  it('refuses a cluster that already holds records, and changes nothing', async () => {
    const first = await embeddedInstall();
    const second = await embeddedInstall();
    const url = await pg.createDatabase(`migrate_twice_${Date.now()}`);
    await copyRecordsToCluster(first.dir, url);
    await expect(copyRecordsToCluster(second.dir, url)).rejects.toThrow(/already holds records/);
    const node = await connectStore({ dir: tempDir('plinth-node-'), databaseUrl: url, bootstrap: true });
    try {
      expect(node.getSite(first.site.name)).toBeDefined();
      expect(node.getSite(second.site.name)).toBeUndefined();
    } finally {
      await node.close();
    }
  });

  it('refuses a data directory another process has open (a running server)', async () => {
    const { dir } = await embeddedInstall();
    const url = await pg.createDatabase(`migrate_busy_${Date.now()}`);
    const server = await startMain(mainEnv(dir));
    try {
      await expect(copyRecordsToCluster(dir, url)).rejects.toThrow(/Stop the server first/);
    } finally {
      await killMain(server);
    }
  });

  it('refuses a directory that is not a Plinth data directory, or is a node replica', async () => {
    await expect(copyRecordsToCluster(tempDir('plinth-empty-'), pg.url)).rejects.toThrow(/no Plinth data directory/);
    const replicaDir = tempDir('plinth-node-');
    const node = await connectStore({ dir: replicaDir, databaseUrl: pg.url, bootstrap: true });
    await node.close();
    await expect(copyRecordsToCluster(replicaDir, pg.url)).rejects.toThrow(/replica/);
  });
});
