import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { accountSite, accountWithToken, anonymousSite, api, unique, type ApiCall, type TestAccount } from './api-helpers.js';

/**
 * Every REST endpoint × every kind of caller, with the exact status and error code (SPEC 4.3,
 * 4.4, 5, 7). Each row gets fresh sites, so rows that change things (rename, delete, rollback)
 * cannot affect each other. A site token is always used on its own site; account callers and
 * callers without a usable credential address an account site with an owner, an editor and a
 * viewer.
 */

const HOUR = 3600_000;
let clock = Date.now();
let server: TestServer;
let owner: TestAccount;
let editor: TestAccount;
let viewer: TestAccount;
let outsider: TestAccount;

const CALLERS = ['no credential', 'invalid token', 'OAuth token', 'site token before claim', 'site token after claim', 'non-member', 'viewer', 'editor', 'owner'] as const;
type CallerKind = (typeof CALLERS)[number];

/** What one row works on. */
interface World {
  /** The site the caller addresses. */
  site: string;
  liveRevision: string;
  /** A member the owner could remove (the viewer, on account sites). */
  removable: string;
  /** A pending deletion approval's token. */
  approval: string;
  token?: string;
}

async function world(caller: CallerKind): Promise<World> {
  const approval = `ap_${randomBytes(12).toString('base64url')}`;
  const team = await accountSite(server.store, owner, [
    [editor, 'editor'],
    [viewer, 'viewer'],
  ]);
  await server.store.putConfirmation(hashToken(approval), { kind: 'delete_site', siteId: team.id, requestedBy: owner.account.id, expiresAt: clock + HOUR, status: 'pending' });
  const base = { site: team.name, liveRevision: team.revision, removable: viewer.account.email, approval };
  switch (caller) {
    case 'no credential':
      return base;
    case 'invalid token':
      return { ...base, token: `pl_${randomBytes(24).toString('base64url')}` };
    case 'OAuth token':
      return { ...base, token: `pla_${randomBytes(24).toString('base64url')}` };
    case 'site token before claim':
    case 'site token after claim': {
      const anon = await anonymousSite(server.store, clock + 72 * HOUR);
      if (caller === 'site token after claim') {
        const claimer = await accountWithToken(server.store, 'free');
        expect((await server.store.claimSite(hashToken(anon.claimToken), claimer.account.id)).ok).toBe(true);
      }
      return { ...base, site: anon.name, liveRevision: anon.revision, token: anon.siteToken };
    }
    case 'non-member':
      return { ...base, token: outsider.token };
    case 'viewer':
      return { ...base, token: viewer.token };
    case 'editor':
      return { ...base, token: editor.token };
    case 'owner':
      return { ...base, token: owner.token };
  }
}

type Expected = readonly [number, number, number, number, number, number, number, number, number];

