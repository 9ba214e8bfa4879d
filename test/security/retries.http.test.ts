// Replayed answers (src/sites/replays.ts) hold what a deploy answered once, an anonymous site's
// token and claim link included. A replay must never hand them to anyone but the caller who
// sent that very request: another caller with the same key (an account, another network) gets
// a deploy of its own; a published manifest's answer goes only to whoever proves the manifest;
// and what the store keeps (LMDB here, PostgreSQL in a cluster) holds no credential in the
// clear. The records are in the store, not in a thread's memory: they outlive a restart.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/runtime/server.js';
import { accountWithToken } from '../api/api-helpers.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { callApi, type ApiCall, type ApiResponse } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';

const dataDir = tempDir();
let server: RunningServer | undefined;

async function start(): Promise<RunningServer> {
  // The client's network is the one X-Forwarded-For names: two anonymous callers on two networks.
  server = await startTestServer({ PLINTH_DATA_DIR: dataDir, PLINTH_TRUST_PROXY: '1' });
  return server;
}

afterAll(async () => {
  await server?.close();
});

const call = async (request: ApiCall): Promise<ApiResponse> => callApi((server ?? (await start())).port, request);
const from = (network: string, headers: Record<string, string> = {}): Record<string, string> => ({ 'x-forwarded-for': network, ...headers });
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const PAGE = '<!doctype html><h1>mine</h1>\n';
const archive = tgzBytes([['index.html', PAGE]]);

/** Every byte the store's files hold. */
function storeBytes(): Buffer {
  const dir = join(dataDir, 'meta');
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
}

describe('an idempotency key belongs to its caller', () => {
  it('replays an anonymous deploy only to its own network: another network, or an account, with the same key and body gets a site of its own', async () => {
    const key = 'deploy-1'; // a guessable key, as careless clients send
    const mine = await call({ method: 'POST', path: '/v1/deploy', headers: from('198.51.100.7', { 'idempotency-key': key }), raw: archive });
    expect(mine.status, mine.text).toBe(201);
    const again = await call({ method: 'POST', path: '/v1/deploy', headers: from('198.51.100.8', { 'idempotency-key': key }), raw: archive });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.site_token).toBe(mine.json.site_token);

    const elsewhere = await call({ method: 'POST', path: '/v1/deploy', headers: from('203.0.113.9', { 'idempotency-key': key }), raw: archive });
    expect(elsewhere.status, elsewhere.text).toBe(201);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect(elsewhere.json.site.name).not.toBe(mine.json.site.name);
    expect(elsewhere.json.site_token).not.toBe(mine.json.site_token);
    expect(elsewhere.json.claim_url).not.toBe(mine.json.claim_url);

    const { token } = await accountWithToken(server!.store);
    const account = await call({ method: 'POST', path: '/v1/deploy', token, headers: from('198.51.100.7', { 'idempotency-key': key }), raw: archive });
    expect(account.status, account.text).toBe(201);
    expect(account.headers['idempotent-replayed']).toBeUndefined();
    expect(account.json.site.name).not.toBe(mine.json.site.name);
    expect(account.json.site_token).toBeUndefined();
    expect(account.text).not.toContain(mine.json.site_token);
  });

  it("does not replay one account's answer to another account", async () => {
    const key = randomUUID();
    const [a, b] = [await accountWithToken(server!.store), await accountWithToken(server!.store)];
    const first = await call({ method: 'POST', path: '/v1/deploy', token: a.token, headers: from('198.51.100.7', { 'idempotency-key': key }), raw: archive });
    expect(first.status, first.text).toBe(201);
    const other = await call({ method: 'POST', path: '/v1/deploy', token: b.token, headers: from('198.51.100.7', { 'idempotency-key': key }), raw: archive });
    expect(other.status, other.text).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.json.site.name).not.toBe(first.json.site.name);
    expect(server!.store.getRole(server!.store.getSite(first.json.site.name)!.id, b.account.id)).toBeUndefined();
  });
});

describe("a published manifest's answer", () => {
  it('goes only to a caller who proves the manifest', async () => {
    const files = [{ path: 'index.html', size: Buffer.byteLength(PAGE), sha256: sha(PAGE) }];
    const made = await call({ method: 'POST', path: '/v1/deploy/manifest', headers: from('198.51.100.7'), body: { files } });
    expect(made.status, made.text).toBe(201);
    const { manifest: id, manifest_secret: secret } = made.json;
    const published = await call({
      method: 'POST',
      path: `/v1/deploy?manifest=${id}`,
      headers: from('198.51.100.7', { 'x-manifest-secret': secret }),
      raw: archive,
    });
    expect(published.status, published.text).toBe(201);

    const { token } = await accountWithToken(server!.store);
    const strangers: Array<[string, ApiCall]> = [
      ['no secret', { path: `/v1/deploy/manifest/${id}`, headers: from('198.51.100.7') }],
      ['a made-up secret', { path: `/v1/deploy/manifest/${id}`, headers: from('198.51.100.7', { 'x-manifest-secret': `ms_${'A'.repeat(32)}` }) }],
      [
        'the secret with one character changed',
        {
          path: `/v1/deploy/manifest/${id}`,
          headers: from('198.51.100.7', { 'x-manifest-secret': `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}` }),
        },
      ],
      ['an API token', { path: `/v1/deploy/manifest/${id}`, token, headers: from('198.51.100.7') }],
      ['an API token and the secret', { path: `/v1/deploy/manifest/${id}`, token, headers: from('198.51.100.7', { 'x-manifest-secret': secret }) }],
      ['the site token of the site it made', { path: `/v1/deploy/manifest/${id}`, token: published.json.site_token, headers: from('198.51.100.7') }],
      ['a last part without the secret', { method: 'POST', path: `/v1/deploy?manifest=${id}`, headers: from('198.51.100.7'), raw: archive }],
    ];
    for (const [who, request] of strangers) {
      const res = await call(request);
      expect(res.status, `${who}: ${res.text}`).toBe(404);
      expect(res.text, who).not.toContain(published.json.site_token);
      expect(res.text, who).not.toContain(published.json.claim_url);
    }
    const owner = await call({ path: `/v1/deploy/manifest/${id}`, headers: from('198.51.100.7', { 'x-manifest-secret': secret }) });
    expect(owner.status, owner.text).toBe(200);
    expect(owner.json.site_token).toBe(published.json.site_token);
  });
});

describe('what the store keeps', () => {
  it('holds no site token, claim link or idempotency key in the clear, and outlives a restart', async () => {
    const key = `restart-${randomUUID()}`;
    const first = await call({ method: 'POST', path: '/v1/deploy', headers: from('198.51.100.77', { 'idempotency-key': key }), raw: archive });
    expect(first.status, first.text).toBe(201);
    const claimToken = first.json.claim_url.split('/claim/')[1];

    await server!.close();
    server = undefined;
    const bytes = storeBytes();
    for (const secret of [first.json.site_token, claimToken, key]) expect(bytes.includes(Buffer.from(secret))).toBe(false);

    await start();
    const again = await call({ method: 'POST', path: '/v1/deploy', headers: from('198.51.100.77', { 'idempotency-key': key }), raw: archive });
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.site_token).toBe(first.json.site_token);
    expect(again.json.claim_url).toBe(first.json.claim_url);
  });
});
