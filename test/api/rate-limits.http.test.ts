import { beforeAll, describe, expect, it } from 'vitest';
import { accountWithToken, api, type TestAccount } from './api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** Per-credential and per-network request caps on the REST API (SPEC 7 `limit`, SPEC 8 rule 4). */

let clock = Date.now();
let alice: TestAccount;
let bob: TestAccount;

const server = useTestServer({ PLINTH_API_RATE_PER_CREDENTIAL: '3', PLINTH_API_RATE_PER_NETWORK: '6' }, { now: () => clock });

beforeAll(async () => {
  [alice, bob] = [await accountWithToken(server.store), await accountWithToken(server.store)];
});

describe('API rate limits', () => {
  it('caps each credential per minute with 429 limit and Retry-After, then the network, and recovers after the window', async () => {
    // Start at a window boundary so the minute does not roll over mid-test.
    clock = Math.ceil(clock / 60_000) * 60_000;
    for (let i = 0; i < 3; i++) expect((await api(server, { path: '/v1/me', token: alice.token })).status).toBe(200);
    const limited = await api(server, { path: '/v1/me', token: alice.token });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('limit');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.json.agent_message).toContain('Retry-After');

    // Another credential from the same network still gets through, until the network's cap (6).
    for (let i = 0; i < 3; i++) expect((await api(server, { path: '/v1/me', token: bob.token })).status).toBe(200);
    const network = await api(server, { path: '/v1/approvals/ap_unknown' });
    expect(network.status).toBe(429);
    expect(network.headers['retry-after']).toBeDefined();

    clock += 60_000;
    expect((await api(server, { path: '/v1/me', token: alice.token })).status).toBe(200);
  });

  it('counts requests with a bad token against the network', async () => {
    clock = Math.ceil(clock / 60_000) * 60_000 + 60_000;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await api(server, { path: '/v1/me', token: 'pl_guess' })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
  });
});
