import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_LIFETIME_MS } from '../../src/sites/index.js';
import { sweep } from '../../src/runtime/sweeper.js';
import { createLogger } from '../../src/log.js';
import { tarBytes } from '../helpers/archive-bytes.js';
import { useTestServer } from '../helpers/fixtures.js';
import { declaredButUnsent } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { accountWithToken, api, visit, type TestAccount } from './api-helpers.js';

/**
 * A large site in one atomic deploy: a manifest takes its missing contents over many upload
 * requests, in any order, and publishes once, as one revision, when the last one arrives.
 */

let clock = Date.now();
let owner: TestAccount;

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const sha = (content: string | Buffer): string => createHash('sha256').update(content).digest('hex');
const describeFiles = (files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => ({ path, size: Buffer.byteLength(content), sha256: sha(content) }));
const inline = (files: Record<string, string>) => ({ files: Object.entries(files).map(([path, content]) => ({ path, content })) });

function site(count: number, marker = 'v1'): Record<string, string> {
  const files: Record<string, string> = { 'index.html': `<h1>home ${marker}</h1>` };
  for (let i = 0; i < count; i++) files[`pages/page-${i}.html`] = `<p>page ${i} of ${marker}</p>`;
  return files;
}

/** The files split into `count` parts, round robin. */
function split(files: Record<string, string>, count: number): Array<Record<string, string>> {
  const parts: Array<Record<string, string>> = Array.from({ length: count }, () => ({}));
  Object.entries(files).forEach(([path, content], i) => (parts[i % count]![path] = content));
  return parts;
}

const manifest = (token: string | undefined, body: Record<string, unknown>) => api(server, { method: 'POST', path: '/v1/deploy/manifest', token, body });
const part = (token: string | undefined, id: string, files: Record<string, string>) =>
  api(server, { method: 'POST', path: `/v1/deploy?manifest=${id}`, token, body: inline(files) });
const archivePart = (token: string | undefined, id: string, files: Record<string, string>) =>
  api(server, {
    method: 'POST',
    path: `/v1/deploy?manifest=${id}`,
    token,
    raw: tarBytes(Object.entries(files)),
    headers: { 'content-type': 'application/x-tar' },
  });
const status = (token: string | undefined, id: string) => api(server, { path: `/v1/deploy/manifest/${id}`, token });
const revisionsOf = (name: string): number => server.store.listRevisions(server.store.getSite(name)!.id).revisions.length;

async function publish(token: string, files: Record<string, string>): Promise<{ name: string; revision: string }> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', token, body: inline(files) });
  expect(res.status, res.text).toBe(201);
  return { name: res.json.site.name, revision: res.json.revision.id };
}

