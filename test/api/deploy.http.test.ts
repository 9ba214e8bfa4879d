import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  emptyZip,
  tarFromEntries,
  tarGzDeclaring,
  tarGzWithTool,
  tarWithTool,
  writeTree,
  zipFromEntries,
  zipWithTool,
  type TreeFiles,
} from '../fixtures/archives.js';
import { useTestServer } from '../helpers/fixtures.js';
import { callApi, declaredButUnsent, request, type TestResponse } from '../helpers/http.js';
import { waitUntil } from '../helpers/wait.js';
import { startTestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';
import { hashToken, type AccountRecord } from '../../src/store/index.js';

const HOUR = 3600_000;
let clock = Date.now();
const work = tempDir('plinth-deploy-');
let counter = 0;

interface DeployOptions {
  site?: string;
  base?: string;
  token?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

interface DeployBody {
  site: { name: string; url: string; claimed: boolean; expires_at?: string };
  revision: { id: string; number: number; files: number; bytes: number };
  skipped: string[];
  agent_message: string;
  site_token?: string;
  claim_url?: string;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

function deploy(body: Buffer | string, options: DeployOptions = {}): Promise<TestResponse & { json: DeployBody }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.base) headers['x-base-revision'] = options.base;
  if (options.contentType) headers['content-type'] = options.contentType;
  const path = options.site ? `/v1/deploy?site=${encodeURIComponent(options.site)}` : '/v1/deploy';
  return request({ port: server.port, host: 'api.localhost', method: 'POST', path, headers, body }).then((res) => ({
    ...res,
    json: JSON.parse(res.text) as DeployBody,
  }));
}

const deployJson = (body: unknown, options: DeployOptions = {}) => deploy(JSON.stringify(body), { ...options, contentType: 'application/json' });

/** A .tar.gz made by the real `tar` from a tree of files. */
function tgz(files: TreeFiles, members?: string[]): Buffer {
  const dir = join(work, `tree-${++counter}`);
  mkdirSync(dir, { recursive: true });
  writeTree(dir, files);
  return readFileSync(tarGzWithTool(dir, join(work, `a-${counter}.tgz`), members));
}

const visit = (name: string, path = '/') => request({ port: server.port, host: `${name}.sites.localhost`, path });

/** Creates an anonymous site and returns what an agent keeps in .service.json. */
async function createSite(marker: string): Promise<{ name: string; token: string; revision: string }> {
  const res = await deploy(tgz({ 'index.html': `<h1>${marker}</h1>`, 'keep.txt': 'kept' }));
  expect(res.status).toBe(201);
  return { name: res.json.site.name, token: res.json.site_token!, revision: res.json.revision.id };
}

/** A refused update must leave the live site exactly as it was, and still served. */
async function expectUnchanged(site: { name: string; revision: string }, marker: string): Promise<void> {
  const page = await visit(site.name);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`<h1>${marker}</h1>`);
  expect(server.store.getSite(site.name)?.liveRevision).toBe(site.revision);
}

/** Posts `megabytes` of chunked body with backpressure and resolves with the answer. */
function chunkedUpload(path: string, megabytes: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: server.port, method: 'POST', path, headers: { host: 'api.localhost', 'transfer-encoding': 'chunked' }, agent: false },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    // A write error after the answer arrived is the server closing; the answer decides.
    req.on('error', () => undefined);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    let sent = 0;
    const pump = (): void => {
      while (sent < megabytes) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
    setTimeout(() => reject(new Error('no answer')), 20_000).unref();
  });
}

const server = useTestServer({}, { now: () => clock });

