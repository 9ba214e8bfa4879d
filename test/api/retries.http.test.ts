import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/store/index.js';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { request } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';
import { accountWithToken, anonymousSite, api, visit, type ApiCall, type ApiResponse, type TestAccount } from './api-helpers.js';

/**
 * Retries that never duplicate: a digest deploy's answer outlives its last part for a day, and
 * `Idempotency-Key` (Stripe's semantics) makes any deploy safe to send again. A retry gets the
 * first answer (same site, revision and credentials) and publishes nothing.
 */

const HOUR_MS = 3600_000;
let clock = Date.now();
let owner: TestAccount;

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const PAGE = '<!doctype html><h1>retried</h1>\n';
const ABOUT = '<!doctype html><h1>about</h1>\n';
const MANIFEST_FILES = [
  { path: 'index.html', size: Buffer.byteLength(PAGE), sha256: sha(PAGE) },
  { path: 'about.html', size: Buffer.byteLength(ABOUT), sha256: sha(ABOUT) },
];
const call = (request: ApiCall): Promise<ApiResponse> => api(server, request);
const siteCount = (): number => server.store.listSiteIds().length;
const keyed = (key: string, headers: Record<string, string> = {}): Record<string, string> => ({ 'idempotency-key': key, ...headers });

async function revisionsOf(name: string, token: string): Promise<string[]> {
  const res = await call({ path: `/v1/sites/${name}/revisions`, token });
  expect(res.status, res.text).toBe(200);
  return res.json.revisions.map((revision: { id: string }) => revision.id);
}

/** The headers the OpenAPI document (`/openapi.json` on the docs host) gives an operation's answer, lower-cased. */
async function documentedHeaders(method: string, path: string, status: number): Promise<string[]> {
  const doc = JSON.parse((await request({ port: server.port, host: 'localhost', path: '/openapi.json' })).text) as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
  };
  return Object.keys(doc.paths[path]![method.toLowerCase()]!.responses[String(status)]!.headers ?? {}).map((name) => name.toLowerCase());
}

/** The one part of an anonymous digest deploy: both files, by the manifest's secret. */
const sendLastPart = (id: string, secret: string): Promise<ApiResponse> =>
  call({
    method: 'POST',
    path: `/v1/deploy?manifest=${id}`,
    headers: { 'x-manifest-secret': secret },
    raw: tgzBytes([
      ['index.html', PAGE],
      ['about.html', ABOUT],
    ]),
  });

/** An anonymous digest deploy, published by its last part: the manifest, its secret and the answer. */
async function publishedAnonymousManifest(): Promise<{ id: string; secret: string; published: ApiResponse }> {
  const made = await call({ method: 'POST', path: '/v1/deploy/manifest', body: { files: MANIFEST_FILES } });
  expect(made.status, made.text).toBe(201);
  const { manifest: id, manifest_secret: secret } = made.json;
  const published = await sendLastPart(id, secret);
  expect(published.status, published.text).toBe(201);
  expect(published.json.site_token).toMatch(/^st_/);
  return { id, secret, published };
}

describe('a digest deploy whose last answer was lost', () => {
  it('answers GET /v1/deploy/manifest/<id> with what it published, site token and claim link included', async () => {
    const { id, secret, published } = await publishedAnonymousManifest();
    const status = await call({ path: `/v1/deploy/manifest/${id}`, headers: { 'x-manifest-secret': secret } });
    expect(status.status, status.text).toBe(200);
    expect(status.json.site).toEqual(published.json.site);
    expect(status.json.revision).toEqual(published.json.revision);
    expect(status.json.site_token).toBe(published.json.site_token);
    expect(status.json.claim_url).toBe(published.json.claim_url);
    expect(status.json.agent_message).toContain('already published');
    expect(status.json.manifest).toBe(id);
    // The recovered credentials work: the site token reads the site, the claim link opens.
    expect((await call({ path: `/v1/sites/${published.json.site.name}`, token: status.json.site_token })).status).toBe(200);
    const claimPath = new URL(status.json.claim_url).pathname;
    expect((await request({ port: server.port, host: 'app.localhost', path: claimPath })).status).toBe(200);
  });

  it('answers the last part sent again with the same answer, and makes no second site', async () => {
    const { id, secret, published } = await publishedAnonymousManifest();
    const sites = siteCount();
    const again = await sendLastPart(id, secret);
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await documentedHeaders('POST', '/v1/deploy', again.status)).toContain('idempotent-replayed');
    expect(again.json).toEqual(published.json);
    expect(siteCount()).toBe(sites);
    expect(await revisionsOf(published.json.site.name, published.json.site_token)).toEqual([published.json.revision.id]);
    // An empty last part too.
    const empty = await call({ method: 'POST', path: `/v1/deploy?manifest=${id}`, headers: { 'x-manifest-secret': secret }, raw: '' });
    expect(empty.status, empty.text).toBe(201);
    expect(empty.json.revision.id).toBe(published.json.revision.id);
  });

  it('keeps the answer of an update by its account, and forgets it after 24 hours', async () => {
    const first = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, body: { files: [{ path: 'index.html', content: PAGE }] } });
    expect(first.status, first.text).toBe(201);
    const name = first.json.site.name;
    const made = await call({
      method: 'POST',
      path: '/v1/deploy/manifest',
      token: owner.token,
      body: { site: name, base_revision: first.json.revision.id, files: MANIFEST_FILES },
    });
    expect(made.status, made.text).toBe(201);
    const id = made.json.manifest;
    const published = await call({
      method: 'POST',
      path: `/v1/deploy?manifest=${id}`,
      token: owner.token,
      body: { files: [{ path: 'about.html', content: ABOUT }] },
    });
    expect(published.status, published.text).toBe(201);

    const status = await call({ path: `/v1/deploy/manifest/${id}`, token: owner.token });
    expect(status.status, status.text).toBe(200);
    expect(status.json.revision).toEqual(published.json.revision);
    expect(status.json.site_token).toBeUndefined();
    const again = await call({
      method: 'POST',
      path: `/v1/deploy?manifest=${id}`,
      token: owner.token,
      body: { files: [{ path: 'about.html', content: ABOUT }] },
    });
    expect(again.status, again.text).toBe(201);
    expect(again.json.revision.id).toBe(published.json.revision.id);
    expect(await revisionsOf(name, owner.token)).toEqual([published.json.revision.id, first.json.revision.id]);

    clock += 25 * HOUR_MS;
    try {
      expect((await call({ path: `/v1/deploy/manifest/${id}`, token: owner.token })).status).toBe(404);
    } finally {
      clock -= 25 * HOUR_MS;
    }
  });
});

