import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi, request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { tempDir } from '../helpers/sites.js';

/**
 * deploy/backup-cluster.sh and deploy/restore-cluster.sh, run as an operator runs them with the
 * nodes' settings file: a backup taken while the nodes serve and take deploys, then PostgreSQL's
 * database and the bucket emptied and the nodes' disks replaced, then the restore: every site is
 * served again, by new nodes, with the same bytes, and the same token works. The backup waits for
 * a bucket garbage collection in progress; the restore refuses while a node is connected, and a
 * damaged backup, before it changes anything. Real PostgreSQL (pg_dump, pg_restore) and s3rver.
 */

const BACKUP = fileURLToPath(new URL('../../deploy/backup-cluster.sh', import.meta.url));
const RESTORE = fileURLToPath(new URL('../../deploy/restore-cluster.sh', import.meta.url));
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

let cluster: TestCluster;
let owner: TestAccount;
let settings: string;
/** Site → path → sha256 of what it serves. */
const served = new Map<string, Map<string, string>>();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The keys of the packed objects the cluster's database records. */
async function packedKeys(): Promise<string[]> {
  const client = new pg.Client({ connectionString: cluster.pg.url });
  await client.connect();
  try {
    return (await client.query<{ key: string }>('SELECT key FROM plinth_packed_objects')).rows.map((row) => row.key);
  } finally {
    await client.end();
  }
}

