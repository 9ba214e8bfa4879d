import { describe, expect, it } from 'vitest';
import {
  cookieName,
  cookieValues,
  createEncodingChooser,
  matchesIfNoneMatch,
  parseRange,
  ifRangeHolds,
  pickEncoding,
  pickMediaType,
  readCookies,
  setCookie,
} from '../../src/http/index.js';

describe('parseRange', () => {
  it.each([
    [undefined, 100, undefined],
    ['', 100, undefined],
    ['bytes=0-9', 100, { start: 0, end: 9 }],
    ['bytes=10-', 100, { start: 10, end: 99 }],
    ['bytes=0-', 100, { start: 0, end: 99 }],
    ['bytes=-10', 100, { start: 90, end: 99 }],
    ['bytes=-1000', 100, { start: 0, end: 99 }],
    ['bytes=50-1000', 100, { start: 50, end: 99 }],
    ['bytes=99-99', 100, { start: 99, end: 99 }],
    ['bytes=0-0', 1, { start: 0, end: 0 }],
    ['BYTES=0-9', 100, { start: 0, end: 9 }],
    ['bytes= 0-9 ', 100, { start: 0, end: 9 }],
    ['bytes=0-99999999999999999999999', 100, { start: 0, end: 99 }],
    ['bytes=100-', 100, 'unsatisfiable'],
    ['bytes=100-200', 100, 'unsatisfiable'],
    ['bytes=200-100', 100, undefined],
    ['bytes=99999999999999999999-', 100, 'unsatisfiable'],
    ['bytes=-0', 100, 'unsatisfiable'],
    ['bytes=0-', 0, undefined],
    ['bytes=-5', 0, undefined],
    ['bytes=0-1,5-6', 100, undefined],
    ['bytes=0-1, 200-300', 100, undefined],
    ['bytes=9-0', 100, undefined],
    ['bytes=-', 100, undefined],
    ['bytes=', 100, undefined],
    ['bytes=a-b', 100, undefined],
    ['bytes=0x10-20', 100, undefined],
    ['bytes=+1-5', 100, undefined],
    ['bytes=-5-', 100, undefined],
    ['bytes=1.5-3', 100, undefined],
    ['bytes=0 - 9', 100, undefined],
    ['items=0-9', 100, undefined],
    ['0-9', 100, undefined],
    ['bytes', 100, undefined],
  ])('parses %j for size %i as %j', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });
});

type Coding = 'br' | 'gzip';
const BOTH: readonly Coding[] = ['br', 'gzip'];
const GZIP_ONLY: readonly Coding[] = ['gzip'];
const BR_ONLY: readonly Coding[] = ['br'];

// [Accept-Encoding, the codings a resource has, the one sent (undefined: the plain bytes)]
const ENCODING_TABLE: Array<[string | undefined, readonly Coding[], Coding | undefined]> = [
  // No header, or nothing listed: plain bytes (old tools that omit it often cannot decode).
  [undefined, BOTH, undefined],
  ['', BOTH, undefined],
  [',,, ;;;', BOTH, undefined],
  // Browsers list both at weight 1: ties go to br, smaller for the same text.
  ['gzip, deflate, br, zstd', BOTH, 'br'],
  ['gzip, deflate, br', GZIP_ONLY, 'gzip'],
  ['gzip, deflate', BOTH, 'gzip'],
  ['deflate, br', BR_ONLY, 'br'],
  ['br', GZIP_ONLY, undefined],
  ['gzip', [], undefined],
  // Weights decide before our preference.
  ['gzip;q=1, br;q=0.5', BOTH, 'gzip'],
  ['gzip;q=0.5, br;q=0.5', BOTH, 'br'],
  ['br; q=0.8, gzip ; q=0.9', BOTH, 'gzip'],
  ['br;q=1.000', BOTH, 'br'],
  ['br;q=0.0001', BOTH, 'br'],
  ['br;q=2', BOTH, 'br'],
  ['br;level=5', BOTH, 'br'],
  // q=0 refuses a coding; an unreadable or negative weight refuses it too.
  ['br;q=0, gzip', BOTH, 'gzip'],
  ['br;q=0, gzip;q=0', BOTH, undefined],
  ['br;q=abc, gzip', BOTH, 'gzip'],
  ['br;q=-1', BOTH, undefined],
  ['br, br;q=0', BOTH, 'br'],
  // `*` stands for every coding not listed.
  ['*', BOTH, 'br'],
  ['*', GZIP_ONLY, 'gzip'],
  ['*;q=0', BOTH, undefined],
  ['*;q=0.5, br;q=0', BOTH, 'gzip'],
  ['*;q=0, gzip', BOTH, 'gzip'],
  // identity takes part: ranked above a coding, the plain bytes win; refused, nothing else is
  // acceptable either, and the plain bytes go anyway (a 406 would help nobody).
  ['identity', BOTH, undefined],
  ['identity;q=0', BOTH, undefined],
  ['identity;q=0, gzip', BOTH, 'gzip'],
  ['gzip;q=0.5, identity', BOTH, undefined],
  ['identity;q=0.5, gzip;q=0.5', BOTH, 'gzip'],
  ['gzip;q=0.5, br;q=0.8, *;q=0.9', BOTH, undefined],
  // Names and parameters in any case; spaces and tabs around items and parameters.
  ['BR, GZIP', BOTH, 'br'],
  ['GZIP;Q=1, BR;q=0.5', BOTH, 'gzip'],
  ['  gzip ,\tbr  ', BOTH, 'br'],
  ['gzip ;  q=0.4 ,  br ; q=0.3', BOTH, 'gzip'],
  // Unknown names, and the obsolete alias x-gzip, match nothing: the plain bytes, always safe.
  ['gzipx, brotli', BOTH, undefined],
  ['x-gzip', BOTH, undefined],
];

