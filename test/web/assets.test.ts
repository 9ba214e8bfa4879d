import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadPageAssets } from '../../src/web/index.js';

const assets = loadPageAssets();

describe('page assets', () => {
  const css = assets.href('plinth.css');
  const js = assets.href('plinth.js');

  it('gives each asset a content-hashed address', () => {
    expect(css).toMatch(/^\/assets\/plinth\.[0-9a-f]{12}\.css$/);
    expect(js).toMatch(/^\/assets\/plinth\.[0-9a-f]{12}\.js$/);
    expect(assets.href('favicon.svg')).toMatch(/^\/assets\/favicon\.[0-9a-f]{12}\.svg$/);
  });

  it.each([
    [css, 'text/css; charset=utf-8', 'public, max-age=31536000, immutable'],
    [js, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'],
    ['/assets/plinth.css', 'text/css; charset=utf-8', 'public, max-age=300'],
    ['/assets/plinth.0123456789ab.css', 'text/css; charset=utf-8', 'public, max-age=300'],
    ['/favicon.ico', 'image/svg+xml', 'public, max-age=300'],
    ['/favicon.svg', 'image/svg+xml', 'public, max-age=300'],
  ])('serves %s as %s with %s', (path, type, cache) => {
    const answer = assets.respond(path)!;
    expect(answer.status).toBe(200);
    expect(answer.headers['Content-Type']).toBe(type);
    expect(answer.headers['Cache-Control']).toBe(cache);
    expect(answer.headers.ETag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(answer.headers['X-Content-Type-Options']).toBe('nosniff');
    expect(answer.body.byteLength).toBeGreaterThan(100);
  });

  it.each(['/', '/assets/', '/assets/other.css', '/assets/../package.json', '/assets/plinth.css/x', '/plinth.css', '/assets/PLINTH.CSS'])(
    'knows nothing at %s',
    (path) => {
      expect(assets.respond(path)).toBeUndefined();
    },
  );

  it('answers 304 to a matching If-None-Match', () => {
    const etag = assets.respond(css)!.headers.ETag!;
    const answer = assets.respond(css, etag)!;
    expect(answer.status).toBe(304);
    expect(answer.body.byteLength).toBe(0);
    expect(assets.respond(css, '"other"')!.status).toBe(200);
  });

  it.each([
    ['br, gzip', 'br'],
    ['gzip, deflate', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['identity', undefined],
    [undefined, undefined],
  ])('sends the stylesheet compressed as %j asks: %s', (acceptEncoding, encoding) => {
    const plain = assets.respond(css)!;
    const answer = assets.respond(css, undefined, acceptEncoding)!;
    expect(answer.headers.Vary).toBe('Accept-Encoding');
    expect(answer.headers['Content-Encoding']).toBe(encoding);
    const decoded = encoding === 'br' ? brotliDecompressSync(answer.body) : encoding === 'gzip' ? gunzipSync(answer.body) : answer.body;
    expect(decoded.equals(plain.body)).toBe(true);
    if (encoding !== undefined) {
      expect(answer.body.byteLength).toBeLessThan(plain.body.byteLength / 2);
      // Each form has its own ETag, which a revalidation of that form matches.
      expect(answer.headers.ETag).not.toBe(plain.headers.ETag);
      expect(assets.respond(css, answer.headers.ETag, acceptEncoding)!.status).toBe(304);
    }
  });

  it('keeps the stylesheet free of imports and remote fonts', () => {
    const text = assets.respond('/assets/plinth.css')!.body.toString('utf8');
    expect(text).not.toMatch(/@import|url\(\s*['"]?https?:/);
    expect(text).toContain(':focus-visible');
    expect(text).toContain('.error-summary');
  });
});
