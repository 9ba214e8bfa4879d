import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { useAppServer } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';
import { connectClient, structured } from '../mcp/mcp-helpers.js';
import { accountSite, accountWithToken, anonymousSite, api, commitFiles, type TestAccount } from './api-helpers.js';

/**
 * Issue 33, "Messages and docs an agent follows literally": what the REST API and the MCP tools
 * tell an agent, taken word for word. Each answer must lead to a call that does the right thing:
 * no blind overwrite, no token it could have had, no "send JSON" for an archive, no REST address
 * on MCP, no call that lacks what it is named for.
 */

const server = useAppServer();
let owner: TestAccount;
let client: Client;

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, owner.token);
});
afterAll(async () => {
  await client?.close();
});

describe('an update without a base revision', () => {
  it('says that the live revision as base replaces what is live, and how to look first', async () => {
    const site = await accountSite(server.store, owner);
    const res = await api(server, {
      method: 'POST',
      path: `/v1/deploy?site=${site.name}`,
      token: owner.token,
      raw: tgzBytes([['index.html', '<h1>mine</h1>']]),
    });
    expect(res.status).toBe(400);
    const advice: string = res.json.agent_message;
    expect(advice).toContain('Nothing was published');
    expect(advice).toMatch(/replaced by what you send, including changes someone else published/);
    expect(advice).toContain(`GET /v1/sites/${site.name}/files lists its files`);
    expect(advice).toContain(`GET /v1/sites/${site.name}/files/<path> returns each one`);
    expect(advice).not.toMatch(/then retry\.?$/);
    expect(server.store.getSite(site.name)!.liveRevision).toBe(site.revision);
  });
});

describe('the site token of a claimed site', () => {
  it('is told that GET /v1/sites/:name with it hands over the account token once', async () => {
    const site = await anonymousSite(server.store, Date.now() + 3600_000);
    const person = await accountWithToken(server.store, 'free');
    expect((await server.store.claimSite(hashToken(site.claimToken), person.account.id)).ok).toBe(true);
    const res = await api(server, {
      method: 'POST',
      path: `/v1/deploy?site=${site.name}`,
      token: site.siteToken,
      headers: { 'x-base-revision': site.revision },
      raw: tgzBytes([['index.html', '<h1>again</h1>']]),
    });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('forbidden');
    const advice: string = res.json.agent_message;
    expect(advice).toContain(`GET /v1/sites/${site.name} with this site token`);
    expect(advice).toContain('account_token');
    expect(advice).toContain('only once');
    // What it says holds: the poll it names answers (without a token the person gave, it says so).
    const poll = await api(server, { path: `/v1/sites/${site.name}`, token: site.siteToken });
    expect(poll.status).toBe(200);
    expect(poll.json.claimed).toBe(true);
  });
});