describe('an upload in many parts', () => {
  it('takes parts in any order, as JSON or archives, and publishes one revision when the last arrives', async () => {
    const first = await publish(owner.token, site(2, 'old'));
    const files = site(30, 'new');
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    expect(m.status, m.text).toBe(201);
    expect(m.json).toMatchObject({ received: 0, received_bytes: 0 });
    const id = m.json.manifest as string;
    const parts = split(files, 4);

    let missing = m.json.missing.length as number;
    for (const [i, chunk] of parts.slice(0, 3).entries()) {
      const res = i % 2 === 0 ? await part(owner.token, id, chunk) : await archivePart(owner.token, id, chunk);
      expect(res.status, res.text).toBe(202);
      expect(res.json.missing.length).toBe(missing - Object.keys(chunk).length);
      missing = res.json.missing.length;
      expect(res.json.agent_message).toContain('still');
      // Nothing is live between parts.
      expect((await visit(server, first.name)).text).toContain('home old');
      expect(revisionsOf(first.name)).toBe(1);
    }

    // A part sent again costs nothing and changes nothing.
    const again = await part(owner.token, id, parts[0]!);
    expect(again.status).toBe(202);
    expect(again.json.missing.length).toBe(missing);

    const asked = await status(owner.token, id);
    expect(asked.status, asked.text).toBe(200);
    expect(new Set(asked.json.missing)).toEqual(new Set(Object.values(parts[3]!).map(sha)));
    expect(asked.json.missing_bytes).toBe(Object.values(parts[3]!).reduce((sum, content) => sum + Buffer.byteLength(content), 0));
    expect(asked.json.received).toBe(Object.keys(files).length - Object.keys(parts[3]!).length);

    const last = await part(owner.token, id, parts[3]!);
    expect(last.status, last.text).toBe(201);
    expect(last.json.revision).toMatchObject({ number: 2, files: Object.keys(files).length });
    expect(revisionsOf(first.name)).toBe(2);
    expect((await visit(server, first.name)).text).toContain('home new');
    expect((await visit(server, first.name, '/pages/page-29.html')).text).toContain('page 29 of new');
    // Published once: the manifest answers what it published, and its last part sent again the same.
    const published = await status(owner.token, id);
    expect(published.status, published.text).toBe(200);
    expect(published.json.revision).toEqual(last.json.revision);
    const repeated = await part(owner.token, id, parts[3]!);
    expect(repeated.status, repeated.text).toBe(201);
    expect(repeated.json).toEqual(last.json);
    expect(revisionsOf(first.name)).toBe(2);
  });

  it('creates a new site from parts', async () => {
    const files = site(9, 'fresh');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const [a, b, c] = split(files, 3);
    expect((await part(owner.token, m.json.manifest, a!)).status).toBe(202);
    expect((await part(owner.token, m.json.manifest, b!)).status).toBe(202);
    const done = await part(owner.token, m.json.manifest, c!);
    expect(done.status, done.text).toBe(201);
    expect((await visit(server, done.json.site.name, '/pages/page-8.html')).text).toContain('page 8 of fresh');
  });

  it('publishes once when the last parts arrive at the same moment', async () => {
    const first = await publish(owner.token, site(1, 'race-old'));
    const files = site(12, 'race');
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    const answers = await Promise.all(split(files, 6).map((chunk) => part(owner.token, m.json.manifest, chunk)));
    const statuses = answers.map((answer) => answer.status).sort();
    // The request that records the last content publishes; one that finds it taken gets 404.
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => s === 201 || s === 202 || s === 404)).toBe(true);
    expect(revisionsOf(first.name)).toBe(2);
    expect((await visit(server, first.name)).text).toContain('home race');
  });

  it('publishes with an empty body once nothing is missing (after an interrupted last answer)', async () => {
    const files = site(3, 'empty-finish');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    // The parts arrive, but the publish fails (a site limit reached meanwhile would do): simulated
    // by storing every content and recording it as a part directly in the store.
    for (const content of Object.values(files)) await server.store.blobs.write(Buffer.from(content));
    await server.store.addManifestParts(
      m.json.manifest,
      Object.values(files).map((content) => ({ sha256: sha(content), size: Buffer.byteLength(content) })),
    );
    const asked = await status(owner.token, m.json.manifest);
    expect(asked.json.missing).toEqual([]);
    expect(asked.json.agent_message).toContain('empty body');
    const done = await api(server, { method: 'POST', path: `/v1/deploy?manifest=${m.json.manifest}`, token: owner.token, raw: '' });
    expect(done.status, done.text).toBe(201);
  });

  it('refuses an empty body while contents are missing, saying which', async () => {
    const files = site(2, 'not-yet');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const res = await api(server, { method: 'POST', path: `/v1/deploy?manifest=${m.json.manifest}`, token: owner.token, raw: '' });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('missing contents were not uploaded');
  });
});

