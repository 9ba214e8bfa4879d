import { describe, expect, it } from 'vitest';
import { normalizeRequestPath } from '../../src/serve/request-path.js';

const MAX_BYTES = 2048;

describe('normalizeRequestPath', () => {
  it.each([
    ['/', '', false],
    ['//', '', false],
    ['/?x=1', '', false],
    ['/index.html', 'index.html', false],
    ['/about', 'about', false],
    ['/about/', 'about', true],
    ['/about/?q=/../..', 'about', true],
    ['/a/b/c.css', 'a/b/c.css', false],
    ['/a//b///c', 'a/b/c', false],
    ['/./a/./b', 'a/b', false],
    ['/a/b/../c', 'a/c', false],
    ['/a/..', '', false],
    ['/a/b/..', 'a', true],
    ['/a/.', 'a', true],
    ['/a/b/%2e%2e/c', 'a/c', false],
    ['/a/%2E%2E%2Fb', 'b', false],
    ['/hello%20world.html', 'hello world.html', false],
    ['/caf%C3%A9/', 'café', true],
    ['/café', 'café', false],
    ['/a%2Fb', 'a/b', false],
    ['/a%2F', 'a', true],
    ['/100%25.html', '100%.html', false],
    ['/%3Fnot-a-query', '?not-a-query', false],
    ['/a%23b', 'a#b', false],
    ['/page#frag', 'page', false],
    ['/a?b#c', 'a', false],
    ['/.well-known/security.txt', '.well-known/security.txt', false],
    ['/a+b.html', 'a+b.html', false],
  ])('normalizes %s to %j (trailing slash: %s)', (raw, path, trailingSlash) => {
    expect(normalizeRequestPath(raw, MAX_BYTES)).toEqual({ ok: true, path, trailingSlash });
  });

  it.each([
    ['/..', 'climbs above the root'],
    ['/../etc/passwd', 'climbs above the root'],
    ['/a/../../b', 'climbs above the root after a segment'],
    ['/%2e%2e/secret', 'encoded dots climb above the root'],
    ['/%2E%2E%2F%2E%2E%2Fetc', 'encoded dots and slashes climb'],
    ['/..%2Fsecret', 'encoded slash after dots climbs'],
    ['/a\\..\\..\\b', 'raw backslashes'],
    ['/..%5C..%5Cwindows', 'encoded backslashes'],
    ['/index.html%00.png', 'encoded NUL'],
    ['/a\u0000b', 'raw NUL'],
    ['/a%0Ab', 'encoded newline'],
    ['/a%0d%0aSet-Cookie:x', 'header injection attempt'],
    ['/a%7Fb', 'DEL'],
    ['/%zz', 'invalid escape'],
    ['/%', 'truncated escape'],
    ['/%4', 'half escape'],
    ['/%C3', 'truncated UTF-8'],
    ['/%C0%AE%C0%AE/', 'overlong UTF-8 dots'],
    ['/%FF', 'invalid UTF-8 byte'],
    ['/%ED%A0%80', 'encoded surrogate'],
    ['about', 'no leading slash'],
    ['http://evil.example/', 'absolute form'],
    ['*', 'asterisk form'],
    ['', 'empty target'],
    ['?x=/', 'query only'],
  ])('rejects %j with 400 (%s)', (raw) => {
    expect(normalizeRequestPath(raw, MAX_BYTES)).toEqual({ ok: false, status: 400 });
  });

  it.each([
    ['/' + 'a'.repeat(MAX_BYTES), 'path over the limit'],
    ['/?' + 'q'.repeat(MAX_BYTES), 'query counts toward the limit'],
    ['/' + 'é'.repeat(MAX_BYTES / 2), 'limit counts UTF-8 bytes, not characters'],
    ['/' + '%zz'.repeat(MAX_BYTES), 'length is checked before decoding'],
    ['/' + '../'.repeat(MAX_BYTES), 'length is checked before traversal'],
  ])('rejects a long URL with 414 (%#: %s)', (raw) => {
    expect(normalizeRequestPath(raw, MAX_BYTES)).toEqual({ ok: false, status: 414 });
  });

  it.each([
    ['/' + 'a'.repeat(MAX_BYTES - 1), 'a'.repeat(MAX_BYTES - 1)],
    ['/a', 'a'],
  ])('accepts a URL at or under the limit (%#)', (raw, path) => {
    expect(normalizeRequestPath(raw, MAX_BYTES)).toEqual({ ok: true, path, trailingSlash: false });
  });
});
