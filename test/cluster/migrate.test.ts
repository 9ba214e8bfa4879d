import { execFile } from 'node:child_process';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployFiles } from '../helpers/deploy-client.js';
import { callApi, request } from '../helpers/http.js';
import { killMain, mainEnv, startMain } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';

/**
 * `plinth admin migrate --to-cluster`, as an operator runs it: an embedded install that served real
 * deploys moves into PostgreSQL and a bucket, and the cluster then serves the same bytes to the
 * same tokens, from the old data directory and from a new node alike. What could lose or mix data
 * is refused, with nothing changed.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/plinth.js', import.meta.url));

let pg: TestPostgres;
let s3: TestS3;

beforeAll(async () => {
  [pg, s3] = await Promise.all([startPostgres(), startS3('plinth-migrate')]);
}, 60_000);
afterAll(async () => {
  await pg?.stop();
  await s3?.stop();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function plinth(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A cluster of its own per test: an empty database and an empty bucket (a bucket belongs to one cluster). */
async function emptyCluster(): Promise<Record<string, string>> {
  const name = `migrate_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const url = await pg.createDatabase(name);
  return { PLINTH_DATABASE_URL: url, ...(await s3.createBucket(name.replace(/_/g, '-'))) };
}

/** The keys under `blobs/` of a cluster's bucket. */
async function blobKeys(cluster: Record<string, string>): Promise<string[]> {
  const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: cluster.PLINTH_S3_BUCKET, Prefix: 'blobs/' }));
  return (listed.Contents ?? []).map((object) => object.Key!);
}

/** The owner the bucket's marker names. */
async function markerOf(cluster: Record<string, string>): Promise<{ kind: string; id: string }> {
  const found = await s3.client.send(new GetObjectCommand({ Bucket: cluster.PLINTH_S3_BUCKET, Key: 'plinth/owner.json' }));
  return JSON.parse(await found.Body!.transformToString()).owner;
}

/** An embedded install that has served: an account, its token, a site with an image and a stylesheet (with variants). */
async function embeddedInstall() {
  const dir = tempDir('plinth-embedded-');
  const made = await plinth({ PLINTH_DATA_DIR: dir }, 'admin', 'account', 'create', '--email', `owner-${Date.now()}@example.com`, '--plan', 'builder');
  expect(made.code, made.stderr).toBe(0);
  const token = (await plinth({ PLINTH_DATA_DIR: dir }, 'admin', 'token', 'create', '--email', JSON.parse(made.stdout).email)).stdout.trim();
  const image = randomBytes(150 * 1024);
  const css = `body { color: #333; }\n${'.rule { margin: 0 auto; padding: 1rem; }\n'.repeat(400)}`;
  const server = await startMain(mainEnv(dir));
  try {
    const created = await deployFiles(
      server.port,
      { 'index.html': '<h1>moved</h1><link rel="stylesheet" href="/style.css">', 'style.css': css, 'image.bin': image },
      { token },
    );
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;
    // The variants are made after the answer: wait until the stylesheet is served compressed.
    const compressed = async () =>
      (await request({ port: server.port, host: `${name}.sites.localhost`, path: '/style.css', headers: { 'accept-encoding': 'br' } })).headers[
        'content-encoding'
      ] === 'br';
    for (let i = 0; i < 100 && !(await compressed()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    return { dir, token, name, image, css };
  } finally {
    await killMain(server, 'SIGTERM');
  }
}

describe('plinth admin migrate --to-cluster', () => {
  it('moves records and blobs, verified; the old data directory and a new node both serve the same bytes to the same token', async () => {
    const install = await embeddedInstall();
    const cluster = await emptyCluster();
    const moved = await plinth({ PLINTH_DATA_DIR: install.dir, ...cluster }, 'admin', 'migrate', '--to-cluster');
    expect(moved.code, moved.stderr).toBe(0);
    const report = JSON.parse(moved.stdout);
    expect(report.blobs).toMatchObject({ blobs: 3 });
    expect(report.blobs.variants).toBeGreaterThanOrEqual(2);
    expect(report.records.records).toBeGreaterThan(5);
    expect(report.records.digest.sites.records).toBe(1);
    // Every blob and variant is in the bucket, and the bucket is the cluster's.
    const keys = await blobKeys(cluster);
    expect((await markerOf(cluster)).kind).toBe('cluster');
    expect(keys).toContain(`blobs/${sha256(install.image).slice(0, 2)}/${sha256(install.image).slice(2, 4)}/${sha256(install.image)}`);

    // Without the cluster settings the old directory no longer starts: it would fork the records.
    await expect(startMain(mainEnv(install.dir))).rejects.toThrow(/belongs to a cluster/);

    const nodes = [await startMain(mainEnv(install.dir, cluster)), await startMain(mainEnv(tempDir('plinth-new-node-'), cluster))];
    try {
      for (const node of nodes) {
        expect((await callApi(node.port, { path: '/v1/me', token: install.token })).status).toBe(200);
        const image = await request({ port: node.port, host: `${install.name}.sites.localhost`, path: '/image.bin' });
        expect(sha256(image.body)).toBe(sha256(install.image));
        const css = await request({ port: node.port, host: `${install.name}.sites.localhost`, path: '/style.css', headers: { 'accept-encoding': 'gzip' } });
        expect(css.status).toBe(200);
      }
      // And the cluster takes writes where the install left off.
      const site = await callApi(nodes[1]!.port, { path: `/v1/sites/${install.name}`, token: install.token });
      const updated = await deployFiles(
        nodes[1]!.port,
        { 'index.html': '<h1>in the cluster</h1>' },
        { token: install.token, fields: { site: install.name, base_revision: site.json.live_revision.id } },
      );
      expect(updated.status, updated.text).toBe(201);
    } finally {
      for (const node of nodes) await killMain(node);
    }

    // Moving it again is refused: it belongs to the cluster now.
    const again = await plinth({ PLINTH_DATA_DIR: install.dir, ...(await emptyCluster()) }, 'admin', 'migrate', '--to-cluster');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/belongs to a cluster already/);
  }, 120_000);

  it('refuses while the server runs, into a cluster that holds records, and without cluster settings; nothing changes', async () => {
    const install = await embeddedInstall();
    const cluster = await emptyCluster();
    const server = await startMain(mainEnv(install.dir));
    try {
      const busy = await plinth({ PLINTH_DATA_DIR: install.dir, ...cluster }, 'admin', 'migrate', '--to-cluster');
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/Stop the server first/);
    } finally {
      await killMain(server, 'SIGTERM');
    }

    const other = await embeddedInstall();
    expect((await plinth({ PLINTH_DATA_DIR: other.dir, ...cluster }, 'admin', 'migrate', '--to-cluster')).code).toBe(0);
    const full = await plinth({ PLINTH_DATA_DIR: install.dir, ...cluster }, 'admin', 'migrate', '--to-cluster');
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/already holds records/);
    // The refused install is untouched: it still starts on its own and serves its site.
    const alone = await startMain(mainEnv(install.dir));
    try {
      expect((await request({ port: alone.port, host: `${install.name}.sites.localhost`, path: '/' })).text).toContain('moved');
    } finally {
      await killMain(alone, 'SIGTERM');
    }

    const unset = await plinth({ PLINTH_DATA_DIR: install.dir }, 'admin', 'migrate', '--to-cluster');
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/PLINTH_DATABASE_URL/);
    expect((await plinth({ PLINTH_DATA_DIR: install.dir, ...cluster }, 'admin', 'migrate')).code).toBe(2);
  }, 120_000);

  it('commits no record when the bucket holds other bytes under a blob of the install', async () => {
    const install = await embeddedInstall();
    const cluster = await emptyCluster();
    // Same size, other bytes: the copy keeps what the bucket has, and reading it back catches it.
    const hash = sha256(install.image);
    const key = `blobs/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}`;
    await s3.client.send(new PutObjectCommand({ Bucket: cluster.PLINTH_S3_BUCKET, Key: key, Body: randomBytes(install.image.length) }));
    const moved = await plinth({ PLINTH_DATA_DIR: install.dir, ...cluster }, 'admin', 'migrate', '--to-cluster');
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/does not hash to/);
    // No record reached PostgreSQL: a node on the cluster knows no site, and the install still starts alone.
    const node = await startMain(mainEnv(tempDir('plinth-new-node-'), cluster));
    try {
      expect((await callApi(node.port, { path: '/v1/me', token: install.token })).status).toBe(401);
    } finally {
      await killMain(node);
    }
    const alone = await startMain(mainEnv(install.dir));
    await killMain(alone, 'SIGTERM');
  }, 120_000);

  it("refuses a bucket marked as another installation's, copying nothing", async () => {
    const install = await embeddedInstall();
    const taken = await emptyCluster();
    await s3.client.send(
      new PutObjectCommand({
        Bucket: taken.PLINTH_S3_BUCKET,
        Key: 'plinth/owner.json',
        Body: JSON.stringify({ owner: { kind: 'cluster', id: 'someone-else' } }),
      }),
    );
    const moved = await plinth({ PLINTH_DATA_DIR: install.dir, ...taken }, 'admin', 'migrate', '--to-cluster');
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/belongs to the cluster someone-else/);
    expect(await blobKeys(taken)).toEqual([]);
  }, 120_000);

  it('a node refuses to start on the data directory of an install that was not moved', async () => {
    const install = await embeddedInstall();
    await expect(startMain(mainEnv(install.dir, await emptyCluster()))).rejects.toThrow(/plinth admin migrate --to-cluster/);
  }, 120_000);
});
