import { describe, expect, it } from 'vitest';
import {
  compileHeaders,
  headersFor,
  isCacheInstruction,
  servableHeaders,
  withSiteHeaders,
  type CompiledHeaders,
  type HeaderPair,
  type RulesFileLimits,
} from '../../src/rules/index.js';

const LIMITS: RulesFileLimits = { maxEntries: 100, maxLineChars: 2000, maxFileBytes: 1024 * 1024 };

function compiled(text: string, limits = LIMITS): CompiledHeaders {
  const result = compileHeaders(text, limits);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.error)}`);
  return result.compiled;
}

const SERVER: HeaderPair[] = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Cache-Control', 'public, max-age=60'],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'strict-origin-when-cross-origin'],
  ['Vary', 'Accept-Encoding'],
];

/** The headers an answer for `path` ends up with, as `Name: value` lines. */
function answered(text: string, path: string): string[] {
  const site = headersFor(
    compiled(text),
    path.split('/').filter((s) => s !== ''),
  );
  return (site ? withSiteHeaders(SERVER, site) : SERVER).map(([name, value]) => `${name}: ${value}`);
}

const NETLIFY = `# Netlify's form
/*
  X-Frame-Options: DENY
  Link: </style.css>; rel=preload; as=style
  Link: </app.js>; rel=preload; as=script

/assets/*
  Cache-Control: public, max-age=31536000, immutable
  Access-Control-Allow-Origin: *

/blog/:slug
  X-Robots-Tag: noindex
`;

const CLOUDFLARE = `/*
  X-Robots-Tag: noindex
  Content-Security-Policy: default-src 'self'
/public/*
  ! X-Robots-Tag
  ! Referrer-Policy
/public/embed
  ! Content-Security-Policy
  Content-Security-Policy: frame-ancestors *
`;

describe('_headers: what an answer gets', () => {
  it.each([
    [
      'a block for every path (Netlify)',
      NETLIFY,
      '/',
      ['X-Frame-Options: DENY', 'Link: </style.css>; rel=preload; as=style, </app.js>; rel=preload; as=script'],
    ],
    ['Cache-Control replaced by the site', NETLIFY, '/assets/app.js', ['Cache-Control: public, max-age=31536000, immutable', 'Access-Control-Allow-Origin: *']],
    ['a placeholder block', NETLIFY, '/blog/hello', ['X-Robots-Tag: noindex']],
    ['a placeholder that needs its segment', NETLIFY, '/blog', ['X-Frame-Options: DENY']],
    ['a header removed by a narrower block (Cloudflare)', CLOUDFLARE, '/public/page', ["Content-Security-Policy: default-src 'self'"]],
    ['a server header removed by the site', CLOUDFLARE, '/public/page', ['!Referrer-Policy']],
    ['a header removed and set again', CLOUDFLARE, '/public/embed', ['Content-Security-Policy: frame-ancestors *']],
    [
      'the same header from two blocks joined',
      '/*\n  Permissions-Policy: camera=()\n/cam/*\n  Permissions-Policy: microphone=()',
      '/cam/x',
      ['Permissions-Policy: camera=(), microphone=()'],
    ],
    ['Vary added to, not replaced', '/*\n  Vary: Origin', '/', ['Vary: Accept-Encoding, Origin']],
    ['nosniff allowed when it says nosniff', '/*\n  X-Content-Type-Options: nosniff', '/', ['X-Content-Type-Options: nosniff']],
    ['no block for another path', '/assets/*\n  X-A: 1', '/other', ['!X-A']],
    // Issue 36: forms both hosts accept.
    ['an indented path line', '  /docs/*\n    X-A: 1', '/docs/x', ['X-A: 1']],
    ['header lines not indented', '/*\nX-A: 1', '/x', ['X-A: 1']],
    ['a * inside a segment (any file ending so, at any depth)', '/*.xml\n  X-A: 1', '/feeds/blog/atom.xml', ['X-A: 1']],
    ['a * inside a segment, another ending', '/*.xml\n  X-A: 1', '/feeds/blog/atom.json', ['!X-A']],
    ['a * with a prefix', '/assets/app-*.js\n  X-A: 1', '/assets/app-1f2e.js', ['X-A: 1']],
    ['a * between segments', '/blog/*/feed\n  X-A: 1', '/blog/2024/01/feed', ['X-A: 1']],
    ['a * between segments, matching nothing', '/blog/*/feed\n  X-A: 1', '/blog/feed', ['X-A: 1']],
    ['a * between segments, another end', '/blog/*/feed\n  X-A: 1', '/blog/2024/feeds', ['!X-A']],
    ['spaces in a path line', '/some page\n  X-A: 1', '/some page', ['X-A: 1']],
    ['// in a path line', '//docs//guide\n  X-A: 1', '/docs/guide', ['X-A: 1']],
    [':splat as a placeholder name', '/blog/:splat\n  X-A: 1', '/blog/post', ['X-A: 1']],
    [':splat as a placeholder, one segment only', '/blog/:splat\n  X-A: 1', '/blog/a/b', ['!X-A']],
    ['a comment after the path', '/*\n  # X-B: 2\n  X-A: 1', '/', ['X-A: 1', '!X-B']],
  ])('%s', (_name, text, path, expected) => {
    const lines = answered(text, path);
    for (const line of expected) {
      if (line.startsWith('!')) expect(lines.some((l) => l.startsWith(`${line.slice(1)}:`))).toBe(false);
      else expect(lines).toContain(line);
    }
    // The server's framing and validators are never touched.
    expect(lines[0]).toBe('Content-Type: text/html; charset=utf-8');
    expect(lines).toContain('X-Content-Type-Options: nosniff');
  });

  it.each([
    ['its host', 'www.example.org', ['X-A: 1']],
    ['another host', 'example.org', ['!X-A']],
    ['no host known', undefined, ['!X-A']],
  ])('applies a block for one host name to requests for %s', (_name, host, expected) => {
    const rules = compiled('https://www.example.org/*\n  X-A: 1');
    expect(rules.usesHost).toBe(true);
    const site = headersFor(rules, ['page'], host);
    const lines = (site?.set ?? []).map(([name, value]) => `${name}: ${value}`);
    for (const line of expected) {
      if (line.startsWith('!')) expect(lines.some((l) => l.startsWith(`${line.slice(1)}:`))).toBe(false);
      else expect(lines).toContain(line);
    }
  });

  it('keeps blocks in file order and headers in the order written', () => {
    const site = headersFor(compiled('/*\n  B: 1\n  A: 2\n/x\n  C: 3'), ['x'])!;
    expect(site.set.map(([name]) => name)).toEqual(['B', 'A', 'C']);
  });

  it('keeps rules with nothing refused as they are', () => {
    const rules = compiled('/*\n  X-Frame-Options: DENY\n  ! Referrer-Policy');
    expect(servableHeaders(rules)).toBe(rules);
  });

  it('leaves out headers refused since a deploy stored them (rules compiled before the refusal)', () => {
    const stored: CompiledHeaders = {
      blocks: [
        {
          line: 1,
          pattern: compiled('/*\n  X-A: 1').blocks[0]!.pattern,
          set: [
            ['Clear-Site-Data', '"cookies"'],
            ['X-Accel-Redirect', '/internal/secrets'],
            ['X-Sendfile', '/etc/passwd'],
            ['Surrogate-Control', 'max-age=86400'],
            ['X-Frame-Options', 'DENY'],
          ],
          remove: [],
        },
      ],
    };
    const lines = withSiteHeaders(SERVER, headersFor(servableHeaders(stored), ['page'])!).map(([name]) => name.toLowerCase());
    expect(lines).toContain('x-frame-options');
    for (const refused of ['clear-site-data', 'x-accel-redirect', 'x-sendfile', 'surrogate-control']) expect(lines).not.toContain(refused);
  });

  it('answers undefined when no block matches, so a path costs nothing extra', () => {
    expect(headersFor(compiled('/a\n  X: 1'), ['b'])).toBeUndefined();
  });

  it('merges each set of matching blocks once, and gives every path the headers of its own set', () => {
    const rules = compiled('/*\n  Vary: Cookie\n  A: 1\n/docs/*\n  B: 2\n/docs/x\n  ! A');
    const plain = headersFor(rules, ['p']);
    expect(headersFor(rules, ['q'])).toBe(plain);
    expect(headersFor(rules, ['docs', 'y'])).toEqual({
      set: [
        ['Vary', 'Cookie'],
        ['A', '1'],
        ['B', '2'],
      ],
      remove: [],
    });
    expect(headersFor(rules, ['docs', 'x'])).toEqual({
      set: [
        ['Vary', 'Cookie'],
        ['B', '2'],
      ],
      remove: ['a'],
    });
    // Applying shared headers twice gives the same answer (Vary joined each time, nothing used up).
    const first = withSiteHeaders(SERVER, plain!);
    expect(withSiteHeaders(SERVER, plain!)).toEqual(first);
    expect(first).toContainEqual(['Vary', 'Accept-Encoding, Cookie']);
    expect(first.filter(([name]) => name === 'Vary')).toHaveLength(1);
  });
});

