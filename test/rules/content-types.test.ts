import { describe, expect, it } from 'vitest';
import { contentTypeFor, isCompressibleType, isHtmlType } from '../../src/rules/index.js';

describe('contentTypeFor', () => {
  it.each([
    ['index.html', 'text/html; charset=utf-8'],
    ['docs/page.htm', 'text/html; charset=utf-8'],
    ['INDEX.HTML', 'text/html; charset=utf-8'],
    ['css/site.Css', 'text/css; charset=utf-8'],
    ['app.js', 'text/javascript; charset=utf-8'],
    ['app.mjs', 'text/javascript; charset=utf-8'],
    ['app.cjs', 'text/javascript; charset=utf-8'],
    ['data.json', 'application/json; charset=utf-8'],
    ['site.webmanifest', 'application/manifest+json; charset=utf-8'],
    ['robots.txt', 'text/plain; charset=utf-8'],
    ['README.md', 'text/markdown; charset=utf-8'],
    ['table.csv', 'text/csv; charset=utf-8'],
    ['sitemap.xml', 'application/xml; charset=utf-8'],
    ['feed.rss', 'application/rss+xml; charset=utf-8'],
    ['feed.atom', 'application/atom+xml; charset=utf-8'],
    ['cal.ics', 'text/calendar; charset=utf-8'],
    ['subs.vtt', 'text/vtt; charset=utf-8'],
    ['logo.svg', 'image/svg+xml; charset=utf-8'],
    ['a.png', 'image/png'],
    ['a.jpg', 'image/jpeg'],
    ['a.JPEG', 'image/jpeg'],
    ['a.gif', 'image/gif'],
    ['a.webp', 'image/webp'],
    ['a.avif', 'image/avif'],
    ['favicon.ico', 'image/vnd.microsoft.icon'],
    ['a.bmp', 'image/bmp'],
    ['f.woff', 'font/woff'],
    ['f.woff2', 'font/woff2'],
    ['f.ttf', 'font/ttf'],
    ['f.otf', 'font/otf'],
    ['s.mp3', 'audio/mpeg'],
    ['s.ogg', 'audio/ogg'],
    ['s.wav', 'audio/wav'],
    ['s.m4a', 'audio/mp4'],
    ['s.flac', 'audio/flac'],
    ['s.aac', 'audio/aac'],
    ['s.opus', 'audio/ogg'],
    ['v.mp4', 'video/mp4'],
    ['v.webm', 'video/webm'],
    ['v.ogv', 'video/ogg'],
    ['v.mov', 'video/quicktime'],
    ['doc.pdf', 'application/pdf'],
    ['mod.wasm', 'application/wasm'],
  ])('types %s as %s', (path, type) => {
    expect(contentTypeFor(path)).toBe(type);
  });

  it.each([
    ['page.xhtml', 'not on the allowlist though browsers render it'],
    ['image.svgz', 'compressed svg is not allowlisted'],
    ['index.php', 'server source'],
    ['app.exe', 'binaries'],
    ['archive.zip', 'archives'],
    ['cache.appcache', 'legacy manifest'],
    ['Makefile', 'no extension'],
    ['html', 'a bare extension is a file name, not an extension'],
    ['.html', 'a dotfile has no extension'],
    ['dir.html/file', 'a dot in a folder name does not count'],
    ['file.', 'an empty extension'],
    ['', 'the empty path'],
    ['index.html.exe', 'only the last extension counts'],
  ])('serves %s as octet-stream (%s)', (path) => {
    expect(contentTypeFor(path)).toBe('application/octet-stream');
  });
});

describe('isCompressibleType', () => {
  it.each([
    ['text/html; charset=utf-8', true],
    ['text/css; charset=utf-8', true],
    ['text/javascript; charset=utf-8', true],
    ['application/json; charset=utf-8', true],
    ['application/manifest+json; charset=utf-8', true],
    ['application/xml; charset=utf-8', true],
    ['application/rss+xml; charset=utf-8', true],
    ['image/svg+xml; charset=utf-8', true],
    ['application/wasm', true],
    ['image/vnd.microsoft.icon', true],
    ['image/bmp', true],
    ['font/ttf', true],
    ['font/otf', true],
    ['TEXT/PLAIN', true],
    ['image/png', false],
    ['image/jpeg', false],
    ['image/webp', false],
    ['font/woff', false],
    ['font/woff2', false],
    ['audio/mpeg', false],
    ['video/mp4', false],
    ['application/pdf', false],
    ['application/octet-stream', false],
    ['', false],
  ])('says %s is compressible: %s', (type, expected) => {
    expect(isCompressibleType(type)).toBe(expected);
  });
});

describe('isHtmlType', () => {
  it.each([
    ['text/html', true],
    ['text/html; charset=utf-8', true],
    ['Text/HTML ; charset=UTF-8', true],
    ['text/htmlx', false],
    ['application/xhtml+xml', false],
    ['text/plain', false],
    ['', false],
  ])('says %s is HTML: %s', (type, expected) => {
    expect(isHtmlType(type)).toBe(expected);
  });
});
