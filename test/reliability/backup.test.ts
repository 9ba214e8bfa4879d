import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { blobLayoutOf, blobPath } from '../../src/store/blob-store.js';
import { hashToken, openStore } from '../../src/store/index.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { tempDir } from '../helpers/sites.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { recordFigures } from './figures.js';
import { generateFiles, randomSource } from './site-model.js';

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));

function plinth(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'admin', ...args], { env: { ...process.env, PLINTH_DATA_DIR: dataDir } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let mains: MainProcess[] = [];
afterEach(async () => {
  await Promise.all(mains.map((main) => killMain(main)));
  mains = [];
});

describe('plinth admin backup and restore', () => {
  it('backs up while deploys run, and the restored copy serves every site of the snapshot byte for byte', async () => {
    const random = randomSource(99);
    const live = tempDir('plinth-live-');
    const backup = join(tempDir('plinth-backup-'), 'snapshot');
    const restored = tempDir('plinth-restored-');

    const store = openStore({ dir: live });
    const account = await store.createAccount({ email: 'backup@example.com', plan: 'builder' });
    const token = `pl_${'b'.repeat(40)}`;
    await store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'backup' });
    await store.close();

    const main = await startMain(mainEnv(live, { PLINTH_THREADS: '2', PLINTH_SWEEP_INTERVAL_S: '1', PLINTH_SITES_LIMIT_BUILDER: '1000' }));
    mains.push(main);
    const sites: Array<{ name: string; base: string; token: string }> = [];
    for (let i = 0; i < 12; i++) {
      const anonymous = i % 4 === 0;
      const files = generateFiles(random, `first-${i}`, { maxFiles: 8 });
      const answer = await deployTo(main.port, { body: tgzBytes([...files]), token: anonymous ? undefined : token });
      expect(answer.status).toBe(201);
      sites.push({ name: answer.json.site.name, base: answer.json.revision.id, token: anonymous ? answer.json.site_token : token });
    }

    // Deploys keep landing, new sites too, all through the backup.
    let deploying = true;
    let deploysDuringBackup = 0;
    const deployer = (async () => {
      for (let n = 0; deploying; n++) {
        // New sites are account sites, so they may hold a large file; anonymous ones are capped at 1 MB.
        const files = generateFiles(random, `during-${n}`, { maxFiles: 8, bigFileBytes: n % 6 === 0 ? 2 * 1024 * 1024 : undefined });
        if (n % 6 === 0) {
          const answer = await deployTo(main.port, { body: tgzBytes([...files]), token });
          expect(answer.status).toBe(201);
          sites.push({ name: answer.json.site.name, base: answer.json.revision.id, token });
        } else {
          const site = sites[n % sites.length]!;
          const answer = await deployTo(main.port, {
            body: jsonDeployBody([...files], { site: site.name, base_revision: site.base }),
            contentType: 'application/json',
            token: site.token,
          });
          expect(answer.status).toBe(201);
          site.base = answer.json.revision.id;
        }
        deploysDuringBackup++;
      }
    })();

    // Deploys are under way before the backup starts, and go on after it ends.
    expect(await waitUntil(() => deploysDuringBackup >= 2, 20_000, 20)).toBe(true);
    const startedAt = deploysDuringBackup;
    const backedUp = await plinth(live, 'backup', backup);
    const deploysWhileBackingUp = deploysDuringBackup - startedAt;
    const endedAt = deploysDuringBackup;
    expect(await waitUntil(() => deploysDuringBackup >= endedAt + 2, 20_000, 20)).toBe(true);
    deploying = false;
    await deployer;
    expect(backedUp.stderr).toBe('');
    expect(backedUp.code).toBe(0);
    const report = JSON.parse(backedUp.stdout);
    expect(report).toMatchObject({ backup, format: 1, sites: expect.any(Number), blobs: expect.any(Number) });

    const restoring = await plinth(restored, 'restore', backup);
    expect(restoring.stderr).toBe('');
    expect(restoring.code).toBe(0);
    const restoreReport = JSON.parse(restoring.stdout);
    expect(restoreReport.sites).toBe(report.sites);

    // Every site of the snapshot, from a server running on the restored copy.
    const copy = await startMain(mainEnv(restored));
    mains.push(copy);
    const snapshot = openStore({ dir: backup });
    let files = 0;
    try {
      const ids = snapshot.listSiteIds();
      expect(ids.length).toBe(report.sites);
      for (const id of ids) {
        const site = snapshot.getSiteById(id)!;
        for (const file of snapshot.listFiles(site.liveRevision!)) {
          const page = await request({ port: copy.port, host: `${site.name}.sites.localhost`, path: `/${file.path}` });
          expect(page.status, `${site.name}/${file.path}`).toBe(200);
          const original = readFileSync(blobPath(join(live, 'blobs'), blobLayoutOf(join(live, 'blobs')), file.sha256));
          // Anonymous sites' pages carry the badge after the original bytes.
          if (site.plan === 'anonymous' && file.path.endsWith('.html')) expect(page.body.subarray(0, original.byteLength).equals(original)).toBe(true);
          else expect(page.body.equals(original), `${site.name}/${file.path}`).toBe(true);
          files++;
        }
      }
    } finally {
      await snapshot.close();
    }
    expect(files).toBeGreaterThan(50);
    expect(deploysWhileBackingUp).toBeGreaterThan(0);
    await Promise.all(mains.map((main) => killMain(main)));
    mains = [];
    for (const dir of [live, restored, join(backup, '..')]) rmSync(dir, { recursive: true, force: true });
    recordFigures('backup', { backup: report, restore: restoreReport, filesCompared: files, deploysWhileBackingUp, sitesAtEnd: sites.length });
  }, 120_000);

  it('refuses a folder that is not empty, and a backup that never finished', async () => {
    const live = tempDir('plinth-live-');
    openStore({ dir: live }).close();
    const full = tempDir('plinth-full-');
    writeFileSync(join(full, 'something'), 'x');
    const refused = await plinth(live, 'backup', full);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not empty');

    const unfinished = tempDir('plinth-unfinished-');
    mkdirSync(join(unfinished, 'meta'));
    const empty = tempDir('plinth-empty-');
    const incomplete = await plinth(empty, 'restore', unfinished);
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toContain('not a complete backup');

    const usage = await plinth(live, 'backup');
    expect(usage.code).toBe(2);
  });

  it('keeps garbage collection from deleting blobs while a backup holds the store', async () => {
    const dir = tempDir('plinth-pin-');
    const store = openStore({ dir });
    try {
      const orphan = await store.blobs.putFile(Buffer.from('nobody references me'), 'text/plain', { compress: false });
      const old = (Date.now() - 7200_000) / 1000;
      utimesSync(store.blobs.pathOf(orphan.sha256), old, old);
      const release = store.blobs.pin();
      expect(store.blobs.isPinned()).toBe(true);
      expect(await store.collectGarbage(3600_000)).toBe(0);
      release();
      expect(store.blobs.isPinned()).toBe(false);
      expect(await store.collectGarbage(3600_000)).toBe(1);
      // A pin left by a process that died holds nothing.
      writeFileSync(join(dir, 'blobs', 'pins', '999999999-dead'), '');
      expect(store.blobs.isPinned()).toBe(false);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
