import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { deployTo, jsonDeployBody } from '../helpers/deploy-client.js';
import { useTestServer } from '../helpers/fixtures.js';
import { connectClient, structured } from '../mcp/mcp-helpers.js';
import { accountWithToken, api, type TestAccount } from './api-helpers.js';

/** The audit log (docs/audit-log.md): changes by different members, then the log read back. */

let clock = Date.now();
const server = useTestServer({}, { now: () => clock });

let owner: TestAccount;
let editor: TestAccount;
let viewer: TestAccount;
let outsider: TestAccount;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const events = async (name: string, token: string, query = '') => api(server, { path: `/v1/sites/${name}/events${query}`, token });
const kinds = (list: Array<{ kind: string }>) => list.map((event) => event.kind);

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
  editor = await accountWithToken(server.store, 'builder');
  viewer = await accountWithToken(server.store, 'builder');
  outsider = await accountWithToken(server.store, 'builder');
});

describe('a site changed by several members', () => {
  let name: string;

  beforeAll(async () => {
    const created = await deployTo(server.port, {
      token: owner.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>one</h1>']]),
    });
    expect(created.status).toBe(201);
    name = created.json.site.name;
    const id = server.store.getSite(name)!.id;
    await server.store.setMember(id, editor.account.id, 'editor');
    await server.store.setMember(id, viewer.account.id, 'viewer');
    clock += 1000;

    const second = await deployTo(server.port, {
      token: editor.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>two</h1>']], { site: name, base_revision: created.json.revision.id }),
    });
    expect(second.status).toBe(201);
    clock += 1000;
    // A stale base: refused, and the refusal is in the log too.
    const stale = await deployTo(server.port, {
      token: editor.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>three</h1>']], { site: name, base_revision: created.json.revision.id }),
    });
    expect(stale.status).toBe(409);
    clock += 1000;
    const rolled = await api(server, { method: 'POST', path: `/v1/sites/${name}/rollback`, token: editor.token, body: { revision: created.json.revision.id } });
    expect(rolled.status).toBe(201);
    clock += 1000;
    const access = await api(server, {
      method: 'PUT',
      path: `/v1/sites/${name}/access`,
      token: owner.token,
      body: { mode: 'password', password: 'correct horse battery' },
    });
    expect(access.status).toBe(200);
    clock += 1000;
    const invited = await api(server, {
      method: 'POST',
      path: `/v1/sites/${name}/members`,
      token: owner.token,
      body: { email: 'new.person@example.com', role: 'viewer' },
    });
    expect(invited.status).toBe(201);
    clock += 1000;
    const first = await api(server, { method: 'DELETE', path: `/v1/sites/${name}/members/${encodeURIComponent(viewer.account.email)}`, token: owner.token });
    const removed = await api(server, {
      method: 'DELETE',
      path: `/v1/sites/${name}/members/${encodeURIComponent(viewer.account.email)}?confirm=${first.json.confirm_token}`,
      token: owner.token,
    });
    expect(removed.status).toBe(200);
  });

  it('lists every change newest first, each with who and when', async () => {
    const answer = await events(name, editor.token);
    expect(answer.status).toBe(200);
    expect(kinds(answer.json.events)).toEqual([
      'member.removed',
      'member.invited',
      'access.changed',
      'site.rolled_back',
      'deploy.failed',
      'deploy.published',
      'deploy.published',
    ]);
    const [removed, invited, access, rolledBack, failed, second, created] = answer.json.events;
    for (const event of answer.json.events) {
      expect(event.at).toMatch(ISO);
      expect(event.site).toBe(name);
    }
    expect(removed).toMatchObject({ actor: owner.account.email, details: { email: viewer.account.email, role: 'viewer' } });
    expect(invited).toMatchObject({ actor: owner.account.email, details: { email: 'new.person@example.com', role: 'viewer' } });
    // The mode, never the password.
    expect(access).toEqual({ kind: 'access.changed', at: access.at, actor: owner.account.email, site: name, details: { mode: 'password' } });
    expect(JSON.stringify(answer.json)).not.toContain('correct horse');
    expect(rolledBack).toMatchObject({ actor: editor.account.email, details: { number: 3, rollback_of_number: 1 } });
    expect(failed).toMatchObject({ actor: editor.account.email, details: { code: 'conflict' } });
    expect(second).toMatchObject({ actor: editor.account.email, details: { number: 2 } });
    expect(created).toMatchObject({ actor: owner.account.email, details: { number: 1, created: true } });
    expect(Date.parse(removed.at)).toBeGreaterThan(Date.parse(created.at));
  });

  it('pages with a cursor, without repeating or skipping an event', async () => {
    const all = kinds((await events(name, owner.token)).json.events);
    const seen: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 10; pages++) {
      const answer = await events(name, owner.token, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(answer.status).toBe(200);
      seen.push(...kinds(answer.json.events));
      if (answer.json.next_cursor === null) break;
      cursor = answer.json.next_cursor;
    }
    expect(seen).toEqual(all);
    expect((await events(name, owner.token, '?cursor=bm90LW91cnM')).status).toBe(400);
  });

  it('is read by members only: someone removed or outside gets 404', async () => {
    expect((await events(name, viewer.token)).status).toBe(404);
    expect((await events(name, outsider.token)).status).toBe(404);
    expect((await api(server, { path: `/v1/sites/${name}/events` })).status).toBe(401);
  });

  it('is listed by the MCP tool list_site_events as by REST', async () => {
    const client = await connectClient(`http://mcp.localhost:${server.port}/mcp`, editor.token);
    try {
      const listed = structured<{ events: Array<{ kind: string }> }>(await client.callTool({ name: 'list_site_events', arguments: { site: name, limit: 2 } }));
      expect(kinds(listed.events)).toEqual(['member.removed', 'member.invited']);
    } finally {
      await client.close();
    }
  });

  it('shows each account the changes it made, in /v1/me/events', async () => {
    const mine = await api(server, { path: '/v1/me/events', token: editor.token });
    expect(mine.status).toBe(200);
    expect(kinds(mine.json.events)).toEqual(['site.rolled_back', 'deploy.failed', 'deploy.published']);
    expect(mine.json.events.every((event: { actor: string }) => event.actor === editor.account.email)).toBe(true);
    // The removed member sees their removal, made by the owner.
    const removed = await api(server, { path: '/v1/me/events', token: viewer.token });
    expect(kinds(removed.json.events)).toEqual(['member.removed']);
  });
});