describe('anonymous create', () => {
  it('publishes a .tar.gz and returns the site, revision, token and claim link', async () => {
    const res = await deploy(tgz({ 'index.html': '<h1>Hello</h1>', 'css/site.css': 'body{}' }));
    expect(res.status).toBe(201);
    const body = res.json;
    expect(body.site.name).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect(body.site.url).toBe(`http://${body.site.name}.sites.localhost`);
    expect(body.site.claimed).toBe(false);
    expect(Date.parse(body.site.expires_at!) - clock).toBe(72 * HOUR);
    expect(body.revision).toEqual({ id: expect.stringMatching(/^rev_[a-z0-9]+$/), number: 1, files: 2, bytes: 20 });
    expect(body.site_token).toMatch(/^st_[A-Za-z0-9_-]{32,}$/);
    expect(body.claim_url).toMatch(/^http:\/\/app\.localhost\/claim\/ct_[A-Za-z0-9_-]{32,}$/);
    expect(body.skipped).toEqual([]);
    expect(body.agent_message).toContain(body.site.url);
    expect(body.agent_message).toContain(body.claim_url);
    expect(body.agent_message).toContain(body.site.expires_at);
    expect(body.agent_message).toContain('72 hours');
    const page = await visit(body.site.name);
    expect(page.text).toContain('<h1>Hello</h1>');
    expect((await visit(body.site.name, '/css/site.css')).text).toBe('body{}');
  });

  it('serves its text files compressed from the first request after the 201, with brotli once the variants are stored', async () => {
    const css = `${'.rule { margin: 0 auto; padding: 1rem; }\n'.repeat(200)}`;
    // Over 256 KB: made off the serving thread on its first request.
    const big = Array.from({ length: 12000 }, (_, i) => `.c${i} { color: #${(i * 2654435761).toString(16).slice(-6).padStart(6, '0')}; }`).join('\n');
    const res = await deploy(tgz({ 'index.html': '<h1>compress me</h1>', 'site.css': css, 'big.css': big }));
    expect(res.status).toBe(201);
    const host = `${res.json.site.name}.sites.localhost`;
    const compressed = (path: string) => request({ port: server.port, host, path, headers: { 'accept-encoding': 'br, gzip' } });

    // gzip made by the serving thread until the variants are recorded (about a second), then brotli.
    for (const [path, text] of [
      ['/site.css', css],
      ['/big.css', big],
    ] as const) {
      const first = await compressed(path);
      expect(first.headers['content-encoding']).toMatch(/^(gzip|br)$/);
      expect((first.headers['content-encoding'] === 'br' ? brotliDecompressSync(first.body) : gunzipSync(first.body)).toString()).toBe(text);
      expect((await visit(res.json.site.name, path)).text).toBe(text);
    }

    // Both files get brotli once their variants are stored.
    for (const path of ['/site.css', '/big.css']) {
      const withBr = (): Promise<boolean> => compressed(path).then((page) => page.headers['content-encoding'] === 'br');
      expect(await waitUntil(withBr, 15_000, 20)).toBe(true);
    }
    const file = server.store.listFiles(res.json.revision.id).find((f) => f.path === 'site.css')!;
    expect(file.encodings?.br).toBeLessThan(css.length);
    expect(file.encodings?.gzip).toBeLessThan(css.length);
  });

  it('stores only hashes of the site and claim tokens', async () => {
    const res = await deploy(tgz({ 'index.html': 'x' }));
    const site = server.store.getSite(res.json.site.name)!;
    expect(JSON.stringify(site)).not.toContain(res.json.site_token!.slice(3));
    expect(JSON.stringify(site)).not.toContain(res.json.claim_url!.split('/ct_')[1]);
    expect(site.siteTokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    [
      '.tar',
      () => {
        const dir = join(work, `t-${++counter}`);
        mkdirSync(dir);
        writeTree(dir, { 'index.html': 'tar ok' });
        return readFileSync(tarWithTool(dir, join(work, `t-${counter}.tar`)));
      },
    ],
    [
      '.zip',
      () => {
        const dir = join(work, `z-${++counter}`);
        mkdirSync(dir);
        writeTree(dir, { 'index.html': 'zip ok' });
        return readFileSync(zipWithTool(dir, join(work, `z-${counter}.zip`)));
      },
    ],
  ])('accepts a %s archive detected from its bytes', async (_kind, make) => {
    const res = await deploy(make(), { contentType: 'application/octet-stream' });
    expect(res.status).toBe(201);
    expect((await visit(res.json.site.name)).text).toMatch(/ok/);
  });

  it('accepts inline JSON files in utf8 and base64', async () => {
    const res = await deployJson({
      files: [
        { path: 'index.html', content: '<p>inline</p>', encoding: 'utf8' },
        { path: 'img/dot.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), encoding: 'base64' },
      ],
    });
    expect(res.status).toBe(201);
    expect((await visit(res.json.site.name)).text).toContain('<p>inline</p>');
    expect((await visit(res.json.site.name, '/img/dot.png')).body).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });

  it('strips a single top-level folder', async () => {
    const dir = join(work, `strip-${++counter}`);
    writeTree(dir, { 'my-site/index.html': '<h1>stripped</h1>', 'my-site/about.html': 'about' });
    const res = await deploy(readFileSync(tarGzWithTool(dir, join(work, `strip-${counter}.tgz`), ['my-site'])));
    expect(res.status).toBe(201);
    expect((await visit(res.json.site.name)).text).toContain('stripped');
    expect((await visit(res.json.site.name, '/about')).text).toContain('about');
  });

  it('lists and never publishes skipped files', async () => {
    const res = await deploy(
      tgz({
        'index.html': 'home',
        '.env': 'SECRET=1',
        '.env.local': 'SECRET=2',
        '.git/config': '[core]',
        'node_modules/lib/index.js': 'x',
        'sub/node_modules/x.js': 'x',
        'app.js.map': '{}',
        'cert.pem': 'x',
        'id.key': 'x',
        '.DS_Store': 'x',
        'Thumbs.db': 'x',
        '.htaccess': 'x',
        '.well-known/security.txt': 'Contact: x',
      }),
    );
    expect(res.status).toBe(201);
    const skipped = res.json.skipped.join('\n');
    for (const name of ['.env', '.env.local', '.git', 'node_modules', 'app.js.map', 'cert.pem', 'id.key', '.DS_Store', 'Thumbs.db', '.htaccess']) {
      expect(skipped, name).toContain(name);
    }
    expect(skipped).not.toContain('.well-known');
    expect(res.json.agent_message).toContain('Left out on purpose');
    expect((await visit(res.json.site.name, '/.well-known/security.txt')).status).toBe(200);
    expect((await visit(res.json.site.name, '/.env')).text).not.toContain('SECRET');
  });

  it('requires index.html at the root', async () => {
    const res = await deploy(tgz({ 'home.html': 'no index' }));
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.json.error?.message).toContain('index.html');
  });

  it.each([
    ['an empty body', Buffer.alloc(0), 'empty'],
    ['an unknown format', Buffer.from('just some text, not an archive'), '.zip'],
    ['an empty zip', () => readFileSync(emptyZip(join(work, `e-${++counter}.zip`))), 'empty'],
  ])('refuses %s with 400', async (_what, body, fragment) => {
    const res = await deploy(typeof body === 'function' ? body() : body);
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.text).toContain(fragment);
  });

  it.each([
    [{ files: 'nope' }, 'files'],
    [{ files: [{ path: 'index.html' }] }, 'content'],
    [{ files: [{ path: 'index.html', content: 'x', encoding: 'hex' }] }, 'encoding'],
    [{ files: [{ path: 'index.html', content: 'x' }], extra: 1 }, 'extra'],
    [{}, 'files'],
  ])('refuses a JSON body that breaks the schema (%j) naming the field', async (body, field) => {
    const res = await deployJson(body);
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.json.error?.message).toContain(field);
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await deploy('{"files": [', { contentType: 'application/json' });
    expect(res.status).toBe(400);
    expect(res.json.error?.message).toMatch(/JSON/);
  });
});