describe('an archive sent with a JSON Content-Type', () => {
  it.each([
    ['a gzip archive', 'gzip (.tar.gz)', tgzBytes([['index.html', '<h1>x</h1>']])],
    ['a zip archive', '.zip', zipBytes([['index.html', '<h1>x</h1>']])],
  ])('%s is named, with the header to change, not "send JSON"', async (_name, kind, body) => {
    const res = await api(server, { method: 'POST', path: '/v1/deploy', raw: body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
    expect(res.json.error.message).toBe(`The body is a ${kind} archive, but its Content-Type says JSON; nothing was published.`);
    expect(res.json.agent_message).toContain('any Content-Type that is not JSON');
    expect(res.json.agent_message).not.toContain('not valid JSON');
  });

  it('text that is not JSON still gets the JSON advice', async () => {
    const res = await api(server, { method: 'POST', path: '/v1/deploy', raw: '{"files": [,]}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/^Body is not valid JSON: /);
  });
});

describe('MCP', () => {
  it('delete_site names no REST address: the approval page says whether the site was deleted', async () => {
    const site = await accountSite(server.store, owner);
    const result = structured<{ approve_url: string; agent_message: string }>(await client.callTool({ name: 'delete_site', arguments: { site: site.name } }));
    expect(result.agent_message).toContain(result.approve_url);
    expect(result.agent_message).toContain('That page shows whether it was deleted');
    expect(result.agent_message).not.toMatch(/\/v1\/|GET |DELETE /);
  });

  it("deploy_site's advice after a conflict names the calls that return file contents", async () => {
    const { tools } = await client.listTools();
    const description = tools.find((tool) => tool.name === 'deploy_site')!.description!;
    expect(description).not.toContain('get_site, merge');
    expect(description).toMatch(/conflict[^.]*: read what is live with list_files and read_file/);
    for (const named of description.match(/\b[a-z]+_[a-z_]+\b/g) ?? []) {
      if (['base_revision', 'live_revision', 'preview_url', 'blocked_secret', 'idempotency_key'].includes(named)) continue;
      expect(tools.map((tool) => tool.name)).toContain(named);
    }
  });
});

describe('a repeated rollback', () => {
  it('answers 200 "unchanged" without making a revision, as docs/sites-api.md says', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>' } });
    await commitFiles(server.store, site.name, { 'index.html': '<h1>two</h1>' });
    const rollback = () => api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: site.revision } });
    const first = await rollback();
    expect(first.status).toBe(201);
    expect(first.json.unchanged).toBeUndefined();
    expect(first.json.revision).toMatchObject({ number: 3, kind: 'rollback', rollback_of: site.revision });
    const again = await rollback();
    expect(again.status).toBe(200);
    expect(again.json.unchanged).toBe(true);
    expect(again.json.revision).toMatchObject({ id: first.json.revision.id, number: 3, live: true });
    expect(again.json.agent_message).toContain(
      'already serves the content of revision 1 (live as revision 3), so nothing was changed and no revision was made',
    );
    // To the live revision itself: the same.
    const toLive = await api(server, {
      method: 'POST',
      path: `/v1/sites/${site.name}/rollback`,
      token: owner.token,
      body: { revision: first.json.revision.id },
    });
    expect(toLive.status).toBe(200);
    expect(toLive.json.unchanged).toBe(true);
    expect(server.store.listRevisions(site.id).revisions).toHaveLength(3);
    // Other content still rolls back.
    const revisions = (await api(server, { path: `/v1/sites/${site.name}/revisions`, token: owner.token })).json.revisions as Array<{
      id: string;
      number: number;
    }>;
    const two = revisions.find((r) => r.number === 2)!;
    expect((await api(server, { method: 'POST', path: `/v1/sites/${site.name}/rollback`, token: owner.token, body: { revision: two.id } })).status).toBe(201);
  });

  it('through MCP, rollback_site answers the same without making a revision', async () => {
    const site = await accountSite(server.store, owner, [], { files: { 'index.html': '<h1>one</h1>' } });
    const result = structured<{ unchanged?: boolean; agent_message: string }>(
      await client.callTool({ name: 'rollback_site', arguments: { site: site.name, revision: site.revision } }),
    );
    expect(result.unchanged).toBe(true);
    expect(server.store.listRevisions(site.id).revisions).toHaveLength(1);
  });
});

describe('a part of a manifest cut off mid-upload', () => {
  it('counts for nothing: its contents are still missing, even those whose bytes all arrived', async () => {
    const files: Array<[string, Buffer]> = [
      ['index.html', Buffer.from('<h1>big</h1>')],
      ['a.bin', randomBytes(64 * 1024)],
      ['b.bin', randomBytes(64 * 1024)],
    ];
    const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    const made = await api(server, {
      method: 'POST',
      path: '/v1/deploy/manifest',
      token: owner.token,
      body: { files: files.map(([path, bytes]) => ({ path, size: bytes.byteLength, sha256: sha(bytes) })) },
    });
    expect(made.status, made.text).toBe(201);
    const id: string = made.json.manifest;
    const tar = tarBytes(files);
    const tasks = server.stats().ingestTasks;
    // index.html and a.bin whole, then the connection drops.
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: `/v1/deploy?manifest=${id}`,
        headers: {
          host: 'api.localhost',
          authorization: `Bearer ${owner.token}`,
          'content-type': 'application/x-tar',
          'content-length': String(tar.byteLength),
        },
        agent: false,
      });
      req.on('error', () => resolve());
      req.write(tar.subarray(0, Math.floor(tar.byteLength * 0.75)), () => {
        req.destroy();
        resolve();
      });
    });
    expect(await waitUntil(() => server.stats().unanswered === 0, 5000)).toBe(true);
    const status = await api(server, { path: `/v1/deploy/manifest/${id}`, token: owner.token });
    expect(status.status).toBe(200);
    expect(status.json.received).toBe(0);
    expect([...status.json.missing].sort()).toEqual(files.map(([, bytes]) => sha(bytes)).sort());
    expect(server.stats().ingestTasks).toBe(tasks);
  });
});
