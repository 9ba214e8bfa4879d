import { describe, expect, it } from 'vitest';
import type { Encoding } from '../../src/rules/index.js';
import { cacheControlFor, matchesIfNoneMatch, parseRange, pickEncoding } from '../../src/serve/http-rules.js';

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

const BOTH: readonly Encoding[] = ['br', 'gzip'];
const GZIP_ONLY: readonly Encoding[] = ['gzip'];
const BR_ONLY: readonly Encoding[] = ['br'];

describe('pickEncoding', () => {
  it.each([
    [undefined, BOTH, undefined],
    ['', BOTH, undefined],
    ['gzip, deflate, br, zstd', BOTH, 'br'],
    ['gzip, deflate, br', GZIP_ONLY, 'gzip'],
    ['gzip, deflate', BOTH, 'gzip'],
    ['br', GZIP_ONLY, undefined],
    ['gzip', [], undefined],
    ['BR, GZIP', BOTH, 'br'],
    ['gzip;q=1, br;q=0.5', BOTH, 'gzip'],
    ['gzip;q=0.5, br;q=0.5', BOTH, 'br'],
    ['br;q=0, gzip', BOTH, 'gzip'],
    ['br;q=0, gzip;q=0', BOTH, undefined],
    ['br; q=0.8, gzip ; q=0.9', BOTH, 'gzip'],
    ['*', BOTH, 'br'],
    ['*', GZIP_ONLY, 'gzip'],
    ['*;q=0', BOTH, undefined],
    ['*;q=0.5, br;q=0', BOTH, 'gzip'],
    ['*;q=0, gzip', BOTH, 'gzip'],
    ['identity', BOTH, undefined],
    ['x-gzip', BOTH, 'gzip'],
    ['deflate, br', BR_ONLY, 'br'],
    ['br;q=2', BOTH, undefined],
    ['br;q=abc, gzip', BOTH, 'gzip'],
    ['br;q=-1', BOTH, undefined],
    ['br;q=0.0001', BOTH, undefined],
    ['br;q=1.000', BOTH, 'br'],
    ['br;level=5', BOTH, 'br'],
    ['br, br;q=0', BOTH, 'br'],
    [',,, ;;;', BOTH, undefined],
    ['gzipx, brotli', BOTH, undefined],
  ])('picks from %j with %j: %s', (header, available, expected) => {
    expect(pickEncoding(header, available)).toBe(expected);
  });
});

const ETAG = '"abc123"';

describe('matchesIfNoneMatch', () => {
  it.each([
    [undefined, ETAG, false],
    ['', ETAG, false],
    ['"abc123"', ETAG, true],
    [' "abc123" ', ETAG, true],
    ['W/"abc123"', ETAG, true],
    ['"abc123"', 'W/"abc123"', true],
    ['W/"abc123"', 'W/"abc123"', true],
    ['"other", "abc123"', ETAG, true],
    ['"other","abc123"', ETAG, true],
    ['"a,b", "abc123"', ETAG, true],
    ['"other"', ETAG, false],
    ['"a,b"', '"a"', false],
    ['*', ETAG, true],
    [' * ', ETAG, true],
    ['abc123', ETAG, false],
    ['"ABC123"', ETAG, false],
    ['"abc123', ETAG, false],
    ['w/"abc123"', ETAG, false],
    ['"abc1234"', ETAG, false],
    ['"abc"', ETAG, false],
    ['xyz"abc123"', ETAG, false],
    ['"other", garbage, "abc123"', ETAG, false],
    ['"abc123", garbage', ETAG, true],
    ['"other",, "abc123"', ETAG, true],
    ['"other" "abc123"', ETAG, false],
  ])('matches %j against %s: %s', (header, etag, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });
});

describe('cacheControlFor', () => {
  it.each([
    ['text/html; charset=utf-8', 'public, max-age=60'],
    ['text/html', 'public, max-age=60'],
    ['TEXT/HTML', 'public, max-age=60'],
    ['text/css; charset=utf-8', 'public, max-age=300'],
    ['image/png', 'public, max-age=300'],
    ['application/octet-stream', 'public, max-age=300'],
    ['', 'public, max-age=300'],
  ])('gives %j %s', (type, expected) => {
    expect(cacheControlFor(type)).toBe(expected);
  });
});
