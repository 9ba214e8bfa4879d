import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { accountSite, accountWithToken, anonymousSite, type TestAccount } from '../api/api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';
import { declaredButUnsent, request } from '../helpers/http.js';
import { INITIALIZE, rpc } from '../mcp/mcp-helpers.js';

/**
 * The MCP host under attack: tables of hostile inputs, each row an attack with the answer it must
 * get, run against the real server over loopback. Where an attack asks for work (a deploy), the
 * row also checks that none was done.
 */

// Rate limits off here: the rows below must each meet the rule they test, not a 429.
const server = useTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '0', PLINTH_API_RATE_PER_NETWORK: '0' });

const list = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
const deploy = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'deploy_site', arguments: { files: [{ path: 'index.html', content: `<h1>${id}</h1>` }] } },
});
const deploys = (n: number) => Array.from({ length: n }, (_, i) => deploy(i + 1));
const claiming = (revision: string, message: object) => ({
  ...message,
  params: { ...(message as { params?: object }).params, _meta: { 'io.modelcontextprotocol/protocolVersion': revision } },
});
const initializeAt = (protocolVersion: string) => ({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion } });
const sitesOf = (who: TestAccount): number => server.store.countOwnedSites(who.account.id);

describe('JSON-RPC batches', () => {
  it.each<[string, unknown[], Record<string, string>, RegExp]>([
    ['2024-11-05 (before batching)', deploys(2), { 'mcp-protocol-version': '2024-11-05' }, /not supported in protocol revision 2024-11-05/],
    ['2025-06-18 (removed batching)', deploys(2), { 'mcp-protocol-version': '2025-06-18' }, /not supported in protocol revision 2025-06-18/],
    ['2025-11-25', deploys(2), { 'mcp-protocol-version': '2025-11-25' }, /not supported in protocol revision 2025-11-25/],
    ['2026-07-28 by header', deploys(2), { 'mcp-protocol-version': '2026-07-28' }, /not supported in protocol revision 2026-07-28/],
    ['2026-07-28 by a member’s own envelope', [deploy(1), claiming('2026-07-28', deploy(2))], {}, /not supported in protocol revision 2026-07-28/],
    [
      'the finding: 100 calls at 2025-06-18',
      Array.from({ length: 100 }, (_, i) => list(i)),
      { 'mcp-protocol-version': '2025-06-18' },
      /not supported in protocol revision 2025-06-18/,
    ],
    ['an initialize naming 2025-11-25', [initializeAt('2025-11-25'), deploy(2)], {}, /not supported in protocol revision 2025-11-25/],
    ['an initialize naming 2025-03-26, alone', [initializeAt('2025-03-26')], {}, /^initialize must not be part of a JSON-RPC batch/],
    [
      'an initialize naming 2025-03-26, mixed with calls',
      [deploy(1), initializeAt('2025-03-26')],
      { 'mcp-protocol-version': '2025-03-26' },
      /^initialize must not be part of a JSON-RPC batch/,
    ],
    ['notifications only, at 2025-11-25', [note, note], { 'mcp-protocol-version': '2025-11-25' }, /not supported in protocol revision 2025-11-25/],
    ['empty', [], {}, /./],
    ['nested arrays', [[deploy(1)], [deploy(2)]], {}, /./],
    ['numbers, strings and null', [1, 'deploy_site', null], {}, /./],
    ['the same id twice (both calls would run, one be answered)', [deploy(1), deploy(1)], { 'mcp-protocol-version': '2025-03-26' }, /id of its own/],
    ['one past the cap of 20', deploys(21), { 'mcp-protocol-version': '2025-03-26' }, /at most 20 messages/],
    ['far past the SDK’s own 100', deploys(101), {}, /at most 20 messages/],
  ])('refuses a batch: %s, with 400 Invalid Request and nothing done', async (_, body, headers, message) => {
    const caller = await accountWithToken(server.store);
    const res = await rpc(server, { token: caller.token, body, headers });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(res.json.error.message).toMatch(message);
    expect(sitesOf(caller)).toBe(0);
  });

  it.each<[string, Record<string, string>]>([
    ['2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
    ['no MCP-Protocol-Version (the spec: assume 2025-03-26)', {}],
  ])('serves a batch at %s', async (_, headers) => {
    const caller = await accountWithToken(server.store);
    const res = await rpc(server, { token: caller.token, body: [deploy(1), list(2), deploy(3)], headers });
    expect(res.status).toBe(200);
    expect(res.json.map((answer: { id: number }) => answer.id).sort()).toEqual([1, 2, 3]);
    expect(sitesOf(caller)).toBe(2);
  });

  it('serves a batch of exactly the cap, and a batch of notifications with 202', async () => {
    const caller = await accountWithToken(server.store);
    const full = await rpc(server, { token: caller.token, body: Array.from({ length: 20 }, (_, i) => list(i)) });
    expect(full.status).toBe(200);
    expect(full.json).toHaveLength(20);
    expect((await rpc(server, { token: caller.token, body: [note, note, note] })).status).toBe(202);
  });
});

describe('JSON-RPC batches against the rate limits', () => {
  // Its own server, with low caps and a clock the tests move to a fresh minute window each.
  let clock = Date.now();
  const limited = useTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '5', PLINTH_API_RATE_PER_NETWORK: '8' }, { now: () => clock });
  const nextWindow = (): void => {
    clock = (Math.floor(clock / 60_000) + 1) * 60_000;
  };
  const call = (token: string, body: unknown) => rpc(limited, { token, body });
  const owned = (who: TestAccount): number => limited.store.countOwnedSites(who.account.id);

  it('counts each call of a batch against the credential: over the budget, 429 and not one call run', async () => {
    nextWindow();
    const alice = await accountWithToken(limited.store);
    expect((await call(alice.token, list(1))).status).toBe(200); // 1 of 5
    // 1 (the request) + 4 more would make 6: refused whole, and only the request counted.
    const over = await call(alice.token, deploys(5));
    expect(over.status).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'limit' } } });
    expect(over.json.error.data.agent_message).toContain('each message of a batch counts');
    expect(owned(alice)).toBe(0);
    // 2 used: a batch of 3 fits exactly, and then nothing more does.
    const fits = await call(alice.token, deploys(3));
    expect(fits.status).toBe(200);
    expect(owned(alice)).toBe(3);
    expect((await call(alice.token, list(2))).status).toBe(429);
  });

  it('counts each call of a batch against the network, whoever’s credential it carries', async () => {
    nextWindow();
    const [alice, bob] = [await accountWithToken(limited.store), await accountWithToken(limited.store)];
    expect((await call(alice.token, deploys(4))).status).toBe(200); // network 4 of 8
    // Bob's credential has room for 5, the network for only 4 more.
    const over = await call(bob.token, deploys(5));
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBeDefined();
    expect(owned(bob)).toBe(0);
    expect((await call(bob.token, deploys(3))).status).toBe(200); // network 8 of 8 (the refused request counted 1)
    expect(owned(bob)).toBe(3);
  });

  it('refuses a batch larger than a whole minute’s allowance without a Retry-After to wait for', async () => {
    nextWindow();
    const alice = await accountWithToken(limited.store);
    const never = await call(alice.token, deploys(6));
    expect(never.status).toBe(429);
    expect(never.headers['retry-after']).toBeUndefined();
    expect(never.json).toMatchObject({ error: { data: { code: 'limit' } } });
    expect(never.json.error.message).toBe('A batch of 6 calls is more than the 5 requests a minute allowed.');
    expect(owned(alice)).toBe(0);
    expect((await call(alice.token, list(1))).status).toBe(200);
  });
});