describe('cache instructions that a protected site does not keep', () => {
  it.each<[string, boolean]>([
    ['cache-control', true],
    ['cdn-cache-control', true],
    ['cloudflare-cdn-cache-control', true],
    ['vercel-cdn-cache-control', true],
    ['netlify-cdn-cache-control', true],
    ['fastly-cdn-cache-control', true],
    ['x-litespeed-cache-control', true],
    ['x-litespeed-cache', true],
    ['expires', true],
    ['x-accel-expires', true],
    ['pragma', true],
    ['edge-control', true],
    ['surrogate-control', true],
    ['surrogate-key', true],
    ['netlify-vary', true],
    ['cache-tag', true],
    ['x-frame-options', false],
    ['content-security-policy', false],
    ['link', false],
    ['vary', false],
    ['access-control-allow-origin', false],
  ])('%s: %s', (name, expected) => {
    expect(isCacheInstruction(name)).toBe(expected);
  });
});

describe('_headers: refusals', () => {
  it.each([
    ['Content-Length', '/*\n  Content-Length: 5', 2, 'header_not_allowed'],
    ['Content-Encoding', '/*\n  Content-Encoding: gzip', 2, 'header_not_allowed'],
    ['Transfer-Encoding', '/*\n  Transfer-Encoding: chunked', 2, 'header_not_allowed'],
    ['Content-Range', '/*\n  Content-Range: bytes 0-1/2', 2, 'header_not_allowed'],
    ['ETag', '/*\n  ETag: "x"', 2, 'header_not_allowed'],
    ['Set-Cookie', '/*\n  Set-Cookie: session=1', 2, 'header_not_allowed'],
    ['set-cookie in lower case', '/*\n  set-cookie: a=1', 2, 'header_not_allowed'],
    ['Content-Type', '/x.txt\n  Content-Type: text/html', 2, 'header_not_allowed'],
    ['Location', '/*\n  Location: https://evil.example/', 2, 'header_not_allowed'],
    ['Connection', '/*\n  Connection: close', 2, 'header_not_allowed'],
    ['another X-Content-Type-Options', '/*\n  X-Content-Type-Options: none', 2, 'header_not_allowed'],
    ['removing X-Content-Type-Options', '/*\n  ! X-Content-Type-Options', 2, 'header_not_removable'],
    ['removing Vary', '/*\n  ! Vary', 2, 'header_not_removable'],
    ['removing Content-Length', '/*\n  ! Content-Length', 2, 'header_not_removable'],
    ['a CR inside a value', '/*\n  X-A: 1\rSet-Cookie: a=1', 2, 'bad_character'],
    ['a NUL', '/*\n  X-A: 1\u0000', 2, 'bad_character'],
    ['a non-ASCII value', '/*\n  X-A: café', 2, 'bad_character'],
    ['a header name with a space', '/*\n  X A: 1', 2, 'bad_header_name'],
    ['a header without a colon', '/*\n  X-A 1', 2, 'not_a_header'],
    ['an empty value', '/*\n  X-A:', 2, 'empty_value'],
    ['a header before any path', '  X-A: 1', 1, 'header_without_path'],
    ['a path with a header on its line', '/* X-A: 1', 1, 'bad_path'],
    ['a rule for one host name over http (Cloudflare refuses it too)', 'http://example.com/*\n  X-A: 1', 1, 'not_https'],
    ["a port in a rule's host", 'https://example.com:8080/*\n  X-A: 1', 1, 'port_in_host'],
    ['two * in one path', '/*/assets/*\n  X-A: 1', 1, 'multiple_splats'],
    ['a * and :splat in one path', '/blog/*/:splat\n  X-A: 1', 1, 'splat_twice'],
    ['a removal without its space (Cloudflare refuses it too)', '/*\n  !X-Robots-Tag', 2, 'bad_header_name'],
    // Clear-Site-Data reaches every site of the registrable domain: one site could sign visitors out of all.
    ['Clear-Site-Data', '/*\n  Clear-Site-Data: "cookies"', 2, 'header_not_allowed'],
    ['Clear-Site-Data with every type', '/logout\n  clear-site-data: "*"', 2, 'header_not_allowed'],
    ['removing Clear-Site-Data', '/*\n  ! Clear-Site-Data', 2, 'header_not_removable'],
    // Instructions to the proxy or cache in front of the server.
    ['X-Accel-Redirect', '/*\n  X-Accel-Redirect: /internal/secrets', 2, 'header_not_allowed'],
    ['X-Accel-Expires', '/*\n  X-Accel-Expires: 86400', 2, 'header_not_allowed'],
    ['X-Accel-Buffering', '/*\n  X-Accel-Buffering: no', 2, 'header_not_allowed'],
    ['X-Accel-Limit-Rate', '/*\n  x-accel-limit-rate: 1', 2, 'header_not_allowed'],
    ['X-Sendfile', '/*\n  X-Sendfile: /etc/passwd', 2, 'header_not_allowed'],
    ['X-Sendfile-Type', '/*\n  X-Sendfile-Type: X-Accel-Redirect', 2, 'header_not_allowed'],
    ['X-Sendfile2', '/*\n  X-Sendfile2: /etc/passwd 0-', 2, 'header_not_allowed'],
    ['X-Lighttpd-Send-File', '/*\n  X-LIGHTTPD-send-file: /etc/passwd', 2, 'header_not_allowed'],
    ['X-LiteSpeed-Location', '/*\n  X-LiteSpeed-Location: /etc/passwd', 2, 'header_not_allowed'],
    ['X-LiteSpeed-Cache-Control', '/*\n  X-LiteSpeed-Cache-Control: public, max-age=86400', 2, 'header_not_allowed'],
    ['X-Reproxy-URL', '/*\n  X-Reproxy-URL: http://169.254.169.254/', 2, 'header_not_allowed'],
    ['Surrogate-Control', '/*\n  Surrogate-Control: max-age=86400', 2, 'header_not_allowed'],
    ['Surrogate-Key', '/*\n  Surrogate-Key: all', 2, 'header_not_allowed'],
    ['removing X-Accel-Redirect', '/*\n  ! X-Accel-Redirect', 2, 'header_not_removable'],
  ])('refuses %s', (_name, text, line, reason) => {
    const result = compileHeaders(text, LIMITS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ file: '_headers', line, reason });
  });

  it.each([
    ['blocks', { ...LIMITS, maxEntries: 2 }, '/a\n  X: 1\n/b\n  X: 1\n/c\n  X: 1', 5, 'too_many_blocks'],
    ['line length', { ...LIMITS, maxLineChars: 30 }, `/*\n  X-A: ${'x'.repeat(40)}`, 2, 'line_too_long'],
    ['file size', { ...LIMITS, maxFileBytes: 8 }, '/*\n  X-A: 1', 0, 'file_too_large'],
  ])('caps %s', (_name, limits, text, line, reason) => {
    const result = compileHeaders(text, limits);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ line, reason });
  });

  it('lists every refused line, and does not refuse the header lines of a refused path again', () => {
    const text = ['/ok', '  X-A: 1', '  Set-Cookie: a=1', '/a/*/b/*', '  X-B: 2', '/c', '  X-C', '  ! Vary'].join('\n');
    const result = compileHeaders(text, LIMITS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => [error.line, error.reason])).toEqual([
      [3, 'header_not_allowed'],
      [4, 'multiple_splats'],
      [7, 'not_a_header'],
      [8, 'header_not_removable'],
    ]);
    expect(result.total).toBe(4);
    expect(result.kept.blocks.map((block) => block.line)).toEqual([1, 6]);
  });

  it('caps paths with a * inside them', () => {
    const text = ['/*.xml', '  X-A: 1', '/*.json', '  X-A: 1', '/a/*', '  X-A: 1', '/*.txt', '  X-A: 1'].join('\n');
    const result = compileHeaders(text, { ...LIMITS, maxInnerSplats: 2 });
    expect(result.ok ? [] : result.errors.map((error) => [error.line, error.reason])).toEqual([[7, 'too_many_inner_splats']]);
    expect(compileHeaders(text, { ...LIMITS, maxInnerSplats: 0 }).ok).toBe(true);
  });

  it('has no caps when they are 0', () => {
    const text = Array.from({ length: 300 }, (_, i) => `/p${i}\n  X-A: ${'v'.repeat(3000)}`).join('\n');
    expect(compileHeaders(text, { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0 }).ok).toBe(true);
  });
});
