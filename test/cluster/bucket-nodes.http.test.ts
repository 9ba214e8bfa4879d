import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStore, type Store } from '../../src/store/index.js';
import { accountWithToken } from '../api/api-helpers.js';
import { callApi, request } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { waitUntil } from '../helpers/proc-stats.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';

/**
 * Two Plinth processes with their own data directories, one PostgreSQL and one bucket (s3rver): a
 * file deployed through one node is served by the other, which never had it, from the bucket.
 */

let pg: TestPostgres;
let s3: TestS3;
let operator: Store;
const nodes: Array<{ dir: string; main?: MainProcess }> = [];

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  pg = await startPostgres();
  s3 = await startS3('plinth-cluster');
  for (let i = 0; i < 2; i++) {
    const dir = tempDir(`plinth-bucket-node-${i}-`);
    nodes.push({ dir, main: await startMain(mainEnv(dir, { PLINTH_DATABASE_URL: pg.url, ...s3.env })) });
  }
  operator = await connectStore({ dir: tempDir('plinth-operator-'), databaseUrl: pg.url, bootstrap: true });
}, 60_000);

afterAll(async () => {
  for (const node of nodes) await killMain(node.main);
  await operator?.close();
  await pg?.stop();
  await s3?.stop();
});

describe('two nodes sharing a bucket', () => {
  it('serves on one node what was deployed through the other', async () => {
    const owner = await accountWithToken(operator, 'builder');
    const photo = randomBytes(200 * 1024);
    const port = (i: number): number => nodes[i]!.main!.port;
    expect(await waitUntil(async () => (await callApi(port(0), { path: '/v1/me', token: owner.token })).status === 200, 2000, 20)).toBe(true);
    const created = await callApi(port(0), {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: {
        files: [
          { path: 'index.html', content: '<h1>from node 0</h1>' },
          { path: 'photo.bin', content: photo.toString('base64'), encoding: 'base64' },
        ],
      },
    });
    expect(created.status, created.text).toBe(201);
    const name = created.json.site.name as string;

    const onNode1 = (path: string) => request({ port: port(1), host: `${name}.sites.localhost`, path });
    expect(await waitUntil(async () => (await onNode1('/')).status === 200, 2000, 20)).toBe(true);
    const cachedOn1 = join(nodes[1]!.dir, 'blobs', sha256(photo).slice(0, 2), sha256(photo).slice(2, 4), sha256(photo));
    expect(existsSync(cachedOn1)).toBe(false);
    const served = await onNode1('/photo.bin');
    expect(served.status).toBe(200);
    expect(sha256(served.body)).toBe(sha256(photo));
    expect(existsSync(cachedOn1)).toBe(true);
  });
});
