import { describe, expect, it } from 'vitest';
import { CLOCK_TOLERANCE_MS, nextOffset } from '../../src/store/database-clock.js';

const DAY_MS = 24 * 3600_000;

describe('the offset a node applies to its clock to go by PostgreSQL’s', () => {
  it.each([
    ['clocks that agree', 0, 0.4, 0],
    ['a round trip of jitter', 0, CLOCK_TOLERANCE_MS, 0],
    ['a node behind by a second', 0, 1000, 1000],
    ['a node four days ahead', 0, -4 * DAY_MS + 0.3, -4 * DAY_MS],
    ['the same skew, read again with jitter', -4 * DAY_MS, -4 * DAY_MS + 120, -4 * DAY_MS],
    ['a clock then corrected by its time service', -4 * DAY_MS, 3, 0],
    ['a clock stepped by an hour', 1000, 1000 + 3600_000, 3601_000],
    ['a small skew that went away', 900, 200, 0],
  ])('%s', (_, current, measured, applied) => {
    expect(nextOffset(current, measured)).toBe(applied);
  });
});
