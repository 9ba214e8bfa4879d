import { describe, expect, it } from 'vitest';
import { resolveSitePath, type Resolution } from '../../src/serve/resolve.js';

const PLAIN_SITE = [
  'index.html',
  'about.html',
  'blog/index.html',
  'blog/first.html',
  'style.css',
  'CNAME',
  'docs/v1.2/index.html',
  'node_modules/index.html',
  '.well-known/security.txt',
  '.env',
  'app.js.map',
  '.git/config',
];
const WITH_404 = ['index.html', 'about.html', '404.html'];
const SPA = ['index.html', 'app.js'];
const EMPTY: string[] = [];

const file = (path: string): Resolution => ({ kind: 'file', path, status: 200 });
const notFoundPage: Resolution = { kind: 'not_found_page', path: '404.html', status: 404 };
const spa: Resolution = { kind: 'spa', path: 'index.html', status: 200 };
const missing: Resolution = { kind: 'missing', status: 404 };
const folder = (location: string): Resolution => ({ kind: 'folder', location, status: 301 });

function resolveIn(files: string[], path: string, trailingSlash: boolean) {
  const stored = new Set(files);
  const probes: string[] = [];
  const result = resolveSitePath(path, trailingSlash, (p) => {
    probes.push(p);
    return stored.has(p);
  });
  return { result, probes };
}

describe('resolveSitePath', () => {
  it.each([
    ['serves index.html for the root', PLAIN_SITE, '', false, file('index.html')],
    ['serves an exact file', PLAIN_SITE, 'style.css', false, file('style.css')],
    ['serves an extensionless exact file', PLAIN_SITE, 'CNAME', false, file('CNAME')],
    ['serves about.html for about', PLAIN_SITE, 'about', false, file('about.html')],
    ['serves about.html when asked by name', PLAIN_SITE, 'about.html', false, file('about.html')],
    ['sends a folder without its slash to the folder, so its relative links resolve inside it', PLAIN_SITE, 'blog', false, folder('/blog/')],
    ['serves blog/index.html for blog/', PLAIN_SITE, 'blog', true, file('blog/index.html')],
    ['serves a nested clean URL', PLAIN_SITE, 'blog/first', false, file('blog/first.html')],
    ['sends a dotted folder to its slash', PLAIN_SITE, 'docs/v1.2', false, folder('/docs/v1.2/')],
    ['serves a dotted folder index with its slash', PLAIN_SITE, 'docs/v1.2', true, file('docs/v1.2/index.html')],
    ['encodes the folder address it redirects to', ['index.html', 'a b/ü/index.html'], 'a b/ü', false, folder('/a%20b/%C3%BC/')],
    ['prefers about.html over a folder about/', ['index.html', 'about.html', 'about/index.html'], 'about', false, file('about.html')],
    ['never serves _redirects or _headers', ['index.html', '_redirects', '_headers', '404.html'], '_redirects', false, notFoundPage],
    ['does not answer _headers with the SPA shell', ['index.html', '_headers'], '_headers', false, missing],
    ['serves .well-known files', PLAIN_SITE, '.well-known/security.txt', false, file('.well-known/security.txt')],
    ['does not serve a file for a trailing slash', PLAIN_SITE, 'about.html', true, spa],
    ['falls back to index.html for an extensionless path', PLAIN_SITE, 'nope', false, spa],
    ['falls back to index.html for a missing folder', PLAIN_SITE, 'nope/', true, spa],
    ['keeps a missing asset a 404', PLAIN_SITE, 'missing.css', false, missing],
    ['keeps a missing nested asset a 404', PLAIN_SITE, 'blog/img/x.png', false, missing],
    ['never serves .env', PLAIN_SITE, '.env', false, missing],
    ['never serves source maps', PLAIN_SITE, 'app.js.map', false, missing],
    ['never serves .git, not even the SPA shell', PLAIN_SITE, '.git/config', false, missing],
    ['never serves node_modules indexes', PLAIN_SITE, 'node_modules', false, spa],
    ['never serves node_modules files', PLAIN_SITE, 'node_modules/index.html', false, missing],
    ['never serves the bare .well-known folder name', PLAIN_SITE, '.well-known', false, missing],
    ['serves the site 404 page for a missing page', WITH_404, 'nope', false, notFoundPage],
    ['serves the site 404 page for a missing asset', WITH_404, 'x.png', false, notFoundPage],
    ['serves the site 404 page for a skipped path', WITH_404, '.env', false, notFoundPage],
    ['serves the SPA shell for a deep route', SPA, 'users/42/edit', false, spa],
    ['serves the SPA shell for a trailing-slash route', SPA, 'settings', true, spa],
    ['does not serve the SPA shell for a dotted route', SPA, 'users/john.doe', false, missing],
    ['serves the SPA asset itself', SPA, 'app.js', false, file('app.js')],
    ['answers missing for the root of an empty site', EMPTY, '', false, missing],
    ['answers missing for a page of an empty site', EMPTY, 'about', false, missing],
  ])('%s', (_name, files, path, trailingSlash, expected) => {
    expect(resolveIn(files, path, trailingSlash).result).toEqual(expected);
  });

  it.each([
    ['the root', PLAIN_SITE, '', false, ['index.html']],
    ['an existing asset', PLAIN_SITE, 'style.css', false, ['style.css']],
    ['a clean URL', PLAIN_SITE, 'about', false, ['about', 'about.html']],
    ['a folder with a slash', PLAIN_SITE, 'blog', true, ['blog/index.html']],
    ['a folder without a slash', PLAIN_SITE, 'blog', false, ['blog', 'blog.html', 'blog/index.html']],
    ['a missing asset', PLAIN_SITE, 'x.css', false, ['x.css', 'x.css.html', 'x.css/index.html', '404.html']],
    ['an SPA route', PLAIN_SITE, 'nope', false, ['nope', 'nope.html', 'nope/index.html', '404.html', 'index.html']],
    ['a skipped file', PLAIN_SITE, '.env', false, ['404.html']],
    ['a skipped folder index', PLAIN_SITE, 'node_modules', false, ['node_modules', 'node_modules.html', '404.html', 'index.html']],
    ['the root of an empty site (no repeated index probe)', EMPTY, '', false, ['index.html', '404.html']],
  ])('probes only what it needs for %s', (_name, files, path, trailingSlash, expected) => {
    expect(resolveIn(files, path, trailingSlash).probes).toEqual(expected);
  });
});