describe('changes without an account', () => {
  it('records an anonymous deploy with its network, and the site token as the actor of later changes', async () => {
    const created = await deployTo(server.port, { contentType: 'application/json', body: jsonDeployBody([['index.html', '<h1>anon</h1>']]) });
    expect(created.status).toBe(201);
    const { name } = created.json.site;
    const token = created.json.site_token;
    const second = await deployTo(server.port, {
      token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>anon 2</h1>']], { site: name, base_revision: created.json.revision.id }),
    });
    expect(second.status).toBe(201);
    const answer = await events(name, token);
    expect(answer.status).toBe(200);
    expect(answer.json.events).toMatchObject([
      { kind: 'deploy.published', actor: 'site_token', details: { number: 2 } },
      { kind: 'deploy.published', actor: 'anonymous', details: { number: 1, network: '127.0.0.0/24' } },
    ]);
  });

  it('records a new claim link, which stops the old one, with the site token as its actor (never the link)', async () => {
    const created = await deployTo(server.port, { contentType: 'application/json', body: jsonDeployBody([['index.html', '<h1>anon</h1>']]) });
    expect(created.status).toBe(201);
    const { name } = created.json.site;
    const token = created.json.site_token;
    const renewed = await api(server, { method: 'POST', path: `/v1/sites/${name}/claim-link`, token });
    expect(renewed.status).toBe(201);
    const answer = await events(name, token);
    expect(kinds(answer.json.events)).toEqual(['site.claim_link_renewed', 'deploy.published']);
    expect(answer.json.events[0]).toMatchObject({ actor: 'site_token', site: name, details: {} });
    expect(JSON.stringify(answer.json)).not.toContain('ct_');
  });
});

describe('how long events are kept', () => {
  it("drops events past the plan's history reach at the sweep, and hides them before", async () => {
    const free = await accountWithToken(server.store, 'free');
    const created = await deployTo(server.port, {
      token: free.token,
      contentType: 'application/json',
      body: jsonDeployBody([['index.html', '<h1>free</h1>']]),
    });
    const { name } = created.json.site;
    expect(kinds((await events(name, free.token)).json.events)).toEqual(['deploy.published']);
    // The Free plan reaches back 7 days.
    clock += 8 * 24 * 3600_000;
    expect((await events(name, free.token)).json.events).toEqual([]);
    const before = server.store.listEvents(`site:${server.store.getSite(name)!.id}`, { limit: 10 }).events.length;
    expect(before).toBe(1);
    await sweep({ store: server.store, log: createLogger({ level: 'silent' }), blobGraceMs: 3600_000, now: () => clock });
    expect(server.store.listEvents(`site:${server.store.getSite(name)!.id}`, { limit: 10 }).events.length).toBe(0);
  });
});
