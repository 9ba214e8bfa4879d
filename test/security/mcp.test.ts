import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { INITIALIZE, rpc } from '../mcp/mcp-helpers.js';

/**
 * The MCP host under attack: tables of hostile inputs, each row an attack with the answer it must
 * get, run against the real server over loopback. Where an attack asks for work (a deploy), the
 * row also checks that none was done.
 */

let server: TestServer;

beforeAll(async () => {
  // Rate limits off here: the rows below must each meet the rule they test, not a 429.
  server = await startTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '0', PLINTH_API_RATE_PER_NETWORK: '0' });
});
afterAll(() => server?.close());

const list = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
const deploy = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'deploy_site', arguments: { files: [{ path: 'index.html', content: `<h1>${id}</h1>` }] } } });
const deploys = (n: number) => Array.from({ length: n }, (_, i) => deploy(i + 1));
const claiming = (revision: string, message: object) => ({ ...message, params: { ...(message as { params?: object }).params, _meta: { 'io.modelcontextprotocol/protocolVersion': revision } } });
const initializeAt = (protocolVersion: string) => ({ ...INITIALIZE, params: { ...INITIALIZE.params, protocolVersion } });
const sitesOf = (who: TestAccount): number => server.store.countOwnedSites(who.account.id);

describe('JSON-RPC batches', () => {
  it.each<[string, unknown[], Record<string, string>, RegExp]>([
    ['2024-11-05 (before batching)', deploys(2), { 'mcp-protocol-version': '2024-11-05' }, /not supported in protocol revision 2024-11-05/],
    ['2025-06-18 (removed batching)', deploys(2), { 'mcp-protocol-version': '2025-06-18' }, /not supported in protocol revision 2025-06-18/],
    ['2025-11-25', deploys(2), { 'mcp-protocol-version': '2025-11-25' }, /not supported in protocol revision 2025-11-25/],
    ['2026-07-28 by header', deploys(2), { 'mcp-protocol-version': '2026-07-28' }, /not supported in protocol revision 2026-07-28/],
    ['2026-07-28 by a member’s own envelope', [deploy(1), claiming('2026-07-28', deploy(2))], {}, /not supported in protocol revision 2026-07-28/],
    ['the finding: 100 calls at 2025-06-18', Array.from({ length: 100 }, (_, i) => list(i)), { 'mcp-protocol-version': '2025-06-18' }, /not supported in protocol revision 2025-06-18/],
    ['an initialize naming 2025-11-25', [initializeAt('2025-11-25'), deploy(2)], {}, /not supported in protocol revision 2025-11-25/],
    ['an initialize naming 2025-03-26, alone', [initializeAt('2025-03-26')], {}, /^initialize must not be part of a JSON-RPC batch/],
    ['an initialize naming 2025-03-26, mixed with calls', [deploy(1), initializeAt('2025-03-26')], { 'mcp-protocol-version': '2025-03-26' }, /^initialize must not be part of a JSON-RPC batch/],
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
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '5', PLINTH_API_RATE_PER_NETWORK: '8' }, () => clock);
  });
  afterAll(() => limited?.close());
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