/** Runs a shipped script with a clean environment (only PATH), as cron would. */
function script(path: string, args: string[], onStart?: (child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('sh', [path, ...args], { env: { PATH: process.env.PATH! }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    onStart?.(child);
  });
}

const visit = (node: number, site: string, path: string) => request({ port: cluster.port(node), host: `${site}.sites.localhost`, path });

async function deploySite(node: number, files: Array<{ path: string; bytes: Buffer }>): Promise<string> {
  const created = await cluster.deploy(node, Object.fromEntries(files.map((file) => [file.path, file.bytes])), { token: owner.token });
  expect(created.status, created.text).toBe(201);
  const name = created.json.site.name as string;
  served.set(name, new Map(files.map((file) => [`/${file.path}`, sha256(file.bytes)])));
  return name;
}

/** Every recorded file of every site, as node `node` serves it. */
async function expectEverySite(node: number): Promise<void> {
  for (const [site, files] of served) {
    for (const [path, hash] of files) {
      const answer = await visit(node, site, path);
      expect(answer.status, `${site}${path} on node ${node}`).toBe(200);
      expect(sha256(answer.body), `${site}${path} on node ${node}`).toBe(hash);
    }
  }
}

beforeAll(async () => {
  // The nodes pack small files: the backup must give back both the packs and where each file is in them.
  cluster = await startCluster({ count: 2, env: { PLINTH_BUCKET_PACK_MAX_BYTES: '1048576' } });
  owner = await accountWithToken(cluster.operator, 'builder');
  expect(await waitUntil(async () => (await callApi(cluster.port(1), { path: '/v1/me', token: owner.token })).status === 200, 5000, 50)).toBe(true);
  // The nodes' settings file, as /etc/plinth/plinth.env holds them.
  const env = cluster.env(0);
  settings = join(tempDir('plinth-settings-'), 'plinth.env');
  writeFileSync(
    settings,
    [
      '# The cluster of this test',
      ...Object.entries(env).map(([key, value]) => (key === 'PLINTH_DATABASE_URL' ? `${key}="${value}"` : `${key}=${value}`)),
      '',
    ].join('\n'),
  );
  for (let i = 0; i < 4; i++) {
    await deploySite(i % 2, [
      { path: 'index.html', bytes: Buffer.from(`<h1>Site ${i}</h1>\n`) },
      { path: 'css/style.css', bytes: Buffer.from(`body { color: #${i}${i}${i}; }\n`.repeat(400)) },
      { path: 'photo.bin', bytes: randomBytes(64 * 1024 + i) },
    ]);
  }
  // Each deploy's three files went up packed before its answer; the stylesheet's variants are made
  // after it and go up a moment later, packed together.
  expect(await waitUntil(async () => (await packedKeys()).filter((key) => key.endsWith('.br')).length === 4, 20_000, 200)).toBe(true);
  expect((await packedKeys()).length).toBeGreaterThanOrEqual(12);
  for (const node of [0, 1]) {
    expect(await waitUntil(async () => (await visit(node, [...served.keys()].at(-1)!, '/')).status === 200, 5000, 50)).toBe(true);
    await expectEverySite(node);
  }
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('backing up and restoring a cluster with the shipped scripts', () => {
  const backups = tempDir('plinth-backups-');
  const backup = join(backups, 'first');

  it('backs up the records and every object of the bucket while the nodes serve and take deploys', async () => {
    const during = deploySite(0, [{ path: 'index.html', bytes: Buffer.from('<h1>During the backup</h1>\n') }]);
    const run = await script(BACKUP, ['--settings', settings, backup]);
    await during;
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { objects: number; blobsChecked: number; schemaVersion: number };
    expect(report.schemaVersion).toBe(5);
    // Packed blobs and variants are checked in their packs' copies.
    expect(report.blobsChecked).toBeGreaterThan(8);
    const manifest = JSON.parse(readFileSync(join(backup, 'backup.json'), 'utf8')) as { objects: Array<{ key: string }> };
    expect(manifest.objects.some((object) => object.key.startsWith('packs/'))).toBe(true);
    expect(existsSync(join(backup, 'records.pgdump'))).toBe(true);
    // Every record is in it: readable by its owner alone.
    expect(statSync(backup).mode & 0o777).toBe(0o700);
    // The site deployed during the backup may or may not be in it: it is not checked after the restore.
    served.delete([...served.keys()].at(-1)!);
  }, 120_000);

  it("waits while a node collects the bucket's garbage, and goes on when it is done", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const collecting = cluster.operator.cluster!.alone('bucket-gc', () => held);
    const target = join(backups, 'second');
    let stderr = '';
    const run = script(BACKUP, ['--settings', settings, '--keep', '1', target], (child) =>
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString())),
    );
    expect(await waitUntil(() => stderr.includes('waiting for it to finish'), 30_000, 50), stderr).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(existsSync(join(target, 'records.pgdump'))).toBe(false);
    release();
    await collecting;
    const done = await run;
    expect(done.code, done.stderr).toBe(0);
    expect(existsSync(join(target, 'backup.json'))).toBe(true);
    // --keep 1: the first backup, older, is gone; the new one stays.
    expect(readdirSync(backups)).toEqual(['second']);
    cpSync(target, backup, { recursive: true });
  }, 120_000);

  it('refuses a damaged backup, before it changes anything', async () => {
    const damaged = join(tempDir('plinth-damaged-'), 'copy');
    cpSync(backup, damaged, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(damaged, 'backup.json'), 'utf8')) as { objects: Array<{ key: string }> };
    const blob = join(damaged, 'bucket', manifest.objects.find((object) => object.key.startsWith('blobs/') || object.key.startsWith('packs/'))!.key);
    const bytes = readFileSync(blob);
    bytes[0] = bytes[0]! ^ 0xff;
    writeFileSync(blob, bytes);
    const run = await script(RESTORE, ['--settings', settings, damaged]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is damaged');
    expect(run.stderr).toContain('nothing was restored');
  }, 60_000);

  it('refuses to restore while a node is connected to the database', async () => {
    const run = await script(RESTORE, ['--settings', settings, backup]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/other connection\(s\) to the database .*stop every node/);
    await expectEverySite(0);
  }, 60_000);

  it('restores into an emptied database and bucket: new nodes serve every site with the same bytes, and the token works', async () => {
    await cluster.kill(0, 'SIGTERM');
    await cluster.kill(1, 'SIGTERM');
    await cluster.operator.close();
    // The disaster: the database, the bucket's objects and the nodes' disks are gone.
    const admin = new pg.Client({ connectionString: cluster.pg.url.replace(/\/plinth$/, '/postgres') });
    await admin.connect();
    await admin.query('DROP DATABASE plinth WITH (FORCE)');
    await admin.query('CREATE DATABASE plinth');
    await admin.end();
    const bucket = cluster.s3.bucket;
    const listed = await cluster.s3.client.send(new ListObjectsV2Command({ Bucket: bucket }));
    for (const object of listed.Contents ?? []) await cluster.s3.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key! }));
    expect((await cluster.s3.list()).length).toBe(0);

    const run = await script(RESTORE, ['--settings', settings, backup]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { objects: number; objectsUploaded: number };
    expect(report.objectsUploaded).toBe(report.objects);

    for (const node of [0, 1]) await cluster.start(node, { PLINTH_DATA_DIR: tempDir(`plinth-node-restored-${node}-`) });
    for (const node of [0, 1]) await expectEverySite(node);
    expect((await callApi(cluster.port(1), { path: '/v1/me', token: owner.token })).status).toBe(200);
    // The cluster takes writes again, numbered after the restored change log.
    await deploySite(1, [{ path: 'index.html', bytes: Buffer.from('<h1>After the restore</h1>\n') }]);
    expect(await waitUntil(async () => (await visit(0, [...served.keys()].at(-1)!, '/')).status === 200, 5000, 50)).toBe(true);
  }, 180_000);
});
