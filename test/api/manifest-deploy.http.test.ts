import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_LIFETIME_MS } from '../../src/sites/index.js';
import { accountWithToken, api, visit, type TestAccount } from './api-helpers.js';
import { useTestServer } from '../helpers/fixtures.js';

/** Digest deploys: a manifest by hash, then only the missing contents; every rule of a deploy. */

let clock = Date.now();
let owner: TestAccount;

const server = useTestServer({}, { now: () => clock });

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const describeFiles = (files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => ({ path, size: Buffer.byteLength(content), sha256: sha(content) }));
const inline = (files: Record<string, string>) => ({ files: Object.entries(files).map(([path, content]) => ({ path, content })) });

function site(count: number, marker = 'v1'): Record<string, string> {
  const files: Record<string, string> = { 'index.html': `<h1>home ${marker}</h1>` };
  for (let i = 0; i < count; i++) files[`pages/page-${i}.html`] = `<p>page ${i} of the site</p>`;
  return files;
}

async function publish(token: string, files: Record<string, string>): Promise<{ name: string; revision: string }> {
  const res = await api(server, { method: 'POST', path: '/v1/deploy', token, body: inline(files) });
  expect(res.status, res.text).toBe(201);
  return { name: res.json.site.name, revision: res.json.revision.id };
}

async function manifest(token: string | undefined, body: Record<string, unknown>) {
  return api(server, { method: 'POST', path: '/v1/deploy/manifest', token, body });
}

async function upload(token: string | undefined, id: string, files?: Record<string, string>) {
  return files === undefined
    ? api(server, { method: 'POST', path: `/v1/deploy?manifest=${id}`, token, raw: '' })
    : api(server, { method: 'POST', path: `/v1/deploy?manifest=${id}`, token, body: inline(files) });
}

describe('redeploy of a changed site', () => {
  it('asks only for what changed and publishes one ordinary revision', async () => {
    const v1 = site(40);
    const first = await publish(owner.token, v1);
    const v2 = { ...v1, 'pages/page-7.html': '<p>page 7, edited</p>', 'new.html': '<p>new</p>' };
    delete (v2 as Record<string, string>)['pages/page-9.html'];

    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(v2) });
    expect(m.status, m.text).toBe(201);
    expect(m.json.manifest).toMatch(/^mf_/);
    expect(new Set(m.json.missing)).toEqual(new Set([sha('<p>page 7, edited</p>'), sha('<p>new</p>')]));
    expect(m.json.missing_bytes).toBe(Buffer.byteLength('<p>page 7, edited</p>') + Buffer.byteLength('<p>new</p>'));
    expect(m.json.files).toBe(Object.keys(v2).length);

    // Nothing is live before the upload.
    expect((await visit(server, first.name, '/pages/page-7.html')).text).toContain('page 7 of the site');
    const done = await upload(owner.token, m.json.manifest, { 'pages/page-7.html': v2['pages/page-7.html']!, 'new.html': '<p>new</p>' });
    expect(done.status, done.text).toBe(201);
    expect(done.json.revision).toMatchObject({ number: 2, files: Object.keys(v2).length });

    expect((await visit(server, first.name, '/pages/page-7.html')).text).toContain('edited');
    expect((await visit(server, first.name, '/pages/page-8.html')).text).toContain('page 8 of the site');
    expect((await visit(server, first.name, '/pages/page-9.html')).status).not.toBe(200);
    const listed = await api(server, { path: `/v1/sites/${first.name}/files`, token: owner.token });
    expect(listed.json.files).toHaveLength(Object.keys(v2).length);
    const revisions = await api(server, { path: `/v1/sites/${first.name}/revisions`, token: owner.token });
    expect(revisions.json.revisions[0]).toMatchObject({ number: 2, kind: 'deploy' });

    // A manifest publishes once: a part sent again answers that revision and publishes nothing.
    const again = await upload(owner.token, m.json.manifest, {});
    expect(again.status, again.text).toBe(201);
    expect(again.json.revision.id).toBe(done.json.revision.id);
    const after = await api(server, { path: `/v1/sites/${first.name}/revisions`, token: owner.token });
    expect(after.json.revisions).toHaveLength(revisions.json.revisions.length);
  });

  it('finishes with an empty body when nothing is missing (a rename of a file)', async () => {
    const v1 = site(3);
    const first = await publish(owner.token, v1);
    const moved = { 'index.html': v1['index.html']!, 'renamed/page.html': v1['pages/page-0.html']! };
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(moved) });
    expect(m.json.missing).toEqual([]);
    const done = await upload(owner.token, m.json.manifest);
    expect(done.status, done.text).toBe(201);
    expect((await visit(server, first.name, '/renamed/page.html')).text).toContain('page 0');
  });

  it('reuses contents of earlier revisions within the history reach', async () => {
    const first = await publish(owner.token, site(2, 'old'));
    const second = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { site: first.name, base_revision: first.revision, ...inline(site(2, 'new')) },
    });
    const back = await manifest(owner.token, { site: first.name, base_revision: second.json.revision.id, files: describeFiles(site(2, 'old')) });
    expect(back.json.missing).toEqual([]);
  });
});

