import { describe, expect, it } from 'vitest';
import { compileRedirects, resolveSitePath, type Resolution } from '../../src/rules/index.js';

const SITE = ['index.html', 'about.html', 'docs/index.html', 'app/index.html', 'shop/404.html', 'gone.html', 'style.css', '404.html', '_redirects'];
const RULES = `
/about          /about-us       301
/style.css      /new.css        302!
/docs           /manual         301
/old/*          /docs/:splat    301
/app/*          /app/index.html 200
/spa-folder/*   /app            200
/missing/*      /nowhere.html   200
/shop/*         /shop/404.html  404
/sold-out       /gone.html      410
/retired        /nothing.html   410
/search q=:q    /find/:q        302
/escape/*       /../secret      200
`;
const compiled = compileRedirects(RULES.replace('/escape/*       /../secret      200\n', ''), { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0 });
if (!compiled.ok) throw new Error(JSON.stringify(compiled.error));

function resolve(path: string, trailingSlash = false, query = ''): Resolution {
  const files = new Set(SITE);
  return resolveSitePath(
    path,
    trailingSlash,
    (p) => files.has(p),
    compiled.ok ? compiled.compiled : undefined,
    () => new URLSearchParams(query),
  );
}

describe('resolveSitePath with _redirects', () => {
  it.each([
    ['an existing file wins over an unforced rule', 'about', false, '', { kind: 'file', path: 'about.html', status: 200 }],
    ['a forced rule wins over an existing file', 'style.css', false, '', { kind: 'redirect', location: '/new.css', ownQuery: false, status: 302 }],
    ['a folder address wins over an unforced rule (it exists)', 'docs', false, '', { kind: 'folder', location: '/docs/', status: 301 }],
    ['a folder with its slash is a file', 'docs', true, '', { kind: 'file', path: 'docs/index.html', status: 200 }],
    ['a splat redirect', 'old/a/b', false, '', { kind: 'redirect', location: '/docs/a/b', ownQuery: false, status: 301 }],
    ['a splat redirect keeps the trailing slash', 'old/a', true, '', { kind: 'redirect', location: '/docs/a/', ownQuery: false, status: 301 }],
    [
      'a splat redirect keeps the trailing slash of a deeper path',
      'old/a/b',
      true,
      '',
      { kind: 'redirect', location: '/docs/a/b/', ownQuery: false, status: 301 },
    ],
    ['a splat of nothing leads to the folder once', 'old', true, '', { kind: 'redirect', location: '/docs/', ownQuery: false, status: 301 }],
    ['a 200 rewrite serves the target', 'app/settings/profile', false, '', { kind: 'file', path: 'app/index.html', status: 200 }],
    ['a 200 rewrite to a folder serves its index (one hop)', 'spa-folder/x', false, '', { kind: 'file', path: 'app/index.html', status: 200 }],
    ['a 200 rewrite to nothing is the 404 page', 'missing/x', false, '', { kind: 'not_found_page', path: '404.html', status: 404 }],
    ['a 404 rule serves its page with 404', 'shop/nothing', false, '', { kind: 'rule_page', path: 'shop/404.html', status: 404 }],
    ['a 404 rule does not hide an existing file', 'shop/404.html', false, '', { kind: 'file', path: 'shop/404.html', status: 200 }],
    ['a 410 rule serves its page with 410', 'sold-out', false, '', { kind: 'rule_page', path: 'gone.html', status: 410 }],
    ['a 410 rule without a page', 'retired', false, '', { kind: 'gone', status: 410 }],
    ['a query condition', 'search', false, 'q=cats', { kind: 'redirect', location: '/find/cats', ownQuery: true, status: 302 }],
    ['no query, no match: the 404 page', 'search', false, '', { kind: 'not_found_page', path: '404.html', status: 404 }],
    ['the rules file itself is never served', '_redirects', false, '', { kind: 'not_found_page', path: '404.html', status: 404 }],
  ])('%s', (_name, path, trailingSlash, query, expected) => {
    expect(resolve(path, trailingSlash, query)).toEqual(expected);
  });

  it('refuses a rule that would leave the site before it is ever matched', () => {
    expect(compileRedirects('/escape/* /../secret 200', { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0 }).ok).toBe(false);
  });

  it('does not let a rewrite reach a skipped or rules file', () => {
    const rules = compileRedirects('/a /.env 200\n/b /_headers 200', { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0 });
    if (!rules.ok) throw new Error('refused');
    const files = new Set(['index.html', '.env', '_headers']);
    for (const path of ['a', 'b']) {
      expect(resolveSitePath(path, false, (p) => files.has(p), rules.compiled).kind).toBe('missing');
    }
  });
});
