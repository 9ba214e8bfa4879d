import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, anonymousSite, type TestAccount } from '../api/api-helpers.js';
import { useAppServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { connectClient, structured, textOf } from './mcp-helpers.js';

/**
 * Retries and claim links as an agent meets them through a real MCP client (the SDK's, over
 * streamable HTTP) against the real server: the answer to a deploy is lost with its connection,
 * so the retry comes on a new session; a deploy in parts has its last part sent twice; a lost
 * claim link is replaced with new_claim_link, and only the new one claims the site.
 */

const server = useAppServer();
let owner: TestAccount;
let mcpUrl: string;
const clients: Client[] = [];

beforeAll(async () => {
  mcpUrl = `http://mcp.localhost:${server.port}/mcp`;
  owner = await accountWithToken(server.store, 'builder');
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
});

async function connect(token: string): Promise<Client> {
  const client = await connectClient(mcpUrl, token);
  clients.push(client);
  return client;
}

const page = (title: string): string => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;

interface Published {
  site: { name: string; url: string };
  revision: { id: string; number: number };
}

const siteCount = async (client: Client): Promise<number> =>
  structured<{ sites: unknown[] }>(await client.callTool({ name: 'list_sites', arguments: {} })).sites.length;

describe('deploy_site with idempotency_key', () => {
  it('answers the retry on a new session with the first answer, and publishes once', async () => {
    const args = { idempotency_key: randomUUID(), files: [{ path: 'index.html', content: page('Sent once') }] };
    const first = await connect(owner.token);
    const published = structured<Published>(await first.callTool({ name: 'deploy_site', arguments: args }));
    const sites = await siteCount(first);
    // The connection went with the answer: the agent reconnects and sends the very same call.
    await first.close();
    const second = await connect(owner.token);
    const again = structured<Published>(await second.callTool({ name: 'deploy_site', arguments: args }));
    expect(again).toEqual(published);
    expect(await siteCount(second)).toBe(sites);
    const revisions = structured<{ revisions: unknown[] }>(await second.callTool({ name: 'list_revisions', arguments: { site: published.site.name } }));
    expect(revisions.revisions).toHaveLength(1);

    // Another body under the key is refused, naming the key, and changes nothing.
    const other = await second.callTool({ name: 'deploy_site', arguments: { ...args, files: [{ path: 'index.html', content: page('Another') }] } });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/^conflict: .*idempotency key/);
    expect(await siteCount(second)).toBe(sites);
  });

  it('never hands one account the answer kept for another account under the same key', async () => {
    const args = { idempotency_key: randomUUID(), files: [{ path: 'index.html', content: page('Mine') }] };
    const mine = structured<Published>(await (await connect(owner.token)).callTool({ name: 'deploy_site', arguments: args }));
    const stranger = await accountWithToken(server.store, 'builder');
    const theirs = structured<Published>(await (await connect(stranger.token)).callTool({ name: 'deploy_site', arguments: args }));
    expect(theirs.site.name).not.toBe(mine.site.name);
    expect(theirs.revision.id).not.toBe(mine.revision.id);
  });

  it('answers a repeated last part of a deploy in parts with what it published', async () => {
    const client = await connect(owner.token);
    const files = { 'index.html': page('In parts'), 'notes.txt': 'notes\n'.repeat(100) };
    const described = Object.entries(files).map(([path, content]) => ({
      path,
      size: Buffer.byteLength(content),
      sha256: createHash('sha256').update(content).digest('hex'),
    }));
    const started = structured<{ manifest: string }>(await client.callTool({ name: 'start_deploy', arguments: { files: described } }));
    await client.callTool({ name: 'deploy_site', arguments: { manifest: started.manifest, files: [{ path: 'notes.txt', content: files['notes.txt'] }] } });
    const sites = await siteCount(client);
    const last = { manifest: started.manifest, idempotency_key: randomUUID(), files: [{ path: 'index.html', content: files['index.html'] }] };
    const published = structured<Published>(await client.callTool({ name: 'deploy_site', arguments: last }));
    expect(published.revision.number).toBe(1);
    const again = structured<Published>(await (await connect(owner.token)).callTool({ name: 'deploy_site', arguments: last }));
    expect(again).toEqual(published);
    // Without the key too: the manifest answers what it published.
    const unkeyed = structured<Published>(
      await client.callTool({ name: 'deploy_site', arguments: { manifest: started.manifest, files: [{ path: 'index.html', content: files['index.html'] }] } }),
    );
    expect(unkeyed).toMatchObject({ site: { name: published.site.name }, revision: { id: published.revision.id } });
    expect(await siteCount(client)).toBe(sites + 1);
    const kept = structured<Published>(await client.callTool({ name: 'get_deploy', arguments: { manifest: started.manifest } }));
    expect(kept).toMatchObject({ site: { name: published.site.name }, revision: { id: published.revision.id } });
  });
});

describe('new_claim_link', () => {
  it('gives the site token holder a new link; the old one stops working and the new one opens the claim page', async () => {
    const site = await anonymousSite(server.store, Date.now() + 72 * 3600_000);
    const asSite = await connect(site.siteToken);
    const link = structured<{ claim_url: string; expires_at: string }>(await asSite.callTool({ name: 'new_claim_link', arguments: { site: site.name } }));
    const token = link.claim_url.split('/claim/')[1]!;
    expect(token).toMatch(/^ct_/);
    expect(link.expires_at).toBe(new Date(server.store.getSite(site.name)!.expiresAt!).toISOString());
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${site.claimToken}` })).status).toBe(404);
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${token}` })).status).toBe(200);
    // Asked again, the link before is replaced too.
    const next = structured<{ claim_url: string }>(await asSite.callTool({ name: 'new_claim_link', arguments: { site: site.name } }));
    expect(next.claim_url).not.toBe(link.claim_url);
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${token}` })).status).toBe(404);

    // An account's token, or another site's, gets no link, and the current one keeps working.
    const owners = await (await connect(owner.token)).callTool({ name: 'new_claim_link', arguments: { site: site.name } });
    expect(owners.isError).toBe(true);
    const other = await anonymousSite(server.store, Date.now() + 72 * 3600_000);
    const others = await (await connect(other.siteToken)).callTool({ name: 'new_claim_link', arguments: { site: site.name } });
    expect(others.isError).toBe(true);
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${next.claim_url.split('/claim/')[1]}` })).status).toBe(200);
  });
});
