import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPostgres } from '../helpers/postgres.js';
import { accountOnEveryNode, startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi } from '../helpers/http.js';
import { createSite } from '../store/helpers.js';

/**
 * A node whose replica the log has moved past while it could not reach PostgreSQL exits with
 * code 1, its HTTP threads stopped first, so that its supervisor starts it again and it rebuilds
 * the replica. Exiting under running HTTP threads would abort Node instead of exiting.
 */

/** A TCP path to PostgreSQL that the test can cut and restore on the same port: a network partition of one node. */
interface Partition {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

async function partitionTo(url: string): Promise<Partition> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    const opened = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      opened.once('error', reject);
      opened.listen(port, '127.0.0.1', () => resolve());
    });
    port = (opened.address() as { port: number }).port;
    server = opened;
  };
  const cut = async (): Promise<void> => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise((resolve) => closing.close(resolve));
  };
  await listen();
  const proxied = new URL(url);
  proxied.port = String(port);
  return { url: proxied.toString(), cut, restore: listen, close: cut };
}

describe.skipIf(!hasPostgres())('a node whose replica fell behind the pruned log', () => {
  let cluster: TestCluster;
  let partition: Partition;

  beforeAll(async () => {
    cluster = await startCluster({ count: 1 });
    partition = await partitionTo(cluster.pg.url);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await partition?.close();
  });

  it('exits with code 1 (not an abort) once PostgreSQL is back, and starts again with a rebuilt replica', async () => {
    const owner = await accountOnEveryNode(cluster);
    // The node builds its replica through the path, then stops cleanly.
    await cluster.kill(0, 'SIGTERM');
    await cluster.start(0, { PLINTH_DATABASE_URL: partition.url, PLINTH_LOG_LEVEL: 'info' });
    await cluster.kill(0, 'SIGTERM');

    await partition.cut();
    const node = await cluster.start(0, { PLINTH_DATABASE_URL: partition.url, PLINTH_LOG_LEVEL: 'info' });
    // Meanwhile the rest of the cluster writes, and the log is pruned past everything the node has.
    await createSite(cluster.operator, 'written-while-away', { accountId: owner.account.id });
    await createSite(cluster.operator, 'written-last', { accountId: owner.account.id });
    expect(await cluster.operator.cluster!.pruneLog(Date.now() + 60_000)).toBeGreaterThan(0);
    await partition.restore();

    const exit = await Promise.race([node.exited, new Promise<undefined>((resolve) => setTimeout(resolve, 30_000))]);
    expect(exit, node.output()).toEqual({ code: 1, signal: null });
    expect(node.output()).toContain('cluster.replica_behind');
    expect(node.output()).not.toMatch(/Assertion|Aborted|core dumped/);

    // Started again, as a supervisor would, it rebuilds its replica and has what it missed.
    await cluster.start(0, { PLINTH_DATABASE_URL: partition.url });
    const site = await callApi(cluster.port(0), { path: '/v1/sites/written-while-away', token: owner.token });
    expect(site.status, site.text).toBe(200);
  }, 120_000);
});
