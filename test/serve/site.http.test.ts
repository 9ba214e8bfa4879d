import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/fixtures.js';
import { request } from '../helpers/http.js';
import { publishSite } from '../helpers/sites.js';

const HOUR = 3600_000;
let clock = Date.now();
let port: number;

const page = (title: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>\n${'<p>filler text for compression</p>\n'.repeat(40)}</body></html>`;
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(20_000)]);
const big = randomBytes(3 * 1024 * 1024 + 123);
const bigText = Buffer.from('console.log("streamed");\n'.repeat(20_000));

const get = (name: string, path = '/', headers: Record<string, string> = {}, method = 'GET') =>
  request({ port, host: `${name}.sites.localhost`, path, headers, method });

const server = useTestServer({ PLINTH_STREAM_THRESHOLD_KB: '64' }, { now: () => clock });

beforeAll(async () => {
  port = server.port;
  const { store } = server;

  await publishSite(store, 'paid-site', {
    'index.html': page('Home'),
    'about.html': page('About'),
    'docs/index.html': page('Docs'),
    'blog/post/index.html': page('Post'),
    '404.html': page('Custom not found'),
    'style.css': 'body { color: red; }\n'.repeat(50),
    'app.js': 'console.log(1);\n'.repeat(100),
    'data.json': '{"a":1}',
    'notes.txt': 'plain text',
    'img/logo.png': png,
    'weird.xyz': 'unknown type',
    'big.bin': big,
    'big.js': bigText,
    LICENSE: 'exact file without extension',
    '.env': 'SECRET=hidden-value',
    '.git/config': '[core] hidden-git',
    'node_modules/x/index.js': 'hidden-module',
    '.well-known/security.txt': 'Contact: mailto:sec@example.com',
  });
  await publishSite(store, 'spa-site', { 'index.html': page('SPA shell'), 'main.js': 'app()' });
  await publishSite(
    store,
    'anon-site',
    { 'index.html': page('Anon'), 'plain.html': '<p>no body tag</p>', 'x.css': 'a{}' },
    { plan: 'anonymous', claimed: false, expiresAt: clock + 72 * HOUR },
  );
  await publishSite(store, 'free-site', { 'index.html': '<html><body>one</body><!-- </body> --></html>' }, { plan: 'free' });
  await publishSite(store, 'gone-site', { 'index.html': page('Gone') }, { plan: 'anonymous', claimed: false, expiresAt: clock + HOUR });
  await publishSite(store, 'deleted-site', { 'index.html': page('Deleted') });
  await store.setSiteState('deleted-site', 'deleted');
  await publishSite(store, 'abuse-site', { 'index.html': page('Abuse') });
  await store.setSiteState('abuse-site', 'taken_down');
});

describe('serving rules (SPEC 4.5)', () => {
  it.each([
    ['/', 'Home'],
    ['/index.html', 'Home'],
    ['/about', 'About'],
    ['/about.html', 'About'],
    ['/docs/', 'Docs'],
    ['/docs/index.html', 'Docs'],
    ['/blog/post/', 'Post'],
    ['//about', 'About'],
    ['/./about', 'About'],
    ['/docs/../about', 'About'],
    ['/%61bout', 'About'],
    ['/about?utm=1&x=../../', 'About'],
  ])('%s serves the %s page', async (path, title) => {
    const res = await get('paid-site', path);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<h1>${title}</h1>`);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it.each([
    ['/docs', '/docs/'],
    ['/blog/post', '/blog/post/'],
    ['/docs?tab=2', '/docs/?tab=2'],
    ['/blog/./post', '/blog/post/'],
  ])('%s answers 301 to the folder with its slash, %s', async (path, location) => {
    const res = await get('paid-site', path);
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe(location);
    expect(res.text).toBe('');
  });

  it('serves a file without an extension when it exists', async () => {
    const res = await get('paid-site', '/LICENSE');
    expect(res.status).toBe(200);
    expect(res.text).toBe('exact file without extension');
  });

  it.each(['/missing', '/missing.png', '/docs/nothing/', '/img/'])('%s gets the site 404.html with status 404', async (path) => {
    const res = await get('paid-site', path);
    expect(res.status).toBe(404);
    expect(res.text).toContain('Custom not found');
  });

  it('falls back to index.html for extensionless paths when there is no 404.html', async () => {
    const res = await get('spa-site', '/dashboard/settings');
    expect(res.status).toBe(200);
    expect(res.text).toContain('SPA shell');
  });

  it('gives a default 404 page for missing files with an extension when there is no 404.html', async () => {
    const res = await get('spa-site', '/missing.png');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).not.toContain('SPA shell');
    expect(res.text).not.toMatch(/<script/i);
  });

  it.each([
    ['/style.css', 'text/css; charset=utf-8', 'public, max-age=300'],
    ['/app.js', 'text/javascript; charset=utf-8', 'public, max-age=300'],
    ['/data.json', 'application/json; charset=utf-8', 'public, max-age=300'],
    ['/notes.txt', 'text/plain; charset=utf-8', 'public, max-age=300'],
    ['/img/logo.png', 'image/png', 'public, max-age=300'],
    ['/weird.xyz', 'application/octet-stream', 'public, max-age=300'],
    ['/', 'text/html; charset=utf-8', 'public, max-age=60'],
  ])('%s has type %s and cache %s plus the security headers', async (path, type, cache) => {
    const res = await get('paid-site', path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(
      type === 'text/javascript; charset=utf-8' ? /^(text|application)\/javascript; charset=utf-8$/ : new RegExp(`^${type.replace(/[+]/g, '\\+')}$`),
    );
    expect(res.headers['cache-control']).toBe(cache);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  });

  it.each(['/.env', '/.git/config', '/node_modules/x/index.js'])('never serves hidden or skipped %s', async (path) => {
    const res = await get('paid-site', path);
    expect(res.text).not.toMatch(/hidden-(value|git|module)/);
  });

  it('serves .well-known files', async () => {
    const res = await get('paid-site', '/.well-known/security.txt');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Contact:');
  });
});