describe('attacks on a manifest’s parts', () => {
  it('another account’s manifest id: 404 for its status, its parts and giving it up', async () => {
    const files = site(2, 'mine');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const intruder = await accountWithToken(server.store, 'builder');
    expect((await status(intruder.token, m.json.manifest)).status).toBe(404);
    expect((await status(undefined, m.json.manifest)).status).toBe(404);
    expect((await part(intruder.token, m.json.manifest, files)).status).toBe(404);
    expect((await api(server, { method: 'DELETE', path: `/v1/deploy/manifest/${m.json.manifest}`, token: intruder.token })).status).toBe(404);
    // Still the owner's, untouched.
    const mine = await status(owner.token, m.json.manifest);
    expect(mine.status).toBe(200);
    expect(mine.json.received).toBe(0);
  });

  it('a part with content the manifest did not ask for: 400, and the manifest goes on', async () => {
    const files = site(2, 'exact');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const wrong = await part(owner.token, m.json.manifest, { 'index.html': '<h1>smuggled</h1>' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toContain('not one the manifest asked for');
    expect(wrong.json.agent_message).toBeTruthy();
    const done = await part(owner.token, m.json.manifest, files);
    expect(done.status, done.text).toBe(201);
    expect((await visit(server, done.json.site.name)).text).toContain('home exact');
  });

  it('a JSON part naming another manifest than the request: 400; a manifest named only in a body: 400', async () => {
    const files = site(1, 'named');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const other = await manifest(owner.token, { files: describeFiles(site(1, 'other-named')) });
    const mismatch = await api(server, {
      method: 'POST',
      path: `/v1/deploy?manifest=${m.json.manifest}`,
      token: owner.token,
      body: { manifest: other.json.manifest, ...inline(files) },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.message).toContain(other.json.manifest);
    const bodyOnly = await api(server, { method: 'POST', path: '/v1/deploy', token: owner.token, body: { manifest: m.json.manifest, ...inline(files) } });
    expect(bodyOnly.status).toBe(400);
    expect(bodyOnly.json.agent_message).toContain(`?manifest=${m.json.manifest}`);
    const named = await api(server, {
      method: 'POST',
      path: `/v1/deploy?manifest=${m.json.manifest}`,
      token: owner.token,
      body: { manifest: m.json.manifest, ...inline(files) },
    });
    expect(named.status, named.text).toBe(201);
  });

  it('an oversized part: 413 before its body is read, and the manifest goes on', async () => {
    const files = site(1, 'big-part');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const refused = await declaredButUnsent({
      port: server.port,
      host: 'api.localhost',
      path: `/v1/deploy?manifest=${m.json.manifest}`,
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/x-tar' },
      declaredBytes: 91 * 1024 * 1024,
    });
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.text).agent_message).toContain('POST /v1/deploy/manifest');
    expect((await part(owner.token, m.json.manifest, files)).status).toBe(201);
  });

  it('a file over the plan’s per-file limit in a part: 413', async () => {
    const free = await accountWithToken(server.store, 'free');
    const big = randomBytes(5 * 1024 * 1024 + 1)
      .toString('base64')
      .slice(0, 5 * 1024 * 1024 + 1);
    // The manifest itself refuses a declared size over the limit; a part that lies is refused too.
    const m = await manifest(free.token, { files: [...describeFiles({ 'index.html': 'i' }), { path: 'big.txt', size: 100, sha256: sha(big) }] });
    expect(m.status, m.text).toBe(201);
    const res = await part(free.token, m.json.manifest, { 'big.txt': big });
    expect(res.status).toBe(413);
  });

  it('a secret in a late part refuses the whole deploy: nothing goes live, later parts are refused too', async () => {
    const first = await publish(owner.token, site(1, 'clean'));
    const leaky = 'const key = "AKIAIOSFODNN7EXAMPLF";\nconst secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";\n';
    const files = { ...site(20, 'leaky'), 'assets/config.js': leaky };
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    const { 'assets/config.js': _leak, ...clean } = files;
    const [a, b, c] = split(clean, 3);
    expect((await part(owner.token, m.json.manifest, a!)).status).toBe(202);
    expect((await part(owner.token, m.json.manifest, b!)).status).toBe(202);
    const refused = await part(owner.token, m.json.manifest, { 'assets/config.js': leaky });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toMatchObject({ code: 'blocked_secret', details: { file: 'assets/config.js', line: 1 } });
    expect(refused.text).not.toContain('AKIAIOSFODNN7EXAMPLF');

    // The deploy can never finish: later parts and the status answer the refusal.
    const later = await part(owner.token, m.json.manifest, c!);
    expect(later.status).toBe(422);
    expect(later.json.error.message).toContain('refused');
    const asked = await status(owner.token, m.json.manifest);
    expect(asked.status).toBe(422);
    expect(asked.json.agent_message).toContain('new manifest');
    expect(server.store.listManifestParts(m.json.manifest).size).toBe(0);
    expect(revisionsOf(first.name)).toBe(1);
    expect((await visit(server, first.name)).text).toContain('home clean');
    expect((await visit(server, first.name, '/pages/page-3.html')).status).not.toBe(200);
  });

  it('a stale base revision: 409 at the next part and nothing published', async () => {
    const first = await publish(owner.token, site(1, 'base'));
    const files = site(6, 'stale');
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    const [a, b] = split(files, 2);
    expect((await part(owner.token, m.json.manifest, a!)).status).toBe(202);
    // Someone else publishes meanwhile.
    await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { site: first.name, base_revision: first.revision, ...inline(site(1, 'other')) },
    });
    // Asked after an interruption, the manifest says so before anything more is sent.
    expect((await status(owner.token, m.json.manifest)).status).toBe(409);
    const late = await part(owner.token, m.json.manifest, b!);
    expect(late.status).toBe(409);
    expect(late.json.agent_message).toBeTruthy();
    expect((await visit(server, first.name)).text).toContain('home other');
    expect(revisionsOf(first.name)).toBe(2);
  });
});