const tool = (name: string, args: Record<string, unknown>, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const refusalText = (res: { json: any }): string => (res.json?.result?.isError ? res.json.result.content[0].text : '(not refused)');

/** An OAuth access token minted through the store as the token endpoint would, for `resource`. */
async function oauthToken(who: TestAccount, resource: string, lifetimeMs = 3600_000): Promise<{ token: string; grantId: string }> {
  const token = `pla_${randomBytes(24).toString('base64url')}`;
  const code = `plc_${randomBytes(12).toString('base64url')}`;
  await server.store.createAuthorizationCode(hashToken(code), {
    clientId: 'mcp_test',
    accountId: who.account.id,
    redirectUri: 'http://127.0.0.1/cb',
    codeChallenge: 'unused',
    resource,
    scope: 'sites',
    expiresAt: Date.now() + 60_000,
  });
  const redeemed = await server.store.redeemAuthorizationCode(
    hashToken(code),
    () => true,
    { id: '', clientName: 'Test app', redirectHost: '127.0.0.1' },
    {
      accessHash: hashToken(token),
      accessExpiresAt: Date.now() + lifetimeMs,
      refreshHash: hashToken(`plr_${code}`),
      refreshExpiresAt: Date.now() + 86_400_000,
    },
  );
  if (!redeemed.ok) throw new Error(`could not mint a token: ${redeemed.reason}`);
  return { token, grantId: redeemed.grant.id };
}

describe('who may call', () => {
  it.each([
    'http://evil.example',
    'null',
    'http://mcp.localhost.evil.example',
    'http://localhost.evil.example:6274',
    'https://mcp.localhost',
    'http://someones-site.sites.localhost',
  ])('refuses a browser page from %s with 403 before anything runs (DNS rebinding)', async (origin) => {
    const caller = await accountWithToken(server.store);
    const res = await rpc(server, { token: caller.token, body: deploy(1), headers: { origin } });
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(sitesOf(caller)).toBe(0);
  });

  it.each(['http://localhost:6274', 'http://127.0.0.1:6274', 'http://app.localhost'])(
    'serves a page from %s (our own hosts and loopback tools)',
    async (origin) => {
      const caller = await accountWithToken(server.store);
      const res = await rpc(server, { token: caller.token, body: list(1), headers: { origin } });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
    },
  );

  it.each([
    ['/mcp', '/.well-known/oauth-protected-resource/mcp'],
    ['/', '/.well-known/oauth-protected-resource'],
  ])('answers %s without a token with 401 and a pointer to its resource metadata', async (path, metadata) => {
    const res = await rpc(server, { path, body: deploy(1) });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${server.config.publicUrls.mcp}${metadata}", scope="sites"`);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, data: { code: 'unauthorized' } } });
  });

  // Each row makes a credential for `victim` (or none at all) that must not let a call through.
  it.each<[string, (victim: TestAccount) => Promise<string>]>([
    ['another scheme', async () => 'Basic dXNlcjpwYXNz'],
    ['Bearer without a token', async () => 'Bearer'],
    ['two tokens', async (victim) => `Bearer ${victim.token} pl_other`],
    ['a list of bearers', async (victim) => `Bearer ${victim.token}, Bearer pl_other`],
    ['an unknown API token', async () => 'Bearer pl_guessed'],
    ['an unknown site token', async () => 'Bearer st_guessed'],
    ['an unknown access token, 5000 characters long', async () => `Bearer pla_${'x'.repeat(5000)}`],
    [
      'a revoked API token',
      async (victim) => {
        const [token] = server.store.listApiTokens(victim.account.id);
        await server.store.revokeApiToken(victim.account.id, token!.id);
        return `Bearer ${victim.token}`;
      },
    ],
    [
      'the API token of an account that no longer exists',
      async () => {
        const token = `pl_${randomBytes(24).toString('base64url')}`;
        await server.store.addApiToken({ accountId: 'acct_deleted', tokenHash: hashToken(token), name: 'orphan' });
        return `Bearer ${token}`;
      },
    ],
    ['an OAuth access token issued for another resource', async (victim) => `Bearer ${(await oauthToken(victim, 'https://other.example/mcp')).token}`],
    [
      'an OAuth access token of a disconnected app',
      async (victim) => {
        const { token, grantId } = await oauthToken(victim, `${server.config.publicUrls.mcp}/mcp`);
        await server.store.revokeOAuthGrant(grantId, 'disconnected', victim.account.id);
        return `Bearer ${token}`;
      },
    ],
    ['an expired OAuth access token', async (victim) => `Bearer ${(await oauthToken(victim, `${server.config.publicUrls.mcp}/mcp`, -1000)).token}`],
  ])('refuses %s with 401 invalid_token and runs nothing', async (_, credential) => {
    const victim = await accountWithToken(server.store);
    const res = await rpc(server, { body: deploy(1), headers: { authorization: await credential(victim) } });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(
      /^Bearer error="invalid_token", error_description="[^"]*", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp", scope="sites"$/,
    );
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, data: { code: 'unauthorized' } } });
    expect(sitesOf(victim)).toBe(0);
  });

  it('serves an OAuth access token issued for this server, at either path', async () => {
    const person = await accountWithToken(server.store);
    for (const resource of [`${server.config.publicUrls.mcp}/mcp`, `${server.config.publicUrls.mcp}/`]) {
      const { token } = await oauthToken(person, resource);
      expect((await rpc(server, { token, body: list(1) })).status, resource).toBe(200);
    }
  });
});