describe('updates', () => {
  it('replaces the whole site with the site token and the live base revision', async () => {
    const site = await createSite('one');
    const res = await deploy(tgz({ 'index.html': '<h1>two</h1>' }), { site: site.name, base: site.revision, token: site.token });
    expect(res.status).toBe(201);
    expect(res.json.revision.number).toBe(2);
    expect(res.json.site_token).toBeUndefined();
    expect(res.json.claim_url).toBeUndefined();
    expect((await visit(site.name)).text).toContain('two');
    // Files left out of a deploy are removed.
    expect((await visit(site.name, '/keep.txt')).status).toBe(404);
  });

  it('applies a JSON patch on top of the base: changed files and deletions, the rest kept', async () => {
    const site = await createSite('patch me');
    const res = await deployJson(
      { site: site.name, base_revision: site.revision, patch: true, files: [{ path: 'new.txt', content: 'added' }], deleted: ['keep.txt'] },
      { token: site.token },
    );
    expect(res.status).toBe(201);
    expect(res.json.revision).toMatchObject({ number: 2, files: 2 });
    expect((await visit(site.name)).text).toContain('patch me');
    expect((await visit(site.name, '/new.txt')).text).toBe('added');
    expect((await visit(site.name, '/keep.txt')).status).toBe(404);
    expect(server.store.getRevision(res.json.revision.id)?.kind).toBe('patch');
  });

  it('refuses a stale base with 409 and publishes nothing', async () => {
    const site = await createSite('stale');
    const res = await deploy(tgz({ 'index.html': '<h1>never</h1>' }), { site: site.name, base: 'rev_old', token: site.token });
    expect(res.status).toBe(409);
    expect(res.json.error?.code).toBe('conflict');
    expect(res.json.agent_message).toContain(`GET /v1/sites/${site.name}`);
    await expectUnchanged(site, 'stale');
  });

  it('refuses a stale JSON base_revision with 409', async () => {
    const site = await createSite('stale json');
    const res = await deployJson({ site: site.name, base_revision: 'rev_old', files: [{ path: 'index.html', content: 'x' }] }, { token: site.token });
    expect(res.status).toBe(409);
    await expectUnchanged(site, 'stale json');
  });

  it('lets exactly one of two concurrent updates on the same base win', async () => {
    const site = await createSite('race');
    const [a, b] = await Promise.all([
      deploy(tgz({ 'index.html': '<h1>A</h1>' }), { site: site.name, base: site.revision, token: site.token }),
      deploy(tgz({ 'index.html': '<h1>B</h1>' }), { site: site.name, base: site.revision, token: site.token }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const winner = a.status === 201 ? 'A' : 'B';
    expect((await visit(site.name)).text).toContain(`<h1>${winner}</h1>`);
  });

  it('asks for the base revision when it is missing, saying how to get it', async () => {
    const site = await createSite('no base');
    const res = await deploy(tgz({ 'index.html': 'x' }), { site: site.name, token: site.token });
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.json.agent_message).toContain(`GET /v1/sites/${site.name}`);
    expect(res.json.agent_message).toContain('X-Base-Revision');
    await expectUnchanged(site, 'no base');
  });

  it.each([
    ['no credential', undefined, 401, 'unauthorized'],
    ['an unknown site token', 'st_unknown', 401, 'unauthorized'],
    ['a malformed header', 'not-a-bearer', 401, 'unauthorized'],
    ['an OAuth token', 'pla_abc', 401, 'unauthorized'],
    ['an unknown API token', 'pl_abc', 401, 'unauthorized'],
  ])('refuses an update with %s', async (_what, token, status, code) => {
    const site = await createSite(`auth ${code}`);
    const headers: Record<string, string> = token === 'not-a-bearer' ? { authorization: 'Basic abc' } : {};
    const res = await deploy(tgz({ 'index.html': 'x' }), {
      site: site.name,
      base: site.revision,
      token: token === 'not-a-bearer' ? undefined : token,
      headers,
    });
    expect(res.status).toBe(status);
    expect(res.json.error?.code).toBe(code);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    await expectUnchanged(site, `auth ${code}`);
  });

  it("hides a site from another site's token (404)", async () => {
    const mine = await createSite('mine');
    const other = await createSite('other');
    const res = await deploy(tgz({ 'index.html': 'x' }), { site: other.name, base: other.revision, token: mine.token });
    expect(res.status).toBe(404);
    expect(res.json.error?.code).toBe('not_found');
    await expectUnchanged(other, 'other');
  });

  it('answers 410 gone for an expired site', async () => {
    const site = await createSite('expiring');
    clock += 73 * HOUR;
    try {
      const res = await deploy(tgz({ 'index.html': 'x' }), { site: site.name, base: site.revision, token: site.token });
      expect(res.status).toBe(410);
      expect(res.json.error?.code).toBe('gone');
      expect((await visit(site.name)).status).toBe(410);
    } finally {
      clock -= 73 * HOUR;
    }
  });

  it('refuses a site token without a site name: it cannot create a site (403)', async () => {
    const site = await createSite('lonely');
    const res = await deploy(tgz({ 'index.html': 'x' }), { token: site.token });
    expect(res.status).toBe(403);
    expect(res.json.error?.code).toBe('forbidden');
    expect(res.json.agent_message).toContain('?site=');
  });
});

describe('a JSON deploy that names its site outside the body', () => {
  const files = (text: string) => [{ path: 'index.html', content: `<h1>${text}</h1>` }];

  it('updates the site ?site= names (with X-Base-Revision or base_revision), never creating another', async () => {
    const created = await callApi(server.port, { method: 'POST', path: '/v1/deploy', body: { files: files('one') } });
    expect(created.status, created.text).toBe(201);
    const { name } = created.json.site;
    const token = created.json.site_token as string;

    const byHeader = await callApi(server.port, {
      method: 'POST',
      path: `/v1/deploy?site=${name}`,
      token,
      headers: { 'x-base-revision': created.json.revision.id },
      body: { files: files('two') },
    });
    expect(byHeader.status, byHeader.text).toBe(201);
    expect(byHeader.json.site.name).toBe(name);
    expect(byHeader.json.revision.number).toBe(2);

    const byBody = await callApi(server.port, {
      method: 'POST',
      path: `/v1/deploy?site=${name}`,
      token,
      body: { base_revision: byHeader.json.revision.id, files: files('three') },
    });
    expect(byBody.status, byBody.text).toBe(201);
    expect(byBody.json.site.name).toBe(name);
    expect(byBody.json.revision.number).toBe(3);
    expect((await request({ port: server.port, host: `${name}.sites.localhost` })).text).toContain('three');

    // A stale base named outside the body is a conflict, as it is inside.
    const stale = await callApi(server.port, {
      method: 'POST',
      path: `/v1/deploy?site=${name}`,
      token,
      headers: { 'x-base-revision': created.json.revision.id },
      body: { files: files('stale') },
    });
    expect(stale.status).toBe(409);
  });

  it('refuses a site or base revision named differently inside and outside the body, publishing nothing', async () => {
    const created = await callApi(server.port, { method: 'POST', path: '/v1/deploy', body: { files: files('kept') } });
    const { name } = created.json.site;
    const token = created.json.site_token as string;
    const other = await callApi(server.port, { method: 'POST', path: '/v1/deploy', body: { files: files('other') } });
    for (const call of [
      { path: `/v1/deploy?site=${other.json.site.name}`, body: { site: name, base_revision: created.json.revision.id, files: files('x') } },
      {
        path: `/v1/deploy?site=${name}`,
        headers: { 'x-base-revision': other.json.revision.id },
        body: { base_revision: created.json.revision.id, files: files('x') },
      },
    ]) {
      const refused = await callApi(server.port, { method: 'POST', token, ...call });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.json.error.code).toBe('bad_request');
      expect(refused.json.agent_message).toMatch(/once/);
    }
    expect((await request({ port: server.port, host: `${name}.sites.localhost` })).text).toContain('kept');
  });
});

describe('the query of POST /v1/deploy', () => {
  const files = (text: string) => [{ path: 'index.html', content: `<h1>${text}</h1>` }];
  // Sites the account owns: a request refused must not have made one.
  const sitesOf = (account: AccountRecord) => server.store.listSitesOf(account.id).sites.length;

  it.each([
    ['a misspelt site', 'sitee=x', 'sitee'],
    ['an unknown parameter beside known ones', 'publish=true&dryrun=1', 'dryrun'],
    ['the base revision in the query', 'base_revision=rev_x', 'base_revision'],
  ])('refuses %s with 400, naming it and the known ones, publishing nothing', async (_what, query, name) => {
    const { account, token } = await accountWithToken();
    for (const call of [
      () => request({ port: server.port, host: 'api.localhost', method: 'POST', path: `/v1/deploy?${query}`, body: tgz({ 'index.html': 'x' }) }),
      () => callApi(server.port, { method: 'POST', path: `/v1/deploy?${query}`, body: { files: files('x') } }),
      () => callApi(server.port, { method: 'POST', path: `/v1/deploy?${query}`, token, body: { files: files('x') } }),
    ]) {
      const res = await call();
      expect(res.status, res.text).toBe(400);
      const body = JSON.parse(res.text) as { error: { code: string; message: string; details: { parameter: string; known: string[] } }; agent_message: string };
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toContain(`"${name}"`);
      expect(body.error.message).toContain('site, manifest, publish');
      expect(body.error.details).toEqual({ parameter: name, known: ['site', 'manifest', 'publish'] });
    }
    expect(sitesOf(account)).toBe(0);
  });

  it('knows exactly the query parameters the OpenAPI document gives it', async () => {
    const doc = JSON.parse((await request({ port: server.port, host: 'localhost', path: '/openapi.json' })).text) as {
      paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }> }>>;
    };
    const documented = doc.paths['/v1/deploy']!.post!.parameters.filter((p) => p.in === 'query').map((p) => p.name);
    const res = await callApi(server.port, { method: 'POST', path: '/v1/deploy?nope=1', body: { files: files('x') } });
    expect([...res.json.error.details.known].sort()).toEqual(documented.sort());
  });

  it('tells a base revision sent in the query to go in X-Base-Revision or the body', async () => {
    const res = await callApi(server.port, { method: 'POST', path: '/v1/deploy?base_revision=rev_x', body: { files: files('x') } });
    expect(res.status).toBe(400);
    expect(res.json.agent_message).toContain('X-Base-Revision');
  });

  it('reads the first of a repeated parameter', async () => {
    const site = await createSite('first wins');
    const other = await createSite('other');
    const res = await request({
      port: server.port,
      host: 'api.localhost',
      method: 'POST',
      path: `/v1/deploy?site=${site.name}&site=${other.name}`,
      headers: { authorization: `Bearer ${site.token}`, 'x-base-revision': site.revision },
      body: tgz({ 'index.html': '<h1>updated first</h1>' }),
    });
    expect(res.status, res.text).toBe(201);
    expect((JSON.parse(res.text) as DeployBody).site.name).toBe(site.name);
    await expectUnchanged(other, 'other');
  });

  it('refuses a base revision without a site: an update names its site (archive header, JSON body or header)', async () => {
    const site = await createSite('based');
    const { account, token } = await accountWithToken();
    const calls = [
      () => deploy(tgz({ 'index.html': 'x' }), { base: site.revision }),
      () => deployJson({ base_revision: site.revision, files: files('x') }),
      () => deployJson({ files: files('x') }, { base: site.revision }),
      () => deploy(tgz({ 'index.html': 'x' }), { base: site.revision, token }),
      () => deployJson({ base_revision: site.revision, files: files('x') }, { token }),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status, res.text).toBe(400);
      expect(res.json.error?.code).toBe('bad_request');
      expect(res.json.error?.message).toMatch(/without a site: an update names its site/);
      expect(res.json.agent_message).toContain('?site=');
    }
    expect(sitesOf(account)).toBe(0);
    await expectUnchanged(site, 'based');
  });
});