describe('hostile paths', () => {
  it.each([
    ['/%2e%2e/%2e%2e/etc/passwd'],
    ['/../../etc/passwd'],
    ['/docs/../../etc/passwd'],
    ['/a%00b'],
    ['/%zz'],
    ['/..%2f..%2fetc%2fpasswd'],
    ['/%5c..%5c..%5cwindows'],
  ])('%s never escapes the site', async (path) => {
    const res = await get('paid-site', path);
    expect([400, 404]).toContain(res.status);
    expect(res.text).not.toContain('root:');
  });

  it('answers 414 for an over-long URL', async () => {
    const res = await get('paid-site', `/${'a'.repeat(5000)}`);
    expect(res.status).toBe(414);
  });

  it.each([1025, 2000, 4050, 4094])('answers 404, not an error, for a path of %i bytes: longer than any a site holds, within the URL limit', async (length) => {
    const res = await get('paid-site', `/${'a'.repeat(length)}`);
    expect(res.status).toBe(404);
  });
});

describe('site states', () => {
  it('answers the default 404 page for an unknown site', async () => {
    const res = await get('no-such-site');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).not.toMatch(/<script/i);
  });

  it('answers 410 for a deleted site and 451 for a site taken down', async () => {
    expect((await get('deleted-site')).status).toBe(410);
    const abuse = await get('abuse-site');
    expect(abuse.status).toBe(451);
    expect(abuse.text).not.toMatch(/<script/i);
  });

  it('answers 410 once an unclaimed site expires, and serves it again when restored', async () => {
    expect((await get('gone-site')).status).toBe(200);
    clock += 2 * HOUR;
    try {
      const res = await get('gone-site');
      expect(res.status).toBe(410);
      expect(res.text).not.toContain('Gone</h1>');
    } finally {
      clock -= 2 * HOUR;
    }
    await server.store.setSiteState('abuse-site', 'active');
    expect((await get('abuse-site')).status).toBe(200);
    await server.store.setSiteState('abuse-site', 'taken_down');
  });
});