/** Endpoint, request, and the status for each caller in CALLERS order. */
const ENDPOINTS: ReadonlyArray<[string, (w: World) => ApiCall, Expected]> = [
  ['GET /v1/sites', () => ({ path: '/v1/sites' }), [401, 401, 401, 403, 403, 200, 200, 200, 200]],
  ['GET /v1/sites/:name', (w) => ({ path: `/v1/sites/${w.site}` }), [401, 401, 401, 200, 200, 404, 200, 200, 200]],
  ['GET /v1/sites/:name/files', (w) => ({ path: `/v1/sites/${w.site}/files` }), [401, 401, 401, 200, 403, 404, 200, 200, 200]],
  ['GET /v1/sites/:name/files/<path>', (w) => ({ path: `/v1/sites/${w.site}/files/index.html` }), [401, 401, 401, 200, 403, 404, 200, 200, 200]],
  ['GET /v1/sites/:name/revisions', (w) => ({ path: `/v1/sites/${w.site}/revisions` }), [401, 401, 401, 200, 403, 404, 200, 200, 200]],
  ['POST /v1/sites/:name/rollback', (w) => ({ method: 'POST', path: `/v1/sites/${w.site}/rollback`, body: { revision: w.liveRevision } }), [401, 401, 401, 201, 403, 404, 403, 201, 201]],
  ['POST /v1/sites/:name/rename', (w) => ({ method: 'POST', path: `/v1/sites/${w.site}/rename`, body: { name: unique('renamed-') } }), [401, 401, 401, 403, 403, 404, 403, 200, 200]],
  ['DELETE /v1/sites/:name', (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site}` }), [401, 401, 401, 403, 403, 404, 403, 403, 202]],
  ['GET /v1/sites/:name/members', (w) => ({ path: `/v1/sites/${w.site}/members` }), [401, 401, 401, 403, 403, 404, 200, 200, 200]],
  ['POST /v1/sites/:name/members', (w) => ({ method: 'POST', path: `/v1/sites/${w.site}/members`, body: { email: `${unique('new')}@example.com`, role: 'viewer' } }), [401, 401, 401, 403, 403, 404, 403, 403, 201]],
  ['DELETE /v1/sites/:name/members/:email', (w) => ({ method: 'DELETE', path: `/v1/sites/${w.site}/members/${encodeURIComponent(w.removable)}` }), [401, 401, 401, 403, 403, 404, 403, 403, 200]],
  ['GET /v1/approvals/:token', (w) => ({ path: `/v1/approvals/${w.approval}` }), [200, 401, 401, 200, 200, 200, 200, 200, 200]],
  ['GET /v1/me', () => ({ path: '/v1/me' }), [401, 401, 401, 403, 403, 200, 200, 200, 200]],
];

const CODES: Record<number, string> = { 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 410: 'gone' };

const rows = ENDPOINTS.flatMap(([endpoint, call, expected]) => CALLERS.map((caller, index) => [endpoint, caller, expected[index]!, call] as const));

beforeAll(async () => {
  server = await startTestServer({}, () => clock);
  [owner, editor, viewer, outsider] = await Promise.all([
    accountWithToken(server.store, 'builder'),
    accountWithToken(server.store, 'free'),
    accountWithToken(server.store, 'free'),
    accountWithToken(server.store, 'free'),
  ]);
});

afterAll(async () => {
  await server?.close();
});

describe('access matrix', () => {
  it('covers every endpoint for every kind of caller', () => {
    expect(rows).toHaveLength(ENDPOINTS.length * CALLERS.length);
  });

  it.each(rows)('%s as %s → %i', async (_endpoint, caller, status, call) => {
    const w = await world(caller);
    const res = await api(server, { ...call(w), token: w.token });
    expect(res.status, res.text).toBe(status);
    if (status >= 400) {
      expect(res.json.error.code).toBe(CODES[status]);
      expect(typeof res.json.error.message).toBe('string');
    }
    if (status === 401) expect(res.headers['www-authenticate']).toBe('Bearer');
  });
});

describe('matrix edges', () => {
  it('answers the claim poll of a claimed site token with only {claimed: true}', async () => {
    const w = await world('site token after claim');
    const res = await api(server, { path: `/v1/sites/${w.site}`, token: w.token });
    expect(res.json).toEqual({ claimed: true });
  });

  it("hides a site from another site's token (404)", async () => {
    const mine = await world('site token before claim');
    const other = await world('site token before claim');
    const res = await api(server, { path: `/v1/sites/${other.site}/files`, token: mine.token });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
  });

  it('answers 404 for a site that does not exist, and 401 before that without a credential', async () => {
    expect((await api(server, { path: '/v1/sites/no-such-site-here', token: owner.token })).status).toBe(404);
    expect((await api(server, { path: '/v1/sites/no-such-site-here' })).status).toBe(401);
  });

  it.each([
    ['a malformed Authorization header', { authorization: 'Basic abc' }],
    ['an unknown site token', { authorization: 'Bearer st_unknown' }],
  ])('refuses %s with 401', async (_what, headers) => {
    const res = await api(server, { path: '/v1/sites', headers });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('tells an OAuth caller to use the MCP server', async () => {
    const res = await api(server, { path: '/v1/me', token: 'pla_abc' });
    expect(res.json.agent_message).toContain('MCP');
  });

  it.each([
    ['PUT', '/v1/sites/x', 405],
    ['POST', '/v1/me', 405],
    ['GET', '/v1/nope', 404],
    ['GET', '/v1/sites/x/unknown', 404],
  ])('answers %s %s with %i in the error shape', async (method, path, status) => {
    const res = await api(server, { method, path, token: owner.token });
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(status === 405 ? 'method_not_allowed' : 'not_found');
  });
});