describe('rules that reject the whole deploy (SPEC 4.1 rule 4), on a live site', () => {
  const hostile: Array<[string, () => Promise<Buffer>, string]> = [
    [
      'a symlink',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: 'link', type: 'symlink', linkname: '/etc/passwd' },
          ]),
        ),
      'link',
    ],
    [
      'a hard link',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: 'hard', type: 'link', linkname: 'index.html' },
          ]),
        ),
      'hard',
    ],
    [
      'a device',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: 'dev', type: 'character-device' },
          ]),
        ),
      'dev',
    ],
    [
      'a FIFO',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: 'pipe', type: 'fifo' },
          ]),
        ),
      'pipe',
    ],
    [
      'a ../ path',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: '../escape.html', content: 'x' },
          ]),
        ),
      '../escape.html',
    ],
    [
      'a backslash ..\\ path',
      async () =>
        readFileSync(
          await zipFromEntries(join(work, `h-${++counter}.zip`), [
            { name: 'index.html', data: Buffer.from('x') },
            { name: 'a\\..\\..\\evil.html', data: Buffer.from('x') },
          ]),
        ),
      'evil.html',
    ],
    [
      'an absolute path',
      async () =>
        readFileSync(
          await tarFromEntries(join(work, `h-${++counter}.tgz`), [
            { name: 'index.html', content: 'x' },
            { name: '/etc/cron.d/x', content: 'x' },
          ]),
        ),
      '/etc/cron.d/x',
    ],
    [
      'a Windows drive path',
      async () =>
        readFileSync(
          await zipFromEntries(join(work, `h-${++counter}.zip`), [
            { name: 'index.html', data: Buffer.from('x') },
            { name: 'C:\\Windows\\x.dll', data: Buffer.from('x') },
          ]),
        ),
      'C:',
    ],
    [
      'a zip symlink',
      async () =>
        readFileSync(
          await zipFromEntries(join(work, `h-${++counter}.zip`), [
            { name: 'index.html', data: Buffer.from('x') },
            { name: 'ln', data: Buffer.from('/etc/passwd'), unixMode: 0o120777 },
          ]),
        ),
      'ln',
    ],
    [
      'paths equal apart from case',
      async () =>
        readFileSync(
          await zipFromEntries(join(work, `h-${++counter}.zip`), [
            { name: 'index.html', data: Buffer.from('x') },
            { name: 'About.html', data: Buffer.from('x') },
            { name: 'about.html', data: Buffer.from('y') },
          ]),
        ),
      'about.html',
    ],
  ];

  it.each(hostile)('refuses %s, naming it, and leaves the live site unchanged', async (_what, make, named) => {
    const site = await createSite(`guarded ${counter}`);
    const marker = `guarded ${counter - 1}`;
    const res = await deploy(await make(), { site: site.name, base: site.revision, token: site.token });
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.json.error?.message).toContain(named);
    await expectUnchanged(site, marker);
  });
});