describe('publishing while serving', () => {
  it('serves a new revision and a state change at once', async () => {
    const { store } = server;
    const { revision } = await publishSite(store, 'live-site', { 'index.html': page('Version one') });
    expect((await get('live-site')).text).toContain('Version one');
    const files = new Map([['index.html', await store.blobs.putFile(Buffer.from(page('Version two')), 'text/html; charset=utf-8', { compress: true })]]);
    const next = await store.commitRevision({ site: 'live-site', baseRevision: revision, files, kind: 'deploy', createdBy: 'admin' });
    expect(next.ok).toBe(true);
    expect((await get('live-site')).text).toContain('Version two');
    await store.setSiteState('live-site', 'taken_down');
    expect((await get('live-site')).status).toBe(451);
  });
});

describe('badge', () => {
  it('is inserted before </body> on anonymous sites, with a report link', async () => {
    const res = await get('anon-site');
    expect(res.status).toBe(200);
    const badgeAt = res.text.indexOf('data-plinth-badge');
    expect(badgeAt).toBeGreaterThan(res.text.indexOf('<h1>Anon</h1>'));
    expect(badgeAt).toBeLessThan(res.text.lastIndexOf('</body>'));
    expect(res.text).toContain('http://app.localhost/report/anon-site');
    expect(res.text).not.toMatch(/<script/i);
  });

  it('is appended to pages without </body>', async () => {
    const res = await get('anon-site', '/plain.html');
    expect(res.text.startsWith('<p>no body tag</p>')).toBe(true);
    expect(res.text).toContain('data-plinth-badge');
  });

  it('goes before the real </body> on Free sites, not into the comment after it that holds one', async () => {
    const res = await get('free-site');
    expect(res.text.indexOf('data-plinth-badge')).toBeGreaterThan(res.text.indexOf('one'));
    expect(res.text.indexOf('data-plinth-badge')).toBeLessThan(res.text.indexOf('</body>'));
    expect(res.text.endsWith('</style></body><!-- </body> --></html>')).toBe(true);
  });

  it('is not added to paid sites or to non-HTML files', async () => {
    expect((await get('paid-site')).text).not.toContain('data-plinth-badge');
    expect((await get('anon-site', '/x.css')).text).not.toContain('data-plinth-badge');
  });

  it('has its own ETag, and compressed variants that decode to the badged page', async () => {
    const plain = await get('anon-site');
    const br = await get('anon-site', '/', { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(plain.text);
    expect(br.headers.etag).not.toBe(plain.headers.etag);
    const sha = createHash('sha256').update(plain.body).digest('hex');
    expect(plain.headers.etag).toBe(`"${sha}"`);
    expect((await get('anon-site', '/', { 'if-none-match': plain.headers.etag! })).status).toBe(304);
  });
});

describe('HTTP semantics', () => {
  it('answers HEAD with headers and length but no body', async () => {
    const full = await get('paid-site', '/img/logo.png');
    const head = await get('paid-site', '/img/logo.png', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(full.body.length));
    expect(head.headers.etag).toBe(full.headers.etag);
  });

  it('answers HEAD for a streamed file without reading it', async () => {
    const head = await get('paid-site', '/big.bin', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(big.length));
    expect(head.body.length).toBe(0);
  });

  it('uses the content hash as a strong ETag and answers 304 to If-None-Match', async () => {
    const first = await get('paid-site', '/img/logo.png');
    const sha = createHash('sha256').update(png).digest('hex');
    expect(first.headers.etag).toBe(`"${sha}"`);
    for (const header of [`"${sha}"`, `W/"${sha}"`, `"other", "${sha}"`, '*']) {
      const res = await get('paid-site', '/img/logo.png', { 'if-none-match': header });
      expect(res.status).toBe(304);
      expect(res.body.length).toBe(0);
      expect(res.headers.etag).toBe(`"${sha}"`);
    }
    expect((await get('paid-site', '/img/logo.png', { 'if-none-match': '"stale"' })).status).toBe(200);
  });

  it('serves byte ranges of non-HTML files', async () => {
    const res = await get('paid-site', '/img/logo.png', { range: 'bytes=0-7' });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes 0-7/${png.length}`);
    expect(res.body.equals(png.subarray(0, 8))).toBe(true);
    const tail = await get('paid-site', '/img/logo.png', { range: 'bytes=-10' });
    expect(tail.body.equals(png.subarray(png.length - 10))).toBe(true);
    expect((await get('paid-site', '/img/logo.png')).headers['accept-ranges']).toBe('bytes');
  });

  it('applies a range only while If-Range names the current file: a resumed download of an older one gets the whole new file', async () => {
    const etag = (await get('paid-site', '/img/logo.png')).headers.etag as string;
    const current = await get('paid-site', '/img/logo.png', { range: 'bytes=0-7', 'if-range': etag });
    expect(current.status).toBe(206);
    expect(current.body.byteLength).toBe(8);
    for (const ifRange of ['"an-older-file"', `W/${etag}`, 'Tue, 01 Dec 2026 06:00:00 GMT']) {
      const whole = await get('paid-site', '/img/logo.png', { range: 'bytes=0-7', 'if-range': ifRange });
      expect(whole.status, ifRange).toBe(200);
      expect(whole.headers['content-range'], ifRange).toBeUndefined();
      expect(whole.body.equals(png), ifRange).toBe(true);
    }
    const big = await get('paid-site', '/big.bin', { range: 'bytes=10-19', 'if-range': '"an-older-file"' });
    expect(big.status).toBe(200);
  });

  it('answers 416 for a range past the end', async () => {
    const res = await get('paid-site', '/img/logo.png', { range: `bytes=${png.length + 5}-` });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${png.length}`);
  });

  it('ignores ranges on HTML', async () => {
    const res = await get('paid-site', '/', { range: 'bytes=0-3' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1>Home</h1>');
  });

  it('chooses precompressed brotli or gzip by Accept-Encoding', async () => {
    const identity = await get('paid-site', '/style.css');
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    const br = await get('paid-site', '/style.css', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
    const gz = await get('paid-site', '/style.css', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);
    expect(gz.headers.etag).not.toBe(identity.headers.etag);
    expect((await get('paid-site', '/style.css', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! })).status).toBe(304);
    const png1 = await get('paid-site', '/img/logo.png', { 'accept-encoding': 'br' });
    expect(png1.headers['content-encoding']).toBeUndefined();
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('answers %s with 405 and Allow', async (method) => {
    const res = await get('paid-site', '/', {}, method);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('large files', () => {
  it('streams files past the memory threshold intact', async () => {
    const res = await get('paid-site', '/big.bin');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(big.length);
    expect(res.body.equals(big)).toBe(true);
  });

  it('streams a range of a large file', async () => {
    const start = 1_000_000;
    const res = await get('paid-site', '/big.bin', { range: `bytes=${start}-${start + 99_999}` });
    expect(res.status).toBe(206);
    expect(res.body.equals(big.subarray(start, start + 100_000))).toBe(true);
  });

  it('streams a precompressed variant of a large text file', async () => {
    const res = await get('paid-site', '/big.js', { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).equals(bigText)).toBe(true);
  });

  it('keeps sending to a slow reader (backpressure) and survives clients that leave mid-stream', async () => {
    const slow = await new Promise<Buffer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/big.bin', headers: { host: 'paid-site.sites.localhost' }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.pause();
        // Let the server hit a full socket before reading anything.
        setTimeout(() => res.resume(), 300);
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(slow.equals(big)).toBe(true);

    await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<void>((resolve) => {
            const req = httpRequest({ host: '127.0.0.1', port, path: '/big.bin', headers: { host: 'paid-site.sites.localhost' }, agent: false }, (res) => {
              res.once('data', () => {
                req.destroy();
                resolve();
              });
            });
            req.on('error', () => resolve());
            req.end();
          }),
      ),
    );
    const after = await get('paid-site', '/big.bin');
    expect(after.body.equals(big)).toBe(true);
  });
});

describe('other hosts', () => {
  it('app.localhost answers an unknown path with its own 404 page', async () => {
    const res = await request({ port, host: 'app.localhost', path: '/anything' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('Page not found');
  });

  it.each(['api.localhost', 'mcp.localhost', 'example.com'])('%s answers 404 JSON in the error shape', async (host) => {
    const res = await request({ port, host, path: '/anything' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(res.text) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_found');
    expect(body.error.message.length).toBeGreaterThan(0);
  });

  it('localhost (the docs host) answers an unknown page with a 404 page', async () => {
    const res = await request({ port, host: 'localhost', path: '/anything' });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });
});
