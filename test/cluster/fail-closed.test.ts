import { createServer, type Server, type Socket } from 'node:net';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../helpers/http.js';
import { killMain, mainEnv, startMain, type MainProcess } from '../helpers/main-process.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startS3, type TestS3 } from '../helpers/s3.js';
import { tempDir } from '../helpers/sites.js';

/**
 * A cluster node given the wrong PostgreSQL or the wrong bucket refuses to start and says which
 * is wrong and why, as an operator reads it on standard error; what it cannot use at run time it
 * logs with the cause.
 */

let postgres: TestPostgres;
let s3: TestS3;
const started: MainProcess[] = [];

beforeAll(async () => {
  [postgres, s3] = await Promise.all([startPostgres(), startS3('plinth-fail-closed')]);
}, 60_000);
afterAll(async () => {
  for (const main of started) await killMain(main);
  await postgres?.stop();
  await s3?.stop();
});

/** The start-up output of a node that must refuse to start. */
async function refusal(env: Record<string, string>): Promise<string> {
  try {
    const main = await startMain(mainEnv(tempDir('plinth-refused-'), env), { timeoutMs: 90_000 });
    started.push(main);
  } catch (err) {
    const message = (err as Error).message;
    expect(message).toMatch(/exited with 1 before listening/);
    return message;
  }
  throw new Error('the node started');
}

/** Settings of a node on the test's PostgreSQL (at `url`) and bucket. */
const nodeEnv = (url: string): Record<string, string> => ({ PLINTH_DATABASE_URL: url, ...s3.env });

/** Makes PostgreSQL ask `alice` for her password (the test server trusts everyone else). */
async function requirePassword(): Promise<string> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    await client.query("CREATE ROLE alice LOGIN PASSWORD 'right'");
    const hbaFile = (await client.query<{ hba_file: string }>('SHOW hba_file')).rows[0]!.hba_file;
    await client.query('CREATE TEMP TABLE hba (line text)');
    await client.query(
      `INSERT INTO hba VALUES ('local all all trust'), ('host all alice 127.0.0.1/32 scram-sha-256'), ('host all all 127.0.0.1/32 trust'), ('host all all ::1/128 trust')`,
    );
    await client.query(`COPY hba TO '${hbaFile.replace(/'/g, "''")}'`);
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end();
  }
  return postgres.url.replace('postgres://plinth@', 'postgres://alice:wrong@');
}

/** The id of the cluster whose records are in the database at `url`. */
async function clusterIdOf(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ value: string }>("SELECT value FROM plinth_meta WHERE key = 'cluster_id'")).rows[0]!.value;
  } finally {
    await client.end();
  }
}

/** A port that takes connections and never answers: PostgreSQL behind a firewall that drops packets. */
async function silentPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = await silentPort();
  await probe.close();
  return probe.port;
}

describe('PostgreSQL failures keep their cause', { timeout: 180_000 }, () => {
  it('names a wrong password at start-up', async () => {
    const output = await refusal(nodeEnv(await requirePassword()));
    expect(output).toContain('the user or password was refused (password authentication failed for user "alice")');
    expect(output).not.toContain('wrong');
  });

  it('names a database that does not exist', async () => {
    const output = await refusal(nodeEnv(postgres.url.replace(/\/plinth$/, '/plinht')));
    expect(output).toContain('the database does not exist (database "plinht" does not exist)');
  });

  it('names a refused connection', async () => {
    const output = await refusal(nodeEnv(`postgres://plinth@127.0.0.1:${await closedPort()}/plinth`));
    expect(output).toContain('the connection was refused (connect ECONNREFUSED 127.0.0.1:');
  });

  it('names a server that does not answer', async () => {
    const silent = await silentPort();
    try {
      const output = await refusal(nodeEnv(`postgres://plinth@127.0.0.1:${silent.port}/plinth`));
      expect(output).toContain('it did not answer in time');
    } finally {
      await silent.close();
    }
  });

  it('logs the cause of a write that failed while PostgreSQL was down', async () => {
    const url = await postgres.createDatabase('logged');
    const main = await startMain(mainEnv(tempDir('plinth-logged-'), nodeEnv(url)), { timeoutMs: 90_000 });
    started.push(main);
    await postgres.pause();
    try {
      const refused = await callApi(main.port, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>hi</h1>' }] } });
      expect(refused.status).toBe(503);
      expect(refused.json.error.details.reason).toBe('records_unavailable');
      // What the client is told stays generic; the operator's log has the cause.
      expect(refused.text).not.toContain('ECONNREFUSED');
      // An HTTP thread's log reaches the process's stdout a moment later.
      const deadline = Date.now() + 10_000;
      while (!main.output().includes('request.failed') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(main.output()).toContain('the connection was refused (connect ECONNREFUSED 127.0.0.1:');
    } finally {
      await postgres.resume();
    }
  });
});

describe('a node never runs on blobs it does not own', { timeout: 180_000 }, () => {
  it('refuses PLINTH_DATABASE_URL without a bucket', async () => {
    const output = await refusal({ PLINTH_DATABASE_URL: await postgres.createDatabase('no_bucket') });
    expect(output).toContain('PLINTH_DATABASE_URL is set without PLINTH_S3_BUCKET');
  });

  it("refuses another cluster's bucket, and a node without PLINTH_DATABASE_URL on a cluster's bucket; the bucket keeps every blob", async () => {
    const bucket = await s3.createBucket(`plinth-owned-${Date.now()}`);
    const url = await postgres.createDatabase('owner');
    const node = await startMain(mainEnv(tempDir('plinth-owner-'), { PLINTH_DATABASE_URL: url, ...bucket }), { timeoutMs: 90_000 });
    started.push(node);
    const deployed = await callApi(node.port, { method: 'POST', path: '/v1/deploy', body: { files: [{ path: 'index.html', content: '<h1>owned</h1>' }] } });
    expect(deployed.status, deployed.text).toBe(201);
    const objects = async () =>
      (await s3.client.send(new ListObjectsV2Command({ Bucket: bucket.PLINTH_S3_BUCKET, Prefix: 'blobs/' }))).Contents?.map((object) => object.Key) ?? [];
    const before = await objects();
    expect(before.length).toBeGreaterThan(0);
    const cluster = await clusterIdOf(url);

    // A second cluster (another database) on the same bucket.
    const other = await refusal({ PLINTH_DATABASE_URL: await postgres.createDatabase('other_cluster'), ...bucket });
    expect(other).toContain(`belongs to the cluster ${cluster}, not to the cluster `);
    // The node of the incident: the cluster's bucket, no database (the variable left out).
    const alone = await refusal({ ...bucket, PLINTH_SWEEP_INTERVAL_S: '1', PLINTH_BLOB_GRACE_S: '60' });
    expect(alone).toContain(`belongs to the cluster ${cluster}, not to the embedded install`);
    expect(alone).toContain("Set PLINTH_DATABASE_URL to that cluster's database");
    expect(await objects()).toEqual(before);
  });
});