describe('leak guard (SPEC 4.1 rule 6)', () => {
  // Assembled at run time so this file holds no real-looking key.
  const key = ['AKIA', 'Q3EGV7XM', 'JS2PLN5R'].join('');

  it('blocks a file with a secret key with 422 and {file, line, kind}, never echoing the key', async () => {
    const site = await createSite('leaky');
    const res = await deploy(tgz({ 'index.html': 'x', 'js/config.js': `// config\nconst region = "eu";\nconst id = "${key}";\n` }), {
      site: site.name,
      base: site.revision,
      token: site.token,
    });
    expect(res.status).toBe(422);
    expect(res.json.error?.code).toBe('blocked_secret');
    expect(res.json.error?.details).toEqual({
      file: 'js/config.js',
      line: 3,
      kind: 'aws-access-key-id',
      findings: [{ file: 'js/config.js', line: 3, kind: 'aws-access-key-id' }],
    });
    expect(res.text).not.toContain(key);
    expect(res.text).not.toContain(key.slice(4));
    await expectUnchanged(site, 'leaky');
  });

  it.each([
    ['a placeholder', 'const key = "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx";'],
    ['a Stripe publishable key', `Stripe("${['pk', 'live', '51H8kQ2LpZ9xW3vR7tY6uI0oP'].join('_')}")`],
    ['a Firebase browser key', `apiKey: "${'AIza' + 'SyD4fG7hJ9kL2mN5pQ8rT1vW3xZ6bC0dE9'}"`],
    ['a sha256 hash', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['a UUID', '123e4567-e89b-12d3-a456-426614174000'],
    ['the word password', 'Choose a strong password: at least 12 characters.'],
  ])('lets %s through', async (_what, text) => {
    const res = await deploy(tgz({ 'index.html': `<p>${text}</p>` }));
    expect(res.status).toBe(201);
  });
});

describe('executables (SPEC 4.1 rule 7)', () => {
  it.each([
    ['setup.exe', Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1')],
    ['tool', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(64)])],
    ['install.ps1', Buffer.from('Write-Host hi')],
  ])('refuses %s on an anonymous deploy, saying an account can publish it', async (name, bytes) => {
    const res = await deploy(tgz({ 'index.html': 'x', [`downloads/${name}`]: bytes }));
    expect(res.status).toBe(400);
    expect(res.json.error?.code).toBe('bad_request');
    expect(res.json.error?.details).toEqual({ file: `downloads/${name}` });
    expect(res.json.agent_message).toMatch(/account|API token/i);
  });
});

