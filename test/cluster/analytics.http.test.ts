import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../api/api-helpers.js';
import { accountOnEveryNode, startCluster, type TestCluster } from '../helpers/cluster.js';
import { callApi, request, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * Analytics in a cluster (docs/analytics.md): each node counts what it serves and adds it to the
 * same PostgreSQL rows, so every node answers the sums, and a visitor seen by both nodes is one
 * visitor. A node stopped gracefully writes what it holds before it goes.
 */

const PUBLIC = {
  PLINTH_PUBLIC_APP_URL: 'http://app.localhost:8080',
  PLINTH_PUBLIC_API_URL: 'http://api.localhost:8080',
  PLINTH_PUBLIC_SITE_URL: 'http://{name}.sites.localhost:8080',
  // Behind the load balancer, one trusted hop names the visitor.
  PLINTH_TRUST_PROXY: '1',
  PLINTH_ANALYTICS_FLUSH_MS: '200',
};

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

let cluster: TestCluster;
let owner: TestAccount;

const api = (node: number, call: ApiCall): Promise<ApiResponse> => callApi(cluster.port(node), call);
const browse = (node: number, name: string, path: string, address: string, userAgent: string, referer = '') =>
  request({
    port: cluster.port(node),
    host: `${name}.sites.localhost:8080`,
    path,
    headers: { 'user-agent': userAgent, 'x-forwarded-for': address, ...(referer ? { referer } : {}) },
  });

beforeAll(async () => {
  cluster = await startCluster({ count: 2, env: PUBLIC });
  owner = await accountOnEveryNode(cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('analytics across nodes', () => {
  it('sums what both nodes counted, and counts a visitor seen by both once', async () => {
    const created = await cluster.deploy(0, { 'index.html': '<h1>Home</h1>', 'about.html': '<h1>About</h1>' }, { token: owner.token });
    expect(created.status).toBe(201);
    const name = created.json.site.name as string;
    expect(await waitUntil(async () => (await browse(1, name, '/', '192.0.2.200', 'Googlebot/2.1')).status === 200, 5000, 20)).toBe(true);

    // Alice on both nodes (one visitor), Bob on node 1 only; a crawler on node 0.
    expect((await browse(0, name, '/', '203.0.113.5', FIREFOX, 'https://news.example.net/')).status).toBe(200);
    expect((await browse(1, name, '/about', '203.0.113.6', FIREFOX)).status).toBe(200);
    expect((await browse(1, name, '/', '198.51.100.7', CHROME, 'https://news.example.net/b')).status).toBe(200);
    expect((await browse(0, name, '/missing', '198.51.100.7', CHROME)).status).toBe(200);
    expect((await browse(0, name, '/nothing.png', '198.51.100.7', CHROME)).status).toBe(404);

    const expected = {
      page_views: 4,
      visitors: 2,
      not_found: 1,
      pages: [
        { path: '/', count: 2 },
        { path: '/about', count: 1 },
        { path: '/missing', count: 1 },
      ],
      referrers: [{ host: 'news.example.net', count: 2 }],
    };
    for (const node of [0, 1]) {
      let totals: any;
      const counted = await waitUntil(
        async () => {
          totals = (await api(node, { path: `/v1/sites/${name}/analytics`, token: owner.token })).json?.totals;
          return totals?.page_views === 4 && totals?.not_found === 1;
        },
        15_000,
        100,
      );
      expect(counted, `node ${node}: ${JSON.stringify(totals)}`).toBe(true);
      expect(totals).toMatchObject(expected);
      // The crawler's check that the site had reached node 1 (its 404s before then name no site of that node).
      expect(totals.crawler_views).toBe(1);
    }

    // Stopped gracefully, a node writes what it holds first.
    const before = (await api(0, { path: `/v1/sites/${name}/analytics`, token: owner.token })).json.totals.page_views;
    expect((await browse(1, name, '/about', '192.0.2.1', CHROME)).status).toBe(200);
    await cluster.kill(1, 'SIGTERM');
    expect(
      await waitUntil(
        async () => (await api(0, { path: `/v1/sites/${name}/analytics`, token: owner.token })).json.totals.page_views === before + 1,
        15_000,
        100,
      ),
    ).toBe(true);
  });
});
