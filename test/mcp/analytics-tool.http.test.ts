import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, api, type TestAccount } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { connectClient, structured, textOf } from './mcp-helpers.js';

/** get_site_analytics through the MCP SDK's client: the REST endpoint's operation and answer. */

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
let owner: TestAccount;
let client: Client;

const server = useAppServer({ PLINTH_ANALYTICS_FLUSH_MS: '100' });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, owner.token);
});

afterAll(async () => {
  await client?.close();
});

describe('get_site_analytics', () => {
  it('answers what REST answers, once the visits are counted', async () => {
    const site = await accountSite(server.store, owner);
    await request({
      port: server.port,
      host: `${site.name}.sites.localhost`,
      path: '/',
      headers: { 'user-agent': FIREFOX, referer: 'https://agents.example/' },
    });
    let answer: any;
    expect(
      await waitUntil(
        async () => {
          answer = structured(await client.callTool({ name: 'get_site_analytics', arguments: { site: site.name } }));
          return answer.totals.page_views === 1;
        },
        10_000,
        100,
      ),
    ).toBe(true);
    expect(answer.totals).toMatchObject({ page_views: 1, visitors: 1, pages: [{ path: '/', count: 1 }], referrers: [{ host: 'agents.example', count: 1 }] });
    expect(answer).toEqual((await api(server, { path: `/v1/sites/${site.name}/analytics`, token: owner.token })).json);
  });

  it('refuses a range that is not one, in the SPEC error words', async () => {
    const site = await accountSite(server.store, owner);
    const refused = await client.callTool({ name: 'get_site_analytics', arguments: { site: site.name, from: '2026-11-20', to: '2026-11-01' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^bad_request: /);
  });
});