describe('ifRangeHolds', () => {
  it.each([
    ['', '"abc"', true],
    ['', undefined, true],
    ['"abc"', '"abc"', true],
    [' "abc" ', '"abc"', true],
    ['"abd"', '"abc"', false],
    ['W/"abc"', '"abc"', false],
    ['"abc"', 'W/"abc"', false],
    ['"abc"', undefined, false],
    ['Tue, 01 Dec 2026 06:00:00 GMT', '"abc"', false],
  ])('If-Range %j against %j: %s', (ifRange, etag, holds) => {
    expect(ifRangeHolds(ifRange, etag)).toBe(holds);
  });
});

describe('pickEncoding', () => {
  it.each(ENCODING_TABLE)('picks from %j with %j: %s', (header, available, expected) => {
    expect(pickEncoding(header, available)).toBe(expected);
  });
});

describe('createEncodingChooser', () => {
  it('answers as pickEncoding does, from its cache too', () => {
    const choose = createEncodingChooser(BOTH);
    for (let pass = 0; pass < 2; pass++) {
      for (const [header, available, expected] of ENCODING_TABLE) expect(choose(header, available), `${header} ${available}`).toBe(expected);
    }
  });

  it('keeps the answers for different sets of codings apart', () => {
    const choose = createEncodingChooser(BOTH);
    expect(choose('br', GZIP_ONLY)).toBeUndefined();
    expect(choose('br', BOTH)).toBe('br');
    expect(choose('br', BR_ONLY)).toBe('br');
    expect(choose('br', GZIP_ONLY)).toBeUndefined();
    expect(choose('br')).toBe('br');
  });

  it('stays within its size, and still answers once full', () => {
    const choose = createEncodingChooser(BOTH, 4);
    for (let i = 0; i < 20; i++) expect(choose(`gzip;q=0.${(i % 9) + 1}, x${i}`)).toBe('gzip');
    expect(choose('br')).toBe('br');
  });
});

describe('pickMediaType', () => {
  const HTML_OR_MARKDOWN = ['text/html', 'text/markdown'] as const;
  it.each([
    [undefined, 'text/html'],
    ['', 'text/html'],
    ['*/*', 'text/html'],
    ['text/*', 'text/html'],
    ['text/html', 'text/html'],
    ['text/markdown', 'text/markdown'],
    ['TEXT/MARKDOWN', 'text/markdown'],
    // At equal weight, what the client lists first.
    ['text/markdown, text/html', 'text/markdown'],
    ['text/html, text/markdown', 'text/html'],
    ['text/html;q=0.9, text/markdown', 'text/markdown'],
    ['text/markdown;q=0.9, text/html;q=0.8', 'text/markdown'],
    ['text/markdown, text/html;q=0.5', 'text/markdown'],
    ['text/markdown;q=0', undefined],
    ['application/json', undefined],
  ])('Accept %j picks %s', (accept, expected) => {
    expect(pickMediaType(accept, HTML_OR_MARKDOWN)).toBe(expected);
  });
});