describe('what a manifest may never reveal', () => {
  it('reports another account’s stored content as missing, and requires its upload', async () => {
    const other = await accountWithToken(server.store, 'builder');
    const secretPage = '<p>only in the other account</p>';
    await publish(other.token, { 'index.html': '<h1>theirs</h1>', 'private.html': secretPage });
    const mine = await publish(owner.token, { 'index.html': '<h1>mine</h1>' });

    const m = await manifest(owner.token, {
      site: mine.name,
      base_revision: mine.revision,
      files: describeFiles({ 'index.html': '<h1>mine</h1>', 'copy.html': secretPage }),
    });
    expect(m.status).toBe(201);
    expect(m.json.missing).toEqual([sha(secretPage)]);
    // Claiming to have it without sending it fails.
    const without = await upload(owner.token, m.json.manifest);
    expect(without.status).toBe(400);
    expect((await visit(server, mine.name, '/copy.html')).status).not.toBe(200);
    // A create has nothing to reuse at all.
    const create = await manifest(owner.token, { files: describeFiles({ 'index.html': '<h1>theirs</h1>' }) });
    expect(create.json.missing).toEqual([sha('<h1>theirs</h1>')]);
  });

  it('belongs to the caller who made it', async () => {
    const first = await publish(owner.token, site(1));
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(site(1)) });
    const intruder = await accountWithToken(server.store, 'builder');
    expect((await upload(intruder.token, m.json.manifest)).status).toBe(404);
    expect((await upload(undefined, m.json.manifest)).status).toBe(404);
    expect((await upload(owner.token, 'mf_doesnotexist')).status).toBe(404);
  });

  it('expires a day after it was made when no part arrives', async () => {
    const first = await publish(owner.token, site(1));
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(site(1)) });
    clock += MANIFEST_LIFETIME_MS - 1;
    expect((await api(server, { path: `/v1/deploy/manifest/${m.json.manifest}`, token: owner.token })).status).toBe(200);
    clock += 2;
    expect((await upload(owner.token, m.json.manifest)).status).toBe(404);
  });
});