describe('Idempotency-Key on POST /v1/deploy', () => {
  it('answers an anonymous archive deploy sent again with the first answer, credentials included, and creates nothing', async () => {
    const key = randomUUID();
    const archive = tgzBytes([['index.html', PAGE]]);
    const first = await call({ method: 'POST', path: '/v1/deploy', headers: keyed(key), raw: archive });
    expect(first.status, first.text).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const sites = siteCount();

    const again = await call({ method: 'POST', path: '/v1/deploy', headers: keyed(key), raw: archive });
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(again.json.site_token).toMatch(/^st_/);
    expect(again.json.claim_url).toBe(first.json.claim_url);
    expect(siteCount()).toBe(sites);
  });

  it('answers an update sent again with the same revision and makes no new one, though its base is no longer live', async () => {
    const created = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, body: { files: [{ path: 'index.html', content: PAGE }] } });
    const name = created.json.site.name;
    const key = randomUUID();
    const update = { site: name, base_revision: created.json.revision.id, files: [{ path: 'index.html', content: '<h1>second</h1>' }] };
    const first = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, headers: keyed(key), body: update });
    expect(first.status, first.text).toBe(201);
    expect(first.json.revision.number).toBe(2);

    const again = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, headers: keyed(key), body: update });
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.revision).toEqual(first.json.revision);
    expect(await revisionsOf(name, owner.token)).toEqual([first.json.revision.id, created.json.revision.id]);
    expect((await visit(server, name)).text).toContain('second');
    // Without the key the same request is what it always was: a stale base.
    expect((await call({ method: 'POST', path: '/v1/deploy', token: owner.token, body: update })).status).toBe(409);
  });

  it('refuses the same key with another body with 409 in the error shape, naming the key, and publishes nothing', async () => {
    const key = `deploy-${randomUUID()}`;
    const first = await call({
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      headers: keyed(key),
      body: { files: [{ path: 'index.html', content: PAGE }] },
    });
    expect(first.status, first.text).toBe(201);
    const sites = siteCount();
    for (const other of [
      { body: { files: [{ path: 'index.html', content: '<h1>another</h1>' }] } },
      { raw: tgzBytes([['index.html', PAGE]]) },
      { body: { files: [{ path: 'index.html', content: PAGE }] }, path: '/v1/deploy?publish=true' },
    ]) {
      const res = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, headers: keyed(key), ...other });
      expect(res.status, res.text).toBe(409);
      expect(res.json.error.code).toBe('conflict');
      expect(res.json.error.message).toContain(key);
      expect(res.json.error.details).toEqual({ idempotency_key: key });
      expect(typeof res.json.agent_message).toBe('string');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(siteCount()).toBe(sites);
  });

  it('publishes once when the same request with the same key arrives several times at once', async () => {
    const key = randomUUID();
    const archive = tgzBytes([['index.html', PAGE]]);
    const sites = siteCount();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => call({ method: 'POST', path: '/v1/deploy', token: owner.token, headers: keyed(key), raw: archive })),
    );
    expect(siteCount()).toBe(sites + 1);
    const published = answers.filter((res) => res.status === 201);
    expect(published.length).toBeGreaterThanOrEqual(1);
    expect(new Set(published.map((res) => res.json.site.name)).size).toBe(1);
    for (const res of answers.filter((answer) => answer.status !== 201)) {
      expect(res.status, res.text).toBe(409);
      expect(res.json.error.message).toContain('still running');
    }
    // Once done, the key answers every retry.
    const later = await call({ method: 'POST', path: '/v1/deploy', token: owner.token, headers: keyed(key), raw: archive });
    expect(later.status, later.text).toBe(201);
    expect(later.json.site.name).toBe(published[0]!.json.site.name);
  });

  it('frees the key of a refused deploy, so the corrected retry runs', async () => {
    const key = randomUUID();
    const refused = await call({
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      headers: keyed(key),
      body: { files: [{ path: 'about.html', content: ABOUT }] },
    });
    expect(refused.status, refused.text).toBe(400);
    const retried = await call({
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      headers: keyed(key),
      body: { files: [{ path: 'index.html', content: PAGE }] },
    });
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'key\twith-tab'],
    // (Bytes past ASCII never reach us: the HTTP server cuts a header value at the first one.)
    ['nothing in it', ''],
  ])('refuses a key with %s (400) and publishes nothing', async (_what, key) => {
    const sites = siteCount();
    const res = await call({ method: 'POST', path: '/v1/deploy', headers: keyed(key), raw: tgzBytes([['index.html', PAGE]]) });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
    expect(siteCount()).toBe(sites);
  });

  it('refuses "idempotency_key" inside a REST JSON body, where it would be ignored', async () => {
    const sites = siteCount();
    const res = await call({
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { idempotency_key: 'k1', files: [{ path: 'index.html', content: PAGE }] },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json.agent_message).toContain('Idempotency-Key');
    expect(siteCount()).toBe(sites);
  });

  it('answers a manifest made again with the same key with the same manifest and secret', async () => {
    const key = randomUUID();
    const first = await call({ method: 'POST', path: '/v1/deploy/manifest', headers: keyed(key), body: { files: MANIFEST_FILES } });
    expect(first.status, first.text).toBe(201);
    const again = await call({ method: 'POST', path: '/v1/deploy/manifest', headers: keyed(key), body: { files: MANIFEST_FILES } });
    expect(again.status, again.text).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await documentedHeaders('POST', '/v1/deploy/manifest', again.status)).toContain('idempotent-replayed');
    expect(again.json.manifest).toBe(first.json.manifest);
    expect(again.json.manifest_secret).toBe(first.json.manifest_secret);
    const other = await call({ method: 'POST', path: '/v1/deploy/manifest', headers: keyed(key), body: { files: MANIFEST_FILES.slice(0, 1) } });
    expect(other.status, other.text).toBe(409);
  });
});

