import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildDocsSite, GUIDE_DIR, prefersMarkdown } from '../../src/docs/index.js';
import { request } from '../helpers/http.js';
import { useTestServer } from '../helpers/fixtures.js';

const get = (path: string, headers: Record<string, string> = {}) => request({ port: server.port, host: 'localhost', path, headers });

const server = useTestServer();

describe('docs host', () => {
  it('serves the landing page with the security headers, an ETag and a cache lifetime', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(res.text).toContain('curl --data-binary @- http://api.localhost');
    expect(res.text).not.toContain('{{');
  });

  it('lists in llms.txt only links that answer 200 with Markdown (or the OpenAPI JSON)', async () => {
    const res = await get('/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const lines = res.text.split('\n');
    expect(lines[0]).toBe('# Plinth');
    expect(lines.find((line) => line.startsWith('> '))).toBeDefined();
    expect(lines.filter((line) => line.startsWith('## ')).length).toBeGreaterThanOrEqual(3);
    const links = [...res.text.matchAll(/^- \[[^\]]+\]\(([^)]+)\): \S/gm)].map((m) => new URL(m[1]!));
    expect(links.length).toBeGreaterThanOrEqual(10);
    for (const link of links) {
      const page = await get(link.pathname);
      expect(page.status, link.href).toBe(200);
      if (link.pathname.endsWith('.md')) expect(page.headers['content-type'], link.href).toBe('text/markdown; charset=utf-8');
      else if (link.pathname.endsWith('.json')) expect(page.headers['content-type']).toBe('application/json; charset=utf-8');
      else expect(page.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(page.text).not.toContain('{{');
      expect(page.text).not.toContain('<!-- expect');
    }
  });

  it('has every guide in llms-full.txt, and the agent guide as Markdown', async () => {
    const full = await get('/llms-full.txt');
    const agent = await get('/agent-guide.md');
    expect(agent.text.startsWith('# Agent publishing guide')).toBe(true);
    expect(full.text).toContain(agent.text.trimEnd());
    expect(agent.headers['access-control-allow-origin']).toBe('*');
  });

  it('links every page only to pages and anchors that exist', async () => {
    const site = buildDocsSite(server.config);
    const pages = site.paths().filter((path) => !/\.(md|txt|json)$/.test(path));
    const ids = new Map<string, Set<string>>();
    const bodies = new Map<string, string>();
    for (const path of pages) {
      const text = (await get(path)).text;
      bodies.set(path, text);
      ids.set(path, new Set([...text.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!)));
    }
    for (const [path, text] of bodies) {
      for (const [, href] of text.matchAll(/\shref="([^"]+)"/g)) {
        if (/^https?:/.test(href!)) continue;
        const [target, fragment] = href!.split('#');
        const targetPath = target === '' ? path : target!;
        const res = await get(targetPath);
        expect(res.status, `${path} links to ${href}`).toBe(200);
        if (fragment && ids.has(targetPath)) expect(ids.get(targetPath)!.has(fragment), `${path} links to ${href}`).toBe(true);
      }
    }
  });

  it('gives every heading of every page an id, unique on its page', async () => {
    const site = buildDocsSite(server.config);
    for (const path of site.paths().filter((p) => !/\.(md|txt|json)$/.test(p))) {
      const text = (await get(path)).text;
      const headings = [...text.matchAll(/<h([1-6])([^>]*)>/g)];
      expect(headings.length, path).toBeGreaterThan(0);
      const ids = headings.map((m) => /\sid="([^"]+)"/.exec(m[2]!)?.[1]);
      expect(
        headings.filter((_m, i) => ids[i] === undefined).map((m) => m[0]),
        `${path}: headings without an id`,
      ).toEqual([]);
      const all = [...text.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!);
      expect(
        all.filter((id, i) => all.indexOf(id) !== i),
        `${path}: repeated ids`,
      ).toEqual([]);
    }
  });

  it('answers 304 to If-None-Match, HEAD without a body, and compresses what is worth it', async () => {
    const first = await get('/publishing');
    const again = await get('/publishing', { 'if-none-match': first.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body.byteLength).toBe(0);
    const head = await request({ port: server.port, host: 'localhost', path: '/publishing', method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(first.body.byteLength));
    expect(head.body.byteLength).toBe(0);
    const br = await get('/publishing', { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toContain('Accept-Encoding');
    expect(br.headers.etag).not.toBe(first.headers.etag);
    expect(brotliDecompressSync(br.body).toString()).toBe(first.text);
    const gzip = await get('/publishing', { 'accept-encoding': 'gzip' });
    expect(gunzipSync(gzip.body).toString()).toBe(first.text);
  });

  it('gives agents that ask for Markdown the Markdown at the page address', async () => {
    const res = await get('/errors', { accept: 'text/markdown, text/html;q=0.5' });
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.headers.vary).toContain('Accept');
    expect(res.text.startsWith('# Errors')).toBe(true);
  });

  it('serves the shared stylesheet and the icon', async () => {
    const page = await get('/');
    const css = /href="(\/assets\/plinth\.[0-9a-f]+\.css)"/.exec(page.text)![1]!;
    const res = await get(css);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toContain('immutable');
    expect((await get('/favicon.ico')).headers['content-type']).toBe('image/svg+xml');
  });

  it.each([
    ['/no-such-page', 404, 'text/html; charset=utf-8'],
    ['/publishing/', 301, undefined],
  ])('answers %s with %i', async (path, status, type) => {
    const res = await get(path);
    expect(res.status).toBe(status);
    if (type) expect(res.headers['content-type']).toBe(type);
    if (status === 301) expect(res.headers.location).toBe('/publishing');
  });

  it('refuses methods other than GET and HEAD', async () => {
    const res = await request({ port: server.port, host: 'localhost', path: '/', method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('escapes the address on the not-found page', async () => {
    const res = await get('/%3Cscript%3E<b>');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('<b>');
  });
});

describe('docs content', () => {
  const site = buildDocsSite(loadConfig({ PLINTH_PORT: '8080' }));

  it('shows a deployment its own public addresses', () => {
    const custom = buildDocsSite(
      loadConfig({
        PLINTH_PUBLIC_API_URL: 'https://api.example.com',
        PLINTH_PUBLIC_SITE_URL: 'https://{name}.example.site',
        PLINTH_PUBLIC_DOCS_URL: 'https://docs.example.com',
        PLINTH_PUBLIC_APP_URL: 'https://app.example.com',
      }),
    );
    const md = custom.respond({ method: 'GET', path: '/agent-guide.md' }).body.toString();
    expect(md).toContain('https://api.example.com/v1/deploy');
    expect(md).toContain('https://sunny-otter-4821.example.site');
    expect(md).not.toMatch(/localhost:8080/);
    expect(custom.respond({ method: 'GET', path: '/llms.txt' }).body.toString()).toContain('https://docs.example.com/agent-guide.md');
  });

  it('shows a local server on another port its own port everywhere: pages, Markdown, llms-full.txt, OpenAPI', () => {
    const other = buildDocsSite(loadConfig({ PLINTH_PORT: '9123' }));
    const stray: string[] = [];
    for (const path of other.paths()) {
      const text = other.respond({ method: 'GET', path }).body.toString();
      for (const line of text.split('\n')) {
        // The cluster example's upstream nodes are other machines, on a port of the example's choosing.
        if (line.includes(':8080') && !line.includes('upstream plinth')) stray.push(`${path}: ${line.trim().slice(0, 160)}`);
      }
    }
    expect(stray).toEqual([]);
    const page = (path: string): string => other.respond({ method: 'GET', path }).body.toString();
    expect(page('/')).toContain('http://&lt;name&gt;.sites.localhost:9123');
    expect(page('/serving.md')).toContain('`http://<name>.sites.localhost:9123`');
    expect(page('/quick-start.md')).toContain('Published revision 1: http://…sites.localhost:9123');
  });

  it('has a title, summary and section for every guide, and an agent guide, quick start and errors page', () => {
    const slugs = site.guides.map((guide) => guide.slug);
    expect(slugs).toEqual(
      expect.arrayContaining(['index', 'agent-guide', 'quick-start', 'publishing', 'sites-api', 'serving', 'authentication', 'errors', 'limits', 'operating']),
    );
    expect(readFileSync(new URL('index.md', GUIDE_DIR), 'utf8')).toMatch(/^---\ntitle: /);
  });
});

describe('negotiation rules', () => {
  // Accept-Encoding is negotiated by the rules every host shares (test/http/http-rules.test.ts).
  it.each([
    [undefined, false],
    ['text/html', false],
    ['text/markdown', true],
    ['text/markdown, text/html', true],
    ['text/html, text/markdown', false],
    ['text/html;q=0.9, text/markdown', true],
    ['*/*', false],
  ])('Accept %s prefers Markdown: %s', (header, expected) => {
    expect(prefersMarkdown(header)).toBe(expected);
  });
});
