import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { freePort } from '../helpers/edge.js';
import { callApi, request, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Custom domains in a cluster: records live in PostgreSQL like every other, so a domain verified
 * through one node is served, and certified, by every node; one removed through another node
 * stops everywhere; and a domain belongs to one site in the whole cluster.
 */

let cluster: TestCluster;
let dns: TestDns;
let owner: TestAccount;
const askPorts: number[] = [];

beforeAll(async () => {
  dns = await startTestDns();
  askPorts.push(await freePort(), await freePort());
  cluster = await startCluster({ count: 2, env: { PLINTH_DNS_SERVERS: dns.address } });
  // Each node's ask listener on a port of its own (they share a machine here).
  for (const node of [0, 1]) {
    await cluster.kill(node, 'SIGTERM');
    await cluster.start(node, { PLINTH_TLS_ASK_PORT: String(askPorts[node]) });
  }
  owner = await accountWithToken(cluster.operator, 'builder');
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await dns?.close();
});

const api = (node: number, call: ApiCall): Promise<ApiResponse> => callApi(cluster.port(node), call);
const visit = (node: number, host: string) => request({ port: cluster.port(node), host, path: '/' });
const asks = (node: number, domain: string) => request({ port: askPorts[node]!, host: '127.0.0.1', path: `/?domain=${domain}` }).then((res) => res.status);

async function deploy(node: number, html: string): Promise<string> {
  const answer = await cluster.deploy(node, { 'index.html': html }, { token: owner.token });
  expect(answer.status, answer.text).toBe(201);
  return (answer.json as { site: { name: string } }).site.name;
}

describe('custom domains across nodes', () => {
  it('a domain verified through one node is served and certified by every node, and removed everywhere', async () => {
    const site = await deploy(0, 'clustered');
    const domain = 'www.cluster-example.org';
    const added = await api(0, { method: 'POST', path: `/v1/sites/${site}/domains`, token: owner.token, body: { domain } });
    expect(added.status, added.text).toBe(201);
    const { verification } = added.json as { verification: { name: string; value: string } };
    dns.txt.set(verification.name, [verification.value]);
    expect((await api(0, { method: 'POST', path: `/v1/sites/${site}/domains/${domain}/verify`, token: owner.token })).json).toMatchObject({ status: 'active' });

    expect(await waitUntil(async () => (await visit(1, domain)).text === 'clustered', 10_000)).toBe(true);
    expect(await waitUntil(async () => (await asks(1, domain)) === 200, 10_000)).toBe(true);
    expect((await api(1, { path: `/v1/sites/${site}/domains`, token: owner.token })).json).toMatchObject({ domains: [{ domain, status: 'active' }] });

    // Another site, through the other node, cannot take it.
    const other = await deploy(1, 'other');
    const taken = await api(1, { method: 'POST', path: `/v1/sites/${other}/domains`, token: owner.token, body: { domain } });
    expect(taken.status).toBe(409);

    expect((await api(1, { method: 'DELETE', path: `/v1/sites/${site}/domains/${domain}`, token: owner.token })).status).toBe(200);
    expect(await waitUntil(async () => (await visit(0, domain)).status === 404, 10_000)).toBe(true);
    expect(await waitUntil(async () => (await asks(0, domain)) === 404, 10_000)).toBe(true);
  }, 60_000);

  it('claims of two sites through two nodes stand side by side; verified at once, exactly one gets it and the other is told', async () => {
    const first = await deploy(0, 'first claim');
    const second = await deploy(1, 'second claim');
    const domain = 'www.race-example.org';
    const values: string[] = [];
    for (const [node, site] of [
      [0, first],
      [1, second],
    ] as const) {
      const added = await api(node, { method: 'POST', path: `/v1/sites/${site}/domains`, token: owner.token, body: { domain } });
      expect(added.status, added.text).toBe(201);
      values.push((added.json as { verification: { value: string } }).verification.value);
    }
    dns.txt.set(`_plinth-challenge.${domain}`, values);
    const verified = await Promise.all([
      api(0, { method: 'POST', path: `/v1/sites/${first}/domains/${domain}/verify`, token: owner.token }),
      api(1, { method: 'POST', path: `/v1/sites/${second}/domains/${domain}/verify`, token: owner.token }),
    ]);
    const statuses = verified.map((answer) => (answer.json as { status: string }).status);
    expect([...statuses].sort()).toEqual(['active', 'taken']);
    const [winner, loser] = statuses[0] === 'active' ? [first, second] : [second, first];
    // Every node serves the winner and lists the loser's claim as taken.
    for (const node of [0, 1]) {
      expect(await waitUntil(async () => (await visit(node, domain)).text === (winner === first ? 'first claim' : 'second claim'), 10_000)).toBe(true);
      const listed = (await api(node, { path: `/v1/sites/${loser}/domains`, token: owner.token })).json as { domains: Array<{ status: string }> };
      expect(listed.domains).toMatchObject([{ status: 'taken' }]);
    }
  }, 60_000);
});
