import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useAppServer, useTestDns } from '../helpers/fixtures.js';
import { connectClient, structured, textOf } from './mcp-helpers.js';

/** The custom-domain tools through the MCP SDK's client: the REST endpoints' operations and answers. */

let owner: TestAccount;
let client: Client;

const dns = useTestDns();
const server = useAppServer(() => ({ PLINTH_DNS_SERVERS: dns.address }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, owner.token);
});

afterAll(async () => {
  await client?.close();
});

describe('custom domain tools', () => {
  it('adds a domain with the records to create, verifies it, lists it and removes it', async () => {
    const site = await accountSite(server.store, owner);
    const domain = 'www.mcp-example.org';
    const added = structured<{ status: string; verification: { name: string; value: string }; agent_message: string }>(
      await client.callTool({ name: 'add_domain', arguments: { site: site.name, domain } }),
    );
    expect(added).toMatchObject({ status: 'pending', verification: { name: `_plinth-challenge.${domain}` } });
    expect(added.agent_message).toContain(added.verification.value);

    dns.txt.set(added.verification.name, [added.verification.value]);
    const verified = structured(await client.callTool({ name: 'verify_domain', arguments: { site: site.name, domain } }));
    expect(verified).toMatchObject({ domain, status: 'active' });

    const primary = structured(await client.callTool({ name: 'add_domain', arguments: { site: site.name, domain, primary: true } }));
    expect(primary).toMatchObject({ primary: true });
    expect(structured(await client.callTool({ name: 'list_domains', arguments: { site: site.name } }))).toMatchObject({
      domains: [{ domain, status: 'active', primary: true }],
    });
    expect(structured(await client.callTool({ name: 'remove_domain', arguments: { site: site.name, domain } }))).toEqual({ domain, removed: true });
  });

  it('answers refusals as the REST API does', async () => {
    const site = await accountSite(server.store, owner);
    const refused = await client.callTool({ name: 'add_domain', arguments: { site: site.name, domain: '192.0.2.1' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^bad_request: An IP address cannot be a custom domain/);
  });
});