describe('limits (SPEC 8)', () => {
  it('refuses more than 100 files for an anonymous site with 413', async () => {
    const files: TreeFiles = { 'index.html': 'x' };
    for (let i = 0; i < 100; i++) files[`p/${i}.txt`] = `${i}`;
    const res = await deploy(tgz(files));
    expect(res.status).toBe(413);
    expect(res.json.error?.code).toBe('too_large');
    expect(res.json.agent_message).toBeTruthy();
  });

  it('refuses a file over 1 MB for an anonymous site with 413', async () => {
    const res = await deploy(tgz({ 'index.html': 'x', 'big.bin': Buffer.alloc(1024 * 1024 + 1, 1) }));
    expect(res.status).toBe(413);
    expect(res.json.error?.code).toBe('too_large');
  });

  it('refuses a site over 1 MB in total with 413', async () => {
    const files: TreeFiles = { 'index.html': 'x' };
    for (let i = 0; i < 3; i++) files[`part${i}.bin`] = Buffer.alloc(400 * 1024, i + 1);
    const res = await deploy(tgz(files));
    expect(res.status).toBe(413);
  });

  it('counts the whole resulting site on a patch', async () => {
    const site = await createSite('patch limit');
    const files: Array<{ path: string; content: string }> = [];
    for (let i = 0; i < 99; i++) files.push({ path: `more/${i}.txt`, content: 'x' });
    const res = await deployJson({ site: site.name, base_revision: site.revision, patch: true, files }, { token: site.token });
    expect(res.status).toBe(413);
    await expectUnchanged(site, 'patch limit');
  });

  it('stops a tar entry declaring 10 GB at the limit', async () => {
    const res = await deploy(readFileSync(await tarGzDeclaring(join(work, `decl-${++counter}.tgz`), 'huge.bin', 10 * 1024 ** 3, 2 * 1024 * 1024)));
    expect([400, 413]).toContain(res.status);
  });

  it('stops a zip bomb at the first byte over the limit', async () => {
    const bomb = readFileSync(
      await zipFromEntries(join(work, `bomb-${++counter}.zip`), [
        { name: 'index.html', data: Buffer.from('x') },
        { name: 'zeros.bin', zeros: 200 * 1024 * 1024 },
      ]),
    );
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await deploy(bomb);
    expect(res.status).toBe(413);
    expect(res.json.error?.code).toBe('too_large');
  });

  // The next three each wait on the server reading on for a moment after its refusal (a
  // lingering close), and share nothing: they run side by side.
  it.concurrent('refuses a Content-Length over 90 MB before reading the body', async () => {
    const res = await declaredButUnsent({ port: server.port, host: 'api.localhost', path: '/v1/deploy', headers: {}, declaredBytes: 91 * 1024 * 1024 });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.code).toBe('too_large');
  });

  it.concurrent('stops a chunked upload at the first byte over 90 MB', async () => {
    const res = await chunkedUpload('/v1/deploy', 95);
    expect(res.status).toBe(413);
  });

  it.concurrent('delivers an early refusal to a client still sending its body (no reset)', async () => {
    const res = await chunkedUpload('/v1/deploy?site=someone-else', 10);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text).error.code).toBe('unauthorized');
  });

  it('forgets an upload the client abandons half way', async () => {
    const spooled = (): string[] => readdirSync(join(server.dataDir, 'tmp', 'uploads'));
    const req = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method: 'POST',
      path: '/v1/deploy',
      // Over the size a body may have in memory (32 MB), so it is spooled.
      headers: { host: 'api.localhost', 'content-length': String(40 * 1024 * 1024) },
      agent: false,
    });
    req.on('error', () => undefined);
    req.write(Buffer.alloc(2 * 1024 * 1024, 1));
    // The server is spooling it; then the client goes away.
    expect(await waitUntil(() => spooled().length > 0, 5000, 10)).toBe(true);
    req.destroy();
    expect(await waitUntil(() => spooled().length === 0, 5000, 10)).toBe(true);
    expect((await deploy(tgz({ 'index.html': 'still fine' }))).status).toBe(201);
  });

  it('leaves no spooled upload behind, whatever happened', async () => {
    // In-flight cleanups finish soon after their requests do.
    expect(await waitUntil(() => readdirSync(join(server.dataDir, 'tmp', 'uploads')).length === 0, 5000, 10)).toBe(true);
  });
});

