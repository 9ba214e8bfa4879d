import { describe, expect, it } from 'vitest';
import { exceedsCap, rateWindow } from '../../src/rules/index.js';

/** The fixed windows every rate cap counts in, on LMDB and PostgreSQL alike. */

describe('rate windows', () => {
  it.each<[string, number, number, number, number]>([
    ['the first moment of a window', 3_600_000, 3_600_000, 3_600_000, 3_600_000],
    ['inside a window', 3_725_000, 3_600_000, 3_600_000, 3_475_000],
    ['the last moment of a window', 7_199_999, 3_600_000, 3_600_000, 1],
    ['a minute window', 61_500, 60_000, 60_000, 58_500],
    ['the epoch', 0, 60_000, 0, 60_000],
  ])('%s', (_name, at, windowMs, start, retryAfterMs) => {
    expect(rateWindow(at, windowMs)).toEqual({ start, retryAfterMs });
  });

  it.each<[number, number, number, boolean]>([
    [0, 1, 1, false],
    [1, 1, 1, true],
    [4, 1, 5, false],
    [5, 1, 5, true],
    [3, 3, 5, true],
    [5, -1, 5, false],
  ])('%i held + %i more against a cap of %i → over: %s', (held, hits, limit, over) => {
    expect(exceedsCap(held, hits, limit)).toBe(over);
  });
});