describe('site tokens (SPEC 5: that one site, until it is claimed)', () => {
  let anon: Awaited<ReturnType<typeof anonymousSite>>;
  let other: { name: string; revision: string };
  beforeAll(async () => {
    anon = await anonymousSite(server.store, Date.now() + 3600_000);
    other = await accountSite(server.store, await accountWithToken(server.store));
  });

  it.each<[string, () => ReturnType<typeof tool>, RegExp]>([
    ['list_sites', () => tool('list_sites', {}), /^forbidden:/],
    ['get_account', () => tool('get_account', {}), /^forbidden:/],
    ['delete_site on its own site', () => tool('delete_site', { site: anon.name }), /^forbidden:/],
    ['invite_member on its own site', () => tool('invite_member', { site: anon.name, email: 'friend@example.com', role: 'editor' }), /^forbidden:/],
    ['get_site of another site', () => tool('get_site', { site: other.name }), /^not_found:/],
    ['read_file of another site', () => tool('read_file', { site: other.name, path: 'index.html' }), /^not_found:/],
    [
      'deploy_site over another site',
      () => tool('deploy_site', { site: other.name, base_revision: other.revision, files: [{ path: 'index.html', content: 'defaced' }] }),
      /^not_found:/,
    ],
  ])('refuses %s', async (_, body, refusal) => {
    const res = await rpc(server, { token: anon.siteToken, body: body() });
    expect(res.status).toBe(200);
    expect(refusalText(res)).toMatch(refusal);
    expect(server.store.getSite(other.name)!.liveRevision).toBe(other.revision);
  });

  it('reads and updates its own site, and after the claim only reports the claim', async () => {
    const own = await rpc(server, { token: anon.siteToken, body: tool('get_site', { site: anon.name }) });
    expect(own.json.result.structuredContent).toMatchObject({ name: anon.name, claimed: false });
    const updated = await rpc(server, {
      token: anon.siteToken,
      body: tool('deploy_site', { site: anon.name, base_revision: anon.revision, files: [{ path: 'index.html', content: 'v2' }] }),
    });
    expect(updated.json.result.structuredContent).toMatchObject({ revision: { number: 2 } });

    const claimer = await accountWithToken(server.store);
    await server.store.claimSite(hashToken(anon.claimToken), claimer.account.id);
    const live = server.store.getSite(anon.name)!.liveRevision;
    const after = await rpc(server, {
      token: anon.siteToken,
      body: tool('deploy_site', { site: anon.name, base_revision: live, files: [{ path: 'index.html', content: 'v3' }] }),
    });
    expect(refusalText(after)).toMatch(/^forbidden: .* has been claimed/);
    expect(server.store.getSite(anon.name)!.liveRevision).toBe(live);
    expect(refusalText(await rpc(server, { token: anon.siteToken, body: tool('list_files', { site: anon.name }) }))).toMatch(/^forbidden:/);
    expect((await rpc(server, { token: anon.siteToken, body: tool('get_site', { site: anon.name }) })).json.result.structuredContent).toEqual({
      claimed: true,
      agent_message: expect.any(String),
    });
  });
});