/** An account with an API token, made directly in the store (the admin CLI does the same). */
async function accountWithToken(plan: AccountRecord['plan'] = 'builder'): Promise<{ account: AccountRecord; token: string }> {
  const account = await server.store.createAccount({ email: `person${++counter}@example.com`, plan });
  const token = `pl_${randomBytes(24).toString('base64url')}`;
  await server.store.addApiToken({ accountId: account!.id, tokenHash: hashToken(token), name: 'test' });
  return { account: account!, token };
}

describe('deploys with an API token', () => {
  it('creates a site in the account: claimed, no expiry, no site token or claim link', async () => {
    const { account, token } = await accountWithToken('builder');
    const res = await deploy(tgz({ 'index.html': '<h1>mine</h1>' }), { token });
    expect(res.status).toBe(201);
    expect(res.json.site.claimed).toBe(true);
    expect(res.json.site.expires_at).toBeUndefined();
    expect(res.json.site_token).toBeUndefined();
    expect(res.json.claim_url).toBeUndefined();
    const site = server.store.getSite(res.json.site.name)!;
    expect(site.plan).toBe('builder');
    expect(site.accountId).toBe(account.id);
    expect(server.store.getRole(site.id, account.id)).toBe('owner');
    // Paid plans get no badge.
    expect((await visit(res.json.site.name)).text).not.toContain('data-plinth-badge');
  });

  it('gives Free sites the badge', async () => {
    const { token } = await accountWithToken('free');
    const res = await deploy(tgz({ 'index.html': '<body><h1>free</h1></body>' }), { token });
    expect((await visit(res.json.site.name)).text).toContain('data-plinth-badge');
  });

  it('applies the plan limits instead of the anonymous ones, and allows executables', async () => {
    const { token } = await accountWithToken('builder');
    const res = await deploy(tgz({ 'index.html': 'x', 'big.bin': Buffer.alloc(2 * 1024 * 1024, 3), 'setup.exe': Buffer.from('MZ\x90\x00', 'latin1') }), {
      token,
    });
    expect(res.status).toBe(201);
    expect(res.json.revision.files).toBe(3);
  });

  it.each([
    ['free', 500, 5],
    ['builder', 2000, 50],
  ] as const)('holds a %s site to %i files and %i MB per file (413)', async (plan, maxFiles, maxFileMb) => {
    const { token } = await accountWithToken(plan);
    const many: TreeFiles = { 'index.html': 'x' };
    for (let i = 0; i < maxFiles; i++) many[`f/${i}.txt`] = `${i}`;
    const tooMany = await deploy(tgz(many), { token });
    expect(tooMany.status).toBe(413);
    expect(tooMany.json.error?.code).toBe('too_large');
    expect(tooMany.json.error?.message).toContain(String(maxFiles));

    const big = await deploy(tgz({ 'index.html': 'x', 'big.bin': Buffer.alloc(maxFileMb * 1024 * 1024 + 1, 5) }), { token });
    expect(big.status).toBe(413);
    expect(big.json.error?.details).toMatchObject({ file: 'big.bin' });
    expect(big.json.agent_message).toContain(`${maxFileMb} MB`);
  });

  it.each([
    ['owner', 201],
    ['editor', 201],
    ['viewer', 403],
    ['non-member', 404],
  ] as const)('lets a %s update, or not (%i)', async (role, status) => {
    const owner = await accountWithToken('builder');
    const created = await deploy(tgz({ 'index.html': '<h1>team site</h1>' }), { token: owner.token });
    const siteId = server.store.getSite(created.json.site.name)!.id;
    let token = owner.token;
    if (role !== 'owner') {
      const other = await accountWithToken('free');
      if (role !== 'non-member') await server.store.setMember(siteId, other.account.id, role);
      token = other.token;
    }
    const res = await deploy(tgz({ 'index.html': '<h1>changed</h1>' }), { site: created.json.site.name, base: created.json.revision.id, token });
    expect(res.status).toBe(status);
    if (status !== 201) {
      expect(res.json.error?.code).toBe(status === 403 ? 'forbidden' : 'not_found');
      expect((await visit(created.json.site.name)).text).toContain('team site');
    }
  });
});