describe('a new claim link', () => {
  it('replaces the old link: the old one is refused, the new one claims the site', async () => {
    const site = await anonymousSite(server.store, clock + 72 * HOUR_MS);
    const res = await call({ method: 'POST', path: `/v1/sites/${site.name}/claim-link`, token: site.siteToken });
    expect(res.status, res.text).toBe(201);
    expect(res.json.claim_url).toMatch(/\/claim\/ct_[A-Za-z0-9_-]+$/);
    expect(res.json.expires_at).toBe(new Date(server.store.getSite(site.name)!.expiresAt!).toISOString());
    expect(res.json.agent_message).toContain('.service.json');
    const newToken = res.json.claim_url.split('/claim/')[1];

    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${site.claimToken}` })).status).toBe(404);
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${newToken}` })).status).toBe(200);
    expect((await server.store.claimSite(hashToken(site.claimToken), owner.account.id)).ok).toBe(false);
    expect((await server.store.claimSite(hashToken(newToken), owner.account.id)).ok).toBe(true);

    // Claimed, the site has no claim link any more, and its token only reports the claim.
    const after = await call({ method: 'POST', path: `/v1/sites/${site.name}/claim-link`, token: site.siteToken });
    expect(after.status, after.text).toBe(403);
  });

  it('is refused to everyone but the site token, and for an expired site', async () => {
    const site = await anonymousSite(server.store, clock + 72 * HOUR_MS);
    expect((await call({ method: 'POST', path: `/v1/sites/${site.name}/claim-link` })).status).toBe(401);
    expect((await call({ method: 'POST', path: `/v1/sites/${site.name}/claim-link`, token: owner.token })).status).toBe(404);
    const other = await anonymousSite(server.store, clock + 72 * HOUR_MS);
    expect((await call({ method: 'POST', path: `/v1/sites/${site.name}/claim-link`, token: other.siteToken })).status).toBe(404);
    // The old link still works after all those refusals.
    expect((await request({ port: server.port, host: 'app.localhost', path: `/claim/${site.claimToken}` })).status).toBe(200);

    const expired = await anonymousSite(server.store, clock + HOUR_MS);
    clock += 2 * HOUR_MS;
    try {
      expect((await call({ method: 'POST', path: `/v1/sites/${expired.name}/claim-link`, token: expired.siteToken })).status).toBe(410);
    } finally {
      clock -= 2 * HOUR_MS;
    }
  });
});
