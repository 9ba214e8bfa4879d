import { describe, expect, it } from 'vitest';
import {
  compileRedirects,
  describeRuleError,
  describeRuleErrors,
  matchRedirect,
  redirectTarget,
  withRequestQuery,
  type CompiledRedirects,
  type RulesFileLimits,
} from '../../src/rules/index.js';

const LIMITS: RulesFileLimits = { maxEntries: 2000, maxLineChars: 1000, maxFileBytes: 1024 * 1024 };

function compiled(text: string, limits = LIMITS): CompiledRedirects {
  const result = compileRedirects(text, limits);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.error)}`);
  return result.compiled;
}

/** Where a request goes: `status location`, `status →path` for rewrites and pages, or `none`. */
function outcome(text: string, path: string, options: { query?: string; fileExists?: boolean } = {}): string {
  const rules = compiled(text);
  const segments = path.split('/').filter((s) => s !== '');
  const match = matchRedirect(rules, segments, options.fileExists ?? false, () => new URLSearchParams(options.query ?? ''));
  if (!match) return 'none';
  const { status } = match.rule;
  if (status === 200 || status === 404 || status === 410) {
    const to = match.rule.to.map((part) => (typeof part === 'string' ? part : (match.params[part.p] ?? ''))).join('');
    return `${status} →${to}`;
  }
  const location = redirectTarget(match);
  return `${status} ${match.rule.ownQuery ? location : withRequestQuery(location, options.query ?? '')}`;
}

describe('_redirects: matching', () => {
  it.each([
    ['a plain rule with the default status', '/old /new', '/old', {}, '301 /new'],
    ['a trailing slash on either side', '/old/ /new', '/old', {}, '301 /new'],
    ['the first matching rule', '/a /first 302\n/a /second 301', '/a', {}, '302 /first'],
    ['a later rule when the first does not match', '/b /first\n/a /second 307', '/a', {}, '307 /second'],
    ['no rule for another path', '/a /b', '/c', {}, 'none'],
    ['not a prefix without a splat', '/a /b', '/a/x', {}, 'none'],
    ['a splat', '/news/* /blog/:splat', '/news/2024/01/story', {}, '301 /blog/2024/01/story'],
    ['a splat matching nothing', '/news/* /blog/:splat', '/news', {}, '301 /blog/'],
    ['a root splat', '/* /index.html 200', '/any/deep/path', {}, '200 →/index.html'],
    ['placeholders, one segment each', '/blog/:year/:slug /posts/:slug-:year', '/blog/2024/hello', {}, '301 /posts/hello-2024'],
    ['a placeholder never spans segments', '/blog/:slug /x/:slug', '/blog/a/b', {}, 'none'],
    ['a query condition', '/store id=:id /products/:id 301', '/store', { query: 'id=42' }, '301 /products/42'],
    ['a query condition that is absent', '/store id=:id /products/:id 301', '/store', { query: 'x=1' }, 'none'],
    ['a literal query condition', '/s lang=de /de/s 302', '/s', { query: 'lang=de' }, '302 /de/s'],
    ['a literal query condition that differs', '/s lang=de /de/s 302', '/s', { query: 'lang=fr' }, 'none'],
    ['the query kept', '/old /new', '/old', { query: 'a=1&b=2' }, '301 /new?a=1&b=2'],
    ['the query of the target instead', '/old /new?from=old', '/old', { query: 'a=1' }, '301 /new?from=old'],
    ['the query before the fragment', '/old /new#part', '/old', { query: 'a=1' }, '301 /new?a=1#part'],
    ['302', '/a /b 302', '/a', {}, '302 /b'],
    ['303', '/a /b 303', '/a', {}, '303 /b'],
    ['307', '/a /b 307', '/a', {}, '307 /b'],
    ['308', '/a /b 308', '/a', {}, '308 /b'],
    ['an https target', '/docs/* https://docs.example.com/:splat 301', '/docs/a/b', {}, '301 https://docs.example.com/a/b'],
    ['a 200 rewrite', '/app/* /app/index.html 200', '/app/settings', {}, '200 →/app/index.html'],
    ['a 404 page', '/shop/* /shop/404.html 404', '/shop/x', {}, '404 →/shop/404.html'],
    ['a 410', '/old-offer /gone.html 410', '/old-offer', {}, '410 →/gone.html'],
    ['no unforced rule over an existing file', '/about /elsewhere', '/about', { fileExists: true }, 'none'],
    ['a forced rule over an existing file', '/about /elsewhere 301!', '/about', { fileExists: true }, '301 /elsewhere'],
    ['the first forced rule over a file, past unforced ones', '/about /one\n/about /two 302!', '/about', { fileExists: true }, '302 /two'],
    ['placeholders %-encoded in the Location', '/u/:name /users/:name', '/u/a b?c', {}, '301 /users/a%20b%3Fc'],
    ['a splat encoded segment by segment', '/f/* /g/:splat', '/f/a b/ü', {}, '301 /g/a%20b/%C3%BC'],
    ['non-ASCII in the target encoded', '/alt /neu/über', '/alt', {}, '301 /neu/%C3%BCber'],
    ['a decoded literal in from', '/caf%C3%A9 /cafe', '/café', {}, '301 /cafe'],
    // Issue 36: forms both hosts accept.
    ['a comment after a rule', '/a /b 302 # moved in 2024', '/a', {}, '302 /b'],
    ['a comment after a rule without a status', '/a /b # moved', '/a', {}, '301 /b'],
    ['a comment without a space after #', '/a /b 307 #moved', '/a', {}, '307 /b'],
    ['a fragment is not a comment', '/a /b#part # moved', '/a', {}, '301 /b#part'],
    ['an http target', '/a http://example.com/ 301', '/a', {}, '301 http://example.com/'],
    ['a from without its /', 'old.html /new', '/old.html', {}, '301 /new'],
    ['a query in from, left out as on Cloudflare', '/a?x=1 /b', '/a', { query: 'y=2' }, '301 /b?y=2'],
    ['// in from', '//a//b /c', '/a/b', {}, '301 /c'],
    [':splat as a placeholder name', '/blog/:splat /posts/:splat', '/blog/hello', {}, '301 /posts/hello'],
    [':splat as a placeholder, one segment only', '/blog/:splat /posts/:splat', '/blog/a/b', {}, 'none'],
    ['Netlify forward rule: the status without a target', '/app/* 200', '/app/settings', {}, '200 →/app/settings'],
    ['a forced forward rule', '/app/* 200!', '/app/x', { fileExists: true }, '200 →/app/x'],
    ['a * inside a segment (Cloudflare)', '/assets/*.js /js/:splat.js', '/assets/app.js', {}, '301 /js/app.js'],
    ['a * after a prefix', '/partial* /new-partial:splat 302', '/partialfoo/bar', {}, '302 /new-partialfoo/bar'],
    ['a * between segments', '/a/*/b /c', '/a/x/y/b', {}, '301 /c'],
    ['a * between segments, another end', '/a/*/b /c', '/a/x/c', {}, 'none'],
    ['a placeholder inside a segment (Cloudflare)', '/file-:id.html /files/:id 302', '/file-42.html', {}, '302 /files/42'],
    ['a placeholder inside a segment needs a character', '/file-:id.html /files/:id 302', '/file-.html', {}, 'none'],
  ])('%s', (_name, text, path, options, expected) => {
    if (expected === 'refused') {
      expect(compileRedirects(text, LIMITS).ok).toBe(false);
      return;
    }
    expect(outcome(text, path, options)).toBe(expected);
  });

  // Netlify fills in only the placeholders the rule's path defines: any other `:name` in the target
  // is text, kept as written (never dropped, never replaced by nothing).
  it.each([
    ['a placeholder the path does not define', '/blog/:slug /posts/:id 301', '/blog/hello', {}, '301 /posts/:id'],
    ['beside one it defines', '/blog/:slug /posts/:id/:slug 302', '/blog/hello', {}, '302 /posts/:id/hello'],
    ['without any placeholder in the path', '/a /b/:slug', '/a', {}, '301 /b/:slug'],
    [':splat without a *', '/a /b/:splat', '/a', {}, '301 /b/:splat'],
    ['inside a segment', '/u/:name /profile-:name-:tab.html', '/u/ann', {}, '301 /profile-ann-:tab.html'],
    ['a colon in a page name', '/wiki/* /w/Special:Search 302', '/wiki/x', {}, '302 /w/Special:Search'],
    ['in the query of the target', '/s /search?q=:term', '/s', { query: 'x=1' }, '301 /search?q=:term'],
    ['in an https target', '/docs/* https://docs.example.com/:version/:splat 301', '/docs/a', {}, '301 https://docs.example.com/:version/a'],
    ['in a rewrite', '/app/:page /views/:page/:lang.html 200', '/app/home', {}, '200 →/views/home/:lang.html'],
    ['in a 404 page', '/shop/* /shop/:missing.html 404', '/shop/x', {}, '404 →/shop/:missing.html'],
    ['a query condition defines its name', '/store id=:id /products/:id/:sku 301', '/store', { query: 'id=42' }, '301 /products/42/:sku'],
  ])('keeps in the target as written: %s', (_name, text, path, options, expected) => {
    expect(outcome(text, path, options)).toBe(expected);
  });

  it('reads comments, blank lines, tabs, CRLF and a byte-order mark', () => {
    const text = '\ufeff# moved pages\r\n\r\n/a\t/b\t302\r\n   # indented comment\n/c /d\n';
    expect(compiled(text).rules.map((rule) => [rule.line, rule.status])).toEqual([
      [3, 302],
      [5, 301],
    ]);
  });

  it.each([
    ['its host', 'https://old.example.com/* https://new.example.com/:splat 301', 'old.example.com', '/a/b', '301 https://new.example.com/a/b'],
    ['its host, written with http:// (Netlify)', 'http://old.example.com/* /:splat 301', 'old.example.com', '/a', '301 /a'],
    ['another host', 'https://old.example.com/* https://new.example.com/:splat 301', 'www.example.com', '/a/b', 'none'],
    ['no host known (the link check)', 'https://old.example.com/* https://new.example.com/:splat 301', undefined, '/a/b', 'none'],
    ['a placeholder label', 'https://:lang.example.com/* /:lang/:splat 302', 'de.example.com', '/a', '302 /de/a'],
    ['a placeholder label is one label', 'https://:lang.example.com/* /:lang/:splat 302', 'x.de.example.com', '/a', 'none'],
    ['a * label, one or more', 'https://*.example.com/old /new?from=:splat 302', 'a.b.example.com', '/old', '302 /new?from=a.b'],
  ])('applies a rule for one host name to requests for %s', (_name, text, host, path, expected) => {
    const rules = compiled(text);
    expect(rules.usesHost).toBe(true);
    const match = matchRedirect(
      rules,
      path.split('/').filter((s) => s !== ''),
      false,
      () => new URLSearchParams(),
      host,
    );
    expect(match === undefined ? 'none' : `${match.rule.status} ${redirectTarget(match)}`).toBe(expected);
  });

  it('marks rules with query conditions, so answers are cached per query', () => {
    expect(compiled('/a /b').usesQuery).toBe(false);
    expect(compiled('/a /b\n/s q=:q /search/:q').usesQuery).toBe(true);
  });

  it('never yields a Location that another host could be read from', () => {
    const rules = compiled('/go/:to /:to\n/r/* /:splat');
    for (const path of ['/go/%2F%2Fevil.example', '/go/\\evil.example', '/r//evil.example']) {
      const segments = decodeURIComponent(path)
        .split('/')
        .filter((s) => s !== '');
      const match = matchRedirect(rules, segments, false, () => new URLSearchParams());
      if (match) expect(redirectTarget(match)).not.toMatch(/^\/[/\\]/);
    }
  });

  it('keeps CR and LF of a query out of the Location', () => {
    expect(withRequestQuery('/b', 'a=1\r\nSet-Cookie: x=1')).toBe('/b?a=1%0D%0ASet-Cookie:%20x=1');
  });
});

describe('_redirects: refusals', () => {
  it.each([
    ['an unknown status', '/a /b 299', 'unknown_status', /one of 200, 301, 302, 303, 307, 308, 404, 410/],
    ['a word for a status', '/a /b permanent', 'unknown_status', /\/a \/b 301/],
    ['a missing target', '/a', 'missing_to', /\/a \/new-page 301/],
    ['a status where the target should be', '/a 301', 'missing_to', /after it/],
    ['a 200 to another host (no proxy)', '/api/* https://api.example.com/:splat 200', 'proxy_not_supported', /does not proxy/],
    ['a 404 to another host', '/a https://example.com/404 404', 'target_not_a_path', /its path/],
    ['a scheme-relative target', '/a //evil.example/ 301', 'scheme_relative_target', /such as https:\/\/evil\.example\//],
    ['a javascript: target', '/a javascript:alert(1) 302', 'bad_scheme', /https/],
    ['a data: target', '/a data:text/html,x 302', 'bad_scheme', /https/],
    ['a placeholder in the target host', '/r/:host https://:host.example.com/ 302', 'placeholder_in_host', /host/],
    ['a splat in the target host', '/r/* https://:splat/ 302', 'placeholder_in_host', /host/],
    ['a target that is not a path', '/a b.html 301', 'bad_target', /starting with \//],
    ['.. in a rewrite target', '/a /../../etc/passwd 200', 'path_traversal', /without \. or \.\./],
    ['encoded .. in a target', '/a /x/%2e%2e/y 200', 'path_traversal', /\.\./],
    ['a backslash in the target', '/a /b\\c 301', 'bad_target', /rather than \\/],
    ['a Country condition', '/ /de 302 Country=de', 'unsupported_condition', /Country= conditions/],
    ['a Language condition', '/ /fr 302 Language=fr', 'unsupported_condition', /Language=/],
    ['a Role condition', '/admin/* /admin/:splat 200! Role=admin', 'unsupported_condition', /Role=/],
    ['a Cookie condition in place of the status', '/a /b Cookie=x', 'unsupported_condition', /Cookie=/],
    ['text after the status', '/a /b 301 extra', 'unexpected_text', /from to status/],
    ["a port in a rule's host", 'https://old.example.com:8080/* /:splat 301', 'port_in_host', /without a port/],
    ['two placeholders in one segment', '/:year-:month /archive 301', 'placeholders_in_one_segment', /one :name/],
    ['two * in one path', '/a/*/b/* /c', 'multiple_splats', /one \*/],
    ['a placeholder after a * inside the path', '/a/*/:b /c/:b', 'placeholder_after_splat', /before the \*/],
    ['a * and :splat in one path', '/a/:splat/* /b/:splat', 'splat_twice', /name the placeholder differently/],
    ['a .. in from', '/a/../b /c', 'bad_segment', /\.\.\//],
    ['a duplicate placeholder', '/:a/:a /b', 'duplicate_placeholder', /once/],
    ['a control character', '/a /b\u0000 301', 'control_character', /control character/],
  ])('refuses %s', (_name, text, reason, hint) => {
    const result = compileRedirects(text, LIMITS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ file: '_redirects', line: 1, reason, text });
    expect(result.error.hint).toMatch(hint);
  });

  it('names the line, quotes it and says what to write instead', () => {
    const result = compileRedirects('/ok /fine\n\n/a /b 299\n', LIMITS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.line).toBe(3);
    const { message, agentMessage } = describeRuleError(result.error);
    expect(message).toBe('_redirects line 3 is refused (unknown_status).');
    expect(agentMessage).toContain('_redirects line 3 reads "/a /b 299"');
    expect(agentMessage).toContain('such as /a /b 301');
  });

  it('lists every refused line in one answer, with its reason', () => {
    const text = ['/ok /fine', '/a /b 299', '# a comment', '/c', '/d /e 301 extra', '/f /g 302 Country=de', '/h https://api.example/:x 200'].join('\n');
    const result = compileRedirects(text, LIMITS);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((error) => [error.line, error.reason])).toEqual([
      [2, 'unknown_status'],
      [4, 'missing_to'],
      [5, 'unexpected_text'],
      [6, 'unsupported_condition'],
      [7, 'proxy_not_supported'],
    ]);
    expect(result.kept.rules.map((rule) => rule.line)).toEqual([1]);
    const { message, agentMessage } = describeRuleErrors(result.errors, result.total);
    expect(message).toBe(
      '5 lines of the rules files are refused: _redirects line 2 (unknown_status), _redirects line 4 (missing_to), _redirects line 5 (unexpected_text), _redirects line 6 (unsupported_condition), _redirects line 7 (proxy_not_supported).',
    );
    for (const line of [2, 4, 5, 6, 7]) expect(agentMessage).toContain(`_redirects line ${line} reads`);
    expect(agentMessage).toMatch(/Country= conditions/);
    expect(agentMessage).toMatch(/does not proxy/);
  });

  it('lists the first 50 refused lines and counts them all', () => {
    const result = compileRedirects(Array.from({ length: 80 }, (_, i) => `/a${i} /b 299`).join('\n'), LIMITS);
    expect(result.ok ? undefined : [result.errors.length, result.total]).toEqual([50, 80]);
    if (result.ok) return;
    expect(describeRuleErrors(result.errors, result.total).message).toMatch(/^80 lines of the rules files are refused: .*, and 30 more\.$/);
  });

  it('reads comments of any length', () => {
    expect(compileRedirects(`# ${'x'.repeat(5000)}\n/a /b`, LIMITS).ok).toBe(true);
  });

  it('caps rules with a * inside the path', () => {
    const text = ['/a*.js /b', '/c/*/d /e', '/f/* /g', '/h*.css /i'].join('\n');
    const result = compileRedirects(text, { ...LIMITS, maxInnerSplats: 2 });
    expect(result.ok ? [] : result.errors.map((error) => [error.line, error.reason])).toEqual([[4, 'too_many_inner_splats']]);
  });

  it.each([
    ['rules', { ...LIMITS, maxEntries: 2 }, '/a /b\n# c\n/c /d\n/e /f', 4, 'too_many_rules'],
    ['line length', { ...LIMITS, maxLineChars: 20 }, `/a /b\n/${'x'.repeat(30)} /y`, 2, 'line_too_long'],
    ['file size', { ...LIMITS, maxFileBytes: 10 }, '/aaaaa /bbbbb', 0, 'file_too_large'],
  ])('caps %s', (_name, limits, text, line, reason) => {
    const result = compileRedirects(text, limits);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ line, reason });
  });

  it.each([
    ['rules', { ...LIMITS, maxEntries: 0 }, Array.from({ length: 3000 }, (_, i) => `/a${i} /b${i}`).join('\n')],
    ['line length', { ...LIMITS, maxLineChars: 0 }, `/${'x'.repeat(5000)} /y`],
    ['file size', { ...LIMITS, maxFileBytes: 0 }, Array.from({ length: 2000 }, (_, i) => `/${'x'.repeat(900)}${i} /y`).join('\n')],
  ])('has no cap on %s when it is 0', (_name, limits, text) => {
    expect(compileRedirects(text, limits).ok).toBe(true);
  });

  it('refuses a pattern of more segments than the cap', () => {
    const result = compileRedirects(`/${'x/'.repeat(200)}:p/* /y/:p/:splat`, { ...LIMITS, maxPatternSegments: 32 });
    expect(result.ok ? undefined : result.error.reason).toBe('too_many_segments');
  });

  // test/reliability/timings.test.ts times this.
  it('compiles a 2,000-rule file of hostile patterns, and matches it', () => {
    // As long as the segment cap lets a pattern be: 30 literals, a placeholder and a splat.
    const text = Array.from({ length: 2000 }, (_, i) => `/${'x/'.repeat(30)}:p${i}/* /y/:p${i}/:splat`).join('\n');
    const rules = compiled(text, { ...LIMITS, maxPatternSegments: 32 });
    const segments = Array.from({ length: 400 }, () => 'x');
    for (let i = 0; i < 10; i++) expect(matchRedirect(rules, segments, false, () => new URLSearchParams())).toMatchObject({ rule: { line: 1 } });
  });
});
