import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkDeviceName, formatUserCode, isPollTooSoon, newUserCode, normaliseUserCode, USER_CODE_ALPHABET, USER_CODE_LENGTH } from '../../src/rules/index.js';

describe('user codes (RFC 8628 §6.1)', () => {
  it('draws eight characters of twenty consonants: no vowels, no digits, nothing to misread', () => {
    expect(USER_CODE_ALPHABET).toHaveLength(20);
    expect(USER_CODE_ALPHABET).not.toMatch(/[AEIOUY0-9]/);
    for (let i = 0; i < 200; i++) {
      const code = newUserCode(randomInt);
      expect(code).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`));
    }
  });

  it('uses every character of the alphabet at every place', () => {
    const seen = Array.from({ length: USER_CODE_LENGTH }, () => new Set<string>());
    let n = 0;
    // A counter in place of randomness: the i-th code is the alphabet's i-th letter at every place.
    const counter = (size: number): number => Math.floor(n++ / USER_CODE_LENGTH) % size;
    for (let i = 0; i < USER_CODE_ALPHABET.length; i++) [...newUserCode(counter)].forEach((char, place) => seen[place]!.add(char));
    expect(seen.every((chars) => chars.size === USER_CODE_ALPHABET.length)).toBe(true);
  });

  it('is shown as XXXX-XXXX', () => {
    expect(formatUserCode('BCDFGHJK')).toBe('BCDF-GHJK');
  });

  it.each([
    ['BCDF-GHJK', 'BCDFGHJK'],
    ['bcdf-ghjk', 'BCDFGHJK'],
    ['BCDFGHJK', 'BCDFGHJK'],
    [' bcdf ghjk ', 'BCDFGHJK'],
    ['BCDF–GHJK', 'BCDFGHJK'],
    ['B-C-D-F-G-H-J-K', 'BCDFGHJK'],
    ['BCDF-GHJ', undefined],
    ['BCDF-GHJKL', undefined],
    ['BCDF-GHJA', undefined],
    ['BCDF-GHJ0', undefined],
    ['BCDF_GHJK', undefined],
    ['BCDF%2DGHJK', undefined],
    ['ＢＣＤＦＧＨＪＫ', undefined],
    ['', undefined],
    ['B'.repeat(65), undefined],
    [undefined, undefined],
    [['BCDFGHJK'], undefined],
  ])('typed %j → %j', (typed, code) => {
    expect(normaliseUserCode(typed)).toBe(code);
  });
});

describe('device names', () => {
  it.each([
    [undefined, {}],
    [null, {}],
    ['', {}],
    ['   ', {}],
    ['laptop', { name: 'laptop' }],
    ['  my   laptop ', { name: 'my laptop' }],
    ['Ada’s ThinkPad — café', { name: 'Ada’s ThinkPad — café' }],
    ['x'.repeat(80), { name: 'x'.repeat(80) }],
    ['é'.repeat(80), { name: 'é'.repeat(80) }],
    ['x'.repeat(81), { problem: 'device_name may be at most 80 characters.' }],
    ['two\nlines', { problem: 'device_name must be printable characters on one line.' }],
    ['tab\there', { problem: 'device_name must be printable characters on one line.' }],
    ['bell\u0007', { problem: 'device_name must be printable characters on one line.' }],
    ['evil\u202Egnp.exe', { problem: 'device_name must be printable characters on one line.' }],
    ['zero\u200Bwidth', { problem: 'device_name must be printable characters on one line.' }],
    ['line\u2028separator', { problem: 'device_name must be printable characters on one line.' }],
  ])('%j → %j', (value, expected) => {
    expect(checkDeviceName(value)).toEqual(expected);
  });
});

describe('polling too soon (RFC 8628 §3.5)', () => {
  it.each([
    [undefined, 0, 5, false],
    [0, 5000, 5, false],
    [0, 4000, 5, false],
    [0, 3999, 5, true],
    [0, 0, 5, true],
    [0, 9000, 10, false],
    [0, 8000, 10, true],
    // A short interval keeps half of itself: a second of leeway would let any pace pass.
    [0, 0, 1, true],
    [0, 499, 1, true],
    [0, 500, 1, false],
    [0, 1000, 1, false],
    [0, 1999, 2, false],
    [0, 999, 2, true],
  ])('last poll %j, now %j, interval %j s → too soon %j', (last, at, interval, tooSoon) => {
    expect(isPollTooSoon(last, at, interval)).toBe(tooSoon);
  });
});
