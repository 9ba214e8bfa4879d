import { describe, expect, it } from 'vitest';
import { mayReachProtected, safeReturnPath } from '../../src/rules/index.js';

describe('which requests may reach a protected site (Sec-Fetch-*)', () => {
  it.each<[string, string, string, string, boolean]>([
    // Not a browser, or the browser's own request.
    ['curl and other clients (no headers)', '', '', '', true],
    ['a typed address or a bookmark', 'none', 'navigate', 'document', true],
    // The site itself.
    ['its own script', 'same-origin', 'no-cors', 'script', true],
    ['its own fetch', 'same-origin', 'cors', 'empty', true],
    ['its own image', 'same-origin', 'no-cors', 'image', true],
    ['itself in a frame', 'same-origin', 'navigate', 'iframe', true],
    ['its own service worker', 'same-origin', 'same-origin', 'serviceworker', true],
    // Another site host (same site: the site domain is shared) or another site altogether.
    ['a link from another site host', 'same-site', 'navigate', 'document', true],
    ['a link from anywhere', 'cross-site', 'navigate', 'document', true],
    ['a form posted from another site', 'cross-site', 'navigate', 'document', true],
    ['a navigation from an older browser (no Dest)', 'cross-site', 'navigate', '', true],
    ['a <script> on another site host', 'same-site', 'no-cors', 'script', false],
    ['a <script> on another site', 'cross-site', 'no-cors', 'script', false],
    ['an <img> on another site host', 'same-site', 'no-cors', 'image', false],
    ['a style sheet', 'same-site', 'no-cors', 'style', false],
    ['a font', 'cross-site', 'cors', 'font', false],
    ['a no-cors fetch', 'same-site', 'no-cors', 'empty', false],
    ['a CORS fetch with credentials', 'same-site', 'cors', 'empty', false],
    ['an <iframe> on another site host', 'same-site', 'navigate', 'iframe', false],
    ['a <frame>', 'cross-site', 'navigate', 'frame', false],
    ['an <object>', 'same-site', 'navigate', 'object', false],
    ['an <embed>', 'cross-site', 'navigate', 'embed', false],
    ['a frame from an older browser', 'cross-site', 'nested-navigate', '', false],
    ['a <video>', 'same-site', 'no-cors', 'video', false],
    ['a worker script', 'cross-site', 'same-origin', 'worker', false],
    ['a prefetch', 'same-site', 'no-cors', 'empty', false],
    ['a WebSocket', 'cross-site', 'websocket', 'websocket', false],
    ['a beacon', 'same-site', 'no-cors', 'empty', false],
    ['an upper-case spelling', 'SAME-SITE', 'NO-CORS', 'SCRIPT', false],
    ['an unknown site value', 'other-origin', 'navigate', 'document', true],
    ['an unknown site value for a script', 'other-origin', 'no-cors', 'script', false],
  ])('%s', (_name, site, mode, dest, allowed) => {
    expect(mayReachProtected({ site, mode, dest })).toBe(allowed);
  });
});

describe('return paths after signing in', () => {
  it.each<[string, string | null | undefined, string]>([
    ['a local path', '/about?x=1', '/about?x=1'],
    ['nothing', null, '/'],
    ['another host', '//evil.example/', '/'],
    ['a backslash host', '/\\evil.example', '/'],
    ['a scheme', 'https://evil.example/', '/'],
    ['a line break', '/a\r\nSet-Cookie: x=1', '/'],
    ['a dot segment before another host', '/.//evil.example', '/'],
    ['an encoded dot segment before another host', '/%2e//evil.example', '/'],
    ['a parent segment before another host', '/a/..//evil.example', '/'],
    ['dot segments inside the site', '/a/./b/../c?x=1', '/a/c?x=1'],
    ['a space a browser strips', '/\u3000/evil.example', '/'],
  ])('%s', (_name, raw, expected) => {
    expect(safeReturnPath(raw)).toBe(expected);
  });
});