describe('every check of a normal deploy', () => {
  it('409 for a stale base, at the manifest and again at the upload', async () => {
    const first = await publish(owner.token, site(1));
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(site(1, 'x')) });
    await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { site: first.name, base_revision: first.revision, ...inline(site(1, 'y')) },
    });
    const late = await upload(owner.token, m.json.manifest, { 'index.html': '<h1>home x</h1>' });
    expect(late.status).toBe(409);
    expect((await visit(server, first.name)).text).toContain('home y');
    const stale = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(site(1)) });
    expect(stale.status).toBe(409);
  });

  it('scans new contents for secrets and publishes nothing', async () => {
    const first = await publish(owner.token, site(1));
    const leaky = 'const key = "AKIAIOSFODNN7EXAMPLF";\nconst secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";\n';
    const files = { ...site(1), 'config.js': leaky };
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    const res = await upload(owner.token, m.json.manifest, { 'config.js': leaky });
    expect(res.status, res.text).toBe(422);
    expect(res.json.error).toMatchObject({ code: 'blocked_secret', details: { file: 'config.js', line: 1 } });
    expect((await visit(server, first.name, '/config.js')).status).not.toBe(200);
  });

  it('applies the plan’s limits to the resulting site, before anything is uploaded', async () => {
    const free = await accountWithToken(server.store, 'free');
    const first = await publish(free.token, site(1));
    const big = [...describeFiles(site(1)), { path: 'huge.bin', size: 6 * 1024 * 1024, sha256: 'a'.repeat(64) }];
    const res = await manifest(free.token, { site: first.name, base_revision: first.revision, files: big });
    expect(res.status).toBe(413);
    const many = Array.from({ length: 501 }, (_, i) => ({ path: `f${i}.html`, size: 1, sha256: sha(String(i)) }));
    expect((await manifest(free.token, { files: [{ path: 'index.html', size: 1, sha256: sha('i') }, ...many] })).status).toBe(413);
  });

  it('refuses uploads that do not match the manifest', async () => {
    const first = await publish(owner.token, site(1));
    const files = { ...site(1), 'a.html': '<p>a</p>' };
    const m = await manifest(owner.token, { site: first.name, base_revision: first.revision, files: describeFiles(files) });
    const wrong = await upload(owner.token, m.json.manifest, { 'a.html': '<p>something else</p>' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toContain('not one the manifest asked for');
    const m2 = await manifest(owner.token, {
      site: first.name,
      base_revision: first.revision,
      files: [...describeFiles(site(1)), { path: 'b.html', size: 999, sha256: sha('<p>b</p>') }],
    });
    const lying = await upload(owner.token, m2.json.manifest, { 'b.html': '<p>b</p>' });
    expect(lying.status).toBe(400);
    expect(lying.json.error.message).toContain('the manifest says 999 bytes');
  });

  it.each([
    ['a path climbing out', { path: '../evil.html', size: 1, sha256: 'b'.repeat(64) }, 400],
    ['an absolute path', { path: '/etc/passwd', size: 1, sha256: 'b'.repeat(64) }, 400],
    ['a bad hash', { path: 'x.html', size: 1, sha256: 'XYZ' }, 400],
    ['a negative size', { path: 'x.html', size: -1, sha256: 'b'.repeat(64) }, 400],
  ])('refuses %s', async (_label, entry, status) => {
    const res = await manifest(owner.token, { files: [{ path: 'index.html', size: 1, sha256: sha('i') }, entry] });
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe('bad_request');
  });

  it('requires index.html and skips what a deploy skips', async () => {
    expect((await manifest(owner.token, { files: describeFiles({ 'about.html': 'x' }) })).status).toBe(400);
    const m = await manifest(owner.token, { files: describeFiles({ 'index.html': 'i', '.env': 'SECRET=1', 'node_modules/x/y.js': 'y' }) });
    expect(m.status).toBe(201);
    expect(m.json.skipped.sort()).toEqual(['.env', 'node_modules/']);
    expect(m.json.missing).toEqual([sha('i')]);
    const done = await upload(owner.token, m.json.manifest, { 'index.html': 'i' });
    expect(done.status, done.text).toBe(201);
    expect(done.json.skipped.sort()).toEqual(['.env', 'node_modules/']);
  });

  it('blocks executables by name for a site token, even for contents it already has', async () => {
    const anonymous = await api(server, { method: 'POST', path: '/v1/deploy', body: inline({ 'index.html': '<h1>a</h1>', 'tool.txt': 'MZ harmless' }) });
    const token = anonymous.json.site_token as string;
    const res = await manifest(token, {
      site: anonymous.json.site.name,
      base_revision: anonymous.json.revision.id,
      files: describeFiles({ 'index.html': '<h1>a</h1>', 'setup.exe': 'MZ harmless' }),
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details).toMatchObject({ file: 'setup.exe' });
  });

  it('creates a new site from a manifest with an archive or JSON upload', async () => {
    const files = site(3, 'fresh');
    const m = await manifest(owner.token, { files: describeFiles(files) });
    expect(m.json.missing).toHaveLength(Object.keys(files).length);
    const done = await upload(owner.token, m.json.manifest, files);
    expect(done.status, done.text).toBe(201);
    expect(done.json.site.name).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect((await visit(server, done.json.site.name)).text).toContain('home fresh');
  });
});

describe('inline JSON deploys with files by reference', () => {
  const ref = (path: string, content: string) => ({ path, size: Buffer.byteLength(content), sha256: sha(content) });

  it('sends only changed contents in one request; unchanged files go by sha256 and size', async () => {
    const v1 = site(20);
    const first = await publish(owner.token, v1);
    const files = Object.entries(v1).map(([path, content]) => (path === 'pages/page-3.html' ? { path, content: '<p>page 3, new</p>' } : ref(path, content)));
    const res = await api(server, { method: 'POST', path: '/v1/deploy', token: owner.token, body: { site: first.name, base_revision: first.revision, files } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.revision.files).toBe(Object.keys(v1).length);
    expect((await visit(server, first.name, '/pages/page-3.html')).text).toContain('page 3, new');
    expect((await visit(server, first.name, '/pages/page-4.html')).text).toContain('page 4 of the site');
  });

  it('refuses references to content the site does not have, naming the files', async () => {
    const other = await accountWithToken(server.store, 'builder');
    await publish(other.token, { 'index.html': '<h1>x</h1>', 'theirs.html': '<p>their secret page</p>' });
    const mine = await publish(owner.token, { 'index.html': '<h1>mine</h1>' });
    const res = await api(server, {
      method: 'POST',
      path: '/v1/deploy',
      token: owner.token,
      body: { site: mine.name, base_revision: mine.revision, files: [ref('index.html', '<h1>mine</h1>'), ref('copy.html', '<p>their secret page</p>')] },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details).toMatchObject({ file: 'copy.html', missing: ['copy.html'] });
    expect(res.json.agent_message).toContain('Send these files with their content');
    // A new site has nothing to reference.
    const create = await api(server, { method: 'POST', path: '/v1/deploy', token: owner.token, body: { files: [ref('index.html', '<h1>mine</h1>')] } });
    expect(create.status).toBe(400);
  });

  it.each([
    ['both content and sha256', { path: 'a.html', content: 'x', sha256: 'a'.repeat(64), size: 1 }],
    ['sha256 without size', { path: 'a.html', sha256: 'a'.repeat(64) }],
    ['a bad sha256', { path: 'a.html', sha256: 'nothex', size: 1 }],
  ])('refuses an item with %s', async (_label, item) => {
    const res = await api(server, { method: 'POST', path: '/v1/deploy', token: owner.token, body: { files: [{ path: 'index.html', content: 'i' }, item] } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('bad_request');
  });
});