describe('lifetime, garbage collection and the cap on unpublished uploads', () => {
  const log = createLogger({ level: 'silent' });
  const blobExists = (sha256: string): boolean => existsSync(server.store.blobs.pathOf(sha256));

  it('lives a day after its latest part; its parts survive collection while it lives and go after', async () => {
    const files = site(4, `gc-${randomBytes(4).toString('hex')}`);
    const m = await manifest(owner.token, { files: describeFiles(files) });
    const [a, b] = split(files, 2);
    expect((await part(owner.token, m.json.manifest, a!)).status).toBe(202);
    const held = Object.values(a!).map((content) => sha(content));
    expect(held.every(blobExists)).toBe(true);

    // Most of a day later another part renews it; a sweep then keeps the first part's blobs
    // although they are older than the grace period.
    clock += MANIFEST_LIFETIME_MS - 60_000;
    const renewed = await part(owner.token, m.json.manifest, { [Object.keys(b!)[0]!]: Object.values(b!)[0]! });
    expect(renewed.status, renewed.text).toBe(202);
    expect(Date.parse(renewed.json.expires_at)).toBe(clock + MANIFEST_LIFETIME_MS);
    clock += 2 * 3600_000;
    await sweep({ store: server.store, log, blobGraceMs: 3600_000, now: () => clock });
    expect((await status(owner.token, m.json.manifest)).status).toBe(200);
    expect(held.every(blobExists)).toBe(true);

    // Abandoned: a day after its latest part it is gone, and so are its parts' blobs.
    clock += MANIFEST_LIFETIME_MS;
    const report = await sweep({ store: server.store, log, blobGraceMs: 3600_000, now: () => clock });
    expect(report.droppedExpired).toBeGreaterThanOrEqual(1);
    expect((await status(owner.token, m.json.manifest)).status).toBe(404);
    expect(held.some(blobExists)).toBe(false);
    expect(server.store.listManifestParts(m.json.manifest).size).toBe(0);
  });

  it('caps what one account parks in manifests never published, and DELETE gives one up', async () => {
    const free = await accountWithToken(server.store, 'free');
    const fourMb = (tag: string) => [
      { path: 'index.html', size: 10, sha256: sha(`index ${tag}`) },
      { path: 'big.bin', size: 4 * 1024 * 1024, sha256: sha(`big ${tag}`) },
    ];
    // Free: 5 MB per site, so twice that may wait unpublished.
    const one = await manifest(free.token, { files: fourMb('1') });
    const two = await manifest(free.token, { files: fourMb('2') });
    expect([one.status, two.status]).toEqual([201, 201]);
    const three = await manifest(free.token, { files: fourMb('3') });
    expect(three.status).toBe(429);
    expect(three.json.error.code).toBe('limit');
    expect(three.json.agent_message).toContain('DELETE /v1/deploy/manifest/');
    // Another account is not affected.
    const other = await accountWithToken(server.store, 'free');
    expect((await manifest(other.token, { files: fourMb('4') })).status).toBe(201);

    const gaveUp = await api(server, { method: 'DELETE', path: `/v1/deploy/manifest/${one.json.manifest}`, token: free.token });
    expect(gaveUp.status, gaveUp.text).toBe(200);
    expect((await status(free.token, one.json.manifest)).status).toBe(404);
    expect((await manifest(free.token, { files: fourMb('3') })).status).toBe(201);
  });
});

describe('the cap turned off', () => {
  it('PLINTH_UNPUBLISHED_SITES=0 lets manifests pile up', async () => {
    const open = await startTestServer({ PLINTH_UNPUBLISHED_SITES: '0' });
    try {
      const free = await accountWithToken(open.store, 'free');
      for (let i = 0; i < 4; i++) {
        const res = await api(open, {
          method: 'POST',
          path: '/v1/deploy/manifest',
          token: free.token,
          body: { files: [{ path: 'index.html', size: 4 * 1024 * 1024, sha256: sha(`open ${i}`) }] },
        });
        expect(res.status, res.text).toBe(201);
      }
    } finally {
      await open.close();
    }
  });
});
