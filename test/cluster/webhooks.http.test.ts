import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../api/api-helpers.js';
import { accountOnEveryNode, startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Webhooks in a cluster (docs/webhooks.md "In a cluster"): events recorded on either node are
 * each delivered once, from the queue in PostgreSQL; a node killed in the middle of a delivery
 * leaves it to the other, which sends it again with the same webhook-id once the hold runs out.
 */

let cluster: TestCluster;
let owner: TestAccount;
let receiver: Server;
let receiverUrl: string;
/** Every request the receiver got, by webhook-id, and whether it was answered 2xx. */
const requests: Array<{ id: string; acknowledged: boolean }> = [];
let hangNext = false;
const hung: ServerResponse[] = [];

const api = (node: number, call: ApiCall): Promise<ApiResponse> => callApi(cluster.port(node), call);

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (hangNext) {
        hangNext = false;
        requests.push({ id, acknowledged: false });
        hung.push(res);
        return;
      }
      requests.push({ id, acknowledged: true });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  cluster = await startCluster({ count: 2, env: { PLINTH_WEBHOOK_ALLOW_LOOPBACK: '1', PLINTH_WEBHOOK_TIMEOUT_S: '2' } });
  owner = await accountOnEveryNode(cluster);
}, 120_000);

afterAll(async () => {
  for (const res of hung) res.destroy();
  await cluster?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function deployOn(node: number, name: string | undefined, content: string): Promise<{ name: string; revision: string }> {
  let base: string | undefined;
  if (name !== undefined) {
    // The other node's deploy reaches this one through the change log.
    expect(await waitUntil(async () => (await api(node, { path: `/v1/sites/${name}/revisions`, token: owner.token })).status === 200, 5000, 20)).toBe(true);
    base = (await api(node, { path: `/v1/sites/${name}`, token: owner.token })).json.live_revision.id;
  }
  const fields = name !== undefined ? { site: name, base_revision: base } : {};
  const answer = await cluster.deploy(node, { 'index.html': content }, { token: owner.token, fields });
  expect(answer.status).toBe(201);
  return { name: answer.json.site.name, revision: answer.json.revision.id };
}

describe('webhooks of a cluster', () => {
  let name: string;
  let hookId: string;

  it('delivers each event once, whichever node recorded it', async () => {
    name = (await deployOn(0, undefined, '<h1>0</h1>')).name;
    const created = await api(0, {
      method: 'POST',
      path: `/v1/sites/${name}/webhooks`,
      token: owner.token,
      body: { url: receiverUrl, events: ['deploy.published'] },
    });
    expect(created.status).toBe(201);
    hookId = created.json.id;
    // The webhook reaches node 1 through the change log before its deploys.
    expect(await waitUntil(async () => (await api(1, { path: `/v1/sites/${name}/webhooks`, token: owner.token })).json?.webhooks?.length === 1, 5000, 20)).toBe(
      true,
    );
    for (let i = 1; i <= 6; i++) await deployOn(i % 2, name, `<h1>${i}</h1>`);
    expect(await waitUntil(() => requests.length >= 6, 20_000)).toBe(true);
    // A little longer: a second delivery of any of them would show now.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const ids = requests.map((request) => request.id);
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    const listed = await api(1, { path: `/v1/sites/${name}/webhooks/${hookId}/deliveries`, token: owner.token });
    expect(listed.json.deliveries).toHaveLength(6);
    expect(listed.json.deliveries.every((delivery: { state: string; attempts: number }) => delivery.state === 'delivered' && delivery.attempts === 1)).toBe(
      true,
    );
  }, 90_000);

  it('sends a delivery again, with the same webhook-id, after the node sending it was killed', async () => {
    // Only node 0 is left to deliver; the receiver holds its attempt without answering.
    await cluster.kill(1, 'SIGKILL');
    const before = requests.length;
    hangNext = true;
    await deployOn(0, name, '<h1>killed mid-delivery</h1>');
    expect(await waitUntil(() => requests.length > before, 10_000)).toBe(true);
    const held = requests[before]!;
    expect(held.acknowledged).toBe(false);
    await cluster.kill(0, 'SIGKILL');
    // Node 1 comes back and takes the delivery up once node 0's hold (timeout + 5 s) has run out.
    await cluster.start(1);
    expect(await waitUntil(() => requests.some((request, i) => i > before && request.id === held.id && request.acknowledged), 30_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const forHeld = requests.filter((request) => request.id === held.id);
    expect(forHeld.map((request) => request.acknowledged)).toEqual([false, true]);
    // Every event of the site was acknowledged exactly once.
    const acknowledged = requests.filter((request) => request.acknowledged).map((request) => request.id);
    expect(acknowledged).toHaveLength(7);
    expect(new Set(acknowledged).size).toBe(7);
    const listed = await api(1, { path: `/v1/sites/${name}/webhooks/${hookId}/deliveries`, token: owner.token });
    expect(listed.json.deliveries[0]).toMatchObject({ id: held.id, state: 'delivered', attempts: 2, last_status: 204 });
  }, 120_000);
});