describe('API edge', () => {
  it('answers 405 with Allow for GET /v1/deploy and 404 for unknown paths', async () => {
    const wrong = await request({ port: server.port, host: 'api.localhost', path: '/v1/deploy' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(JSON.parse(wrong.text).error.code).toBe('method_not_allowed');
    const missing = await request({ port: server.port, host: 'api.localhost', path: '/v1/nothing' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text).error.code).toBe('not_found');
  });
});

describe('anonymous caps per network', () => {
  it('caps sites created per hour with 429 and Retry-After', async () => {
    const capped = await startTestServer({ PLINTH_ANON_SITES_PER_HOUR: '2', PLINTH_ANON_DEPLOYS_PER_HOUR: '0' });
    try {
      const body = tgz({ 'index.html': 'x' });
      const post = () => request({ port: capped.port, host: 'api.localhost', method: 'POST', path: '/v1/deploy', body });
      expect((await post()).status).toBe(201);
      expect((await post()).status).toBe(201);
      const third = await post();
      expect(third.status).toBe(429);
      expect(JSON.parse(third.text).error.code).toBe('limit');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(third.headers['retry-after'])).toBeLessThanOrEqual(3600);
    } finally {
      await capped.close();
    }
  });

  it('caps deploys per hour, counting site-token updates, and trusts X-Forwarded-For only when told', async () => {
    const capped = await startTestServer({ PLINTH_ANON_SITES_PER_HOUR: '0', PLINTH_ANON_DEPLOYS_PER_HOUR: '2', PLINTH_TRUST_PROXY: '1' });
    try {
      const body = tgz({ 'index.html': 'x' });
      const post = (forwarded: string) =>
        request({ port: capped.port, host: 'api.localhost', method: 'POST', path: '/v1/deploy', body, headers: { 'x-forwarded-for': forwarded } });
      expect((await post('198.51.100.7')).status).toBe(201);
      expect((await post('198.51.100.8')).status).toBe(201);
      expect((await post('198.51.100.9')).status).toBe(429); // same /24
      expect((await post('203.0.113.1')).status).toBe(201); // another network
    } finally {
      await capped.close();
    }
  });
});