describe('transport', () => {
  let caller: TestAccount;
  beforeAll(async () => {
    caller = await accountWithToken(server.store);
  });

  it.each(['GET', 'DELETE', 'PUT', 'PATCH'])('answers %s with 405 (stateless: no stream to open, no session to end)', async (method) => {
    const res = await rpc(server, { method, token: caller.token });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, OPTIONS');
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
  });

  it.each<[string, string, Record<string, string>, number, number]>([
    ['invalid JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', {}, 400, -32700],
    ['an empty body', '', {}, 400, -32700],
    ['JSON null', 'null', {}, 400, -32600],
    ['a bare number', '42', {}, 400, -32600],
    ['a bare string', '"tools/list"', {}, 400, -32600],
    ['an id of 1e400 (Infinity)', '{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}', {}, 400, -32600],
    ['an id past 2^64', '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}', {}, 400, -32600],
    ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', {}, 400, -32600],
    ['an object as id', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', {}, 400, -32600],
    ['a body that is not declared JSON', JSON.stringify(list(1)), { 'content-type': 'text/plain' }, 415, -32000],
  ])('answers %s with a JSON-RPC error, never a 500', async (_, body, headers, status, code) => {
    const res = await request({
      port: server.port,
      host: 'mcp.localhost',
      method: 'POST',
      path: '/mcp',
      headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    expect(res.status).toBe(status);
    expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', error: { code } });
  });

  it('echoes a 200 KB string id as it came, no larger', async () => {
    const id = 'i'.repeat(200_000);
    const res = await rpc(server, { token: caller.token, body: tool('get_account', {}, id) });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(id);
    expect(res.body.byteLength).toBeLessThan(id.length + 2_000);
  });

  it('refuses a declared body over 40 MB with 413 before reading it', async () => {
    const res = await declaredButUnsent({
      port: server.port,
      host: 'mcp.localhost',
      path: '/mcp',
      headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json' },
      declaredBytes: 200 * 1024 * 1024,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'too_large' } } });
  });

  it('stops a chunked body at 40 MB and the framing allowance with 413, and runs nothing', async () => {
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/mcp',
          headers: {
            host: 'mcp.localhost',
            authorization: `Bearer ${caller.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'transfer-encoding': 'chunked',
          },
          agent: false,
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      // A write error after the answer arrived is the server closing; the answer decides.
      req.on('error', () => undefined);
      // A deploy whose one file is 41 MB of text: valid JSON, were it allowed to arrive.
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      req.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy_site","arguments":{"files":[{"path":"index.html","content":"');
      const pump = (): void => {
        while (sent < 41) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end('"}]}}}');
      };
      pump();
      setTimeout(() => reject(new Error('no answer')), 20_000).unref();
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: -32600, data: { code: 'too_large' } } });
    expect(sitesOf(caller)).toBe(0);
  });
});

describe('tools under attack', () => {
  let caller: TestAccount;
  let site: { name: string; revision: string };
  beforeAll(async () => {
    caller = await accountWithToken(server.store);
    site = await accountSite(server.store, caller);
  });

  it.each(['rm_rf', '__proto__', 'constructor', 'deploy_site ', 'DEPLOY_SITE', ''])(
    'answers a call of the unknown tool %j with Invalid Params',
    async (name) => {
      const res = await rpc(server, { token: caller.token, body: tool(name, {}) });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32602 } });
      expect(sitesOf(caller)).toBe(1);
    },
  );

  it.each([
    '../evil.html',
    'a/../../evil.html',
    '/etc/passwd',
    'C:\\evil.html',
    '..\\evil.html',
    '\\\\server\\share\\evil.html',
    'a\u0000.html',
    'line\nbreak.html',
    '',
    '.',
  ])('refuses a deploy_site that names the path %j, whole, beside a good index.html', async (path) => {
    const res = await rpc(server, {
      token: caller.token,
      body: tool('deploy_site', {
        site: site.name,
        base_revision: site.revision,
        files: [
          { path: 'index.html', content: 'fine' },
          { path, content: 'evil' },
        ],
      }),
    });
    expect(refusalText(res)).toMatch(/^bad_request:/);
    expect(server.store.getSite(site.name)!.liveRevision).toBe(site.revision);
  });

  it.each(['../../../../etc/passwd', '/etc/passwd', '..%2f..%2fetc%2fpasswd', 'index.html/../../../etc/passwd', '.'])(
    'reads nothing outside the site for read_file %j',
    async (path) => {
      const res = await rpc(server, { token: caller.token, body: tool('read_file', { site: site.name, path }) });
      expect(refusalText(res)).toMatch(/^(not_found|bad_request):/);
      expect(res.text).not.toContain('root:');
    },
  );
});