const ETAG = '"abc123"';

describe('matchesIfNoneMatch', () => {
  it.each([
    [undefined, ETAG, false],
    ['', ETAG, false],
    ['"abc123"', ETAG, true],
    [' "abc123" ', ETAG, true],
    // Weak comparison (RFC 9110 §13.1.2).
    ['W/"abc123"', ETAG, true],
    ['"abc123"', 'W/"abc123"', true],
    ['W/"abc123"', 'W/"abc123"', true],
    ['w/"abc123"', ETAG, false],
    // Lists, with or without spaces; empty elements are skipped.
    ['"other", "abc123"', ETAG, true],
    ['"other","abc123"', ETAG, true],
    ['"other",, "abc123"', ETAG, true],
    ['"a,b", "abc123"', ETAG, true],
    ['"abc123", garbage', ETAG, true],
    ['"other", garbage, "abc123"', ETAG, true],
    ['"other"', ETAG, false],
    ['"a,b"', '"a"', false],
    ['"other" "abc123"', ETAG, false],
    ['*', ETAG, true],
    [' * ', ETAG, true],
    // Tags are opaque and compared whole, quotes and case included.
    ['abc123', ETAG, false],
    ['"ABC123"', ETAG, false],
    ['"abc123', ETAG, false],
    ['"abc1234"', ETAG, false],
    ['"abc"', ETAG, false],
    ['xyz"abc123"', ETAG, false],
  ])('matches %j against %s: %s', (header, etag, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });
});

describe('cookies', () => {
  it.each([
    ['plinth_session', false, 'plinth_session'],
    ['plinth_session', true, '__Host-plinth_session'],
    ['plinth_access', true, '__Host-plinth_access'],
  ])('names %s %s as %s', (base, secure, name) => {
    expect(cookieName(base, secure)).toBe(name);
  });

  it.each([
    ['a', 'v', false, 60, 'a=v; Max-Age=60; Path=/; HttpOnly; SameSite=Lax'],
    ['__Host-a', 'v', true, 60, '__Host-a=v; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax'],
    ['a', '', false, 0, 'a=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax'],
    ['a', 'acct_1.1700000000000.sig-_', false, 604799.9, 'a=acct_1.1700000000000.sig-_; Max-Age=604799; Path=/; HttpOnly; SameSite=Lax'],
    ['a', 'x;y z', false, -5, 'a=x%3By%20z; Max-Age=0; Path=/; HttpOnly; SameSite=Lax'],
  ])('sets %s=%j (secure %s, %s s) as %s', (name, value, secure, maxAgeSeconds, line) => {
    expect(setCookie(name, value, { secure, maxAgeSeconds })).toBe(line);
  });

  it('refuses a name a Set-Cookie line cannot carry', () => {
    expect(() => setCookie('a;b', 'v', { secure: false, maxAgeSeconds: 1 })).toThrow();
  });

  it.each([
    [undefined, {}],
    ['', {}],
    ['a=1', { a: '1' }],
    ['a=1; b=2', { a: '1', b: '2' }],
    ['a=1; a=2', { a: '1' }],
    [' a = 1 ;b="2"', { a: '1', b: '"2"' }],
    ['a=%41', { a: 'A' }],
    ['junk; a=1', { a: '1' }],
  ])('reads %j as %j', (header, cookies) => {
    expect({ ...readCookies(header) }).toEqual(cookies);
  });

  it.each([
    [undefined, 'a', 16, []],
    ['', 'a', 16, []],
    ['a=1', 'a', 16, ['1']],
    ['a=1; b=2; a=3', 'a', 16, ['1', '3']],
    ['a=1;a=2;a=3', 'a', 2, ['1', '2']],
    [' a = 1 ', 'a', 16, ['1']],
    ['aa=1; A=2', 'a', 16, []],
    ['a', 'a', 16, []],
    ['a=x=y', 'a', 16, ['x=y']],
  ])('finds every value of %j named %s (at most %i): %j', (header, name, max, values) => {
    expect(cookieValues(header, name, max)).toEqual(values);
  });
});
