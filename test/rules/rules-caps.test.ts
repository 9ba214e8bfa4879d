import { describe, expect, it } from 'vitest';
import { compileHeaders, compilePattern, compileRedirects, type RulesFileLimits } from '../../src/rules/index.js';

/** The caps that bound what matching a request against a site's rules can cost (0 turns one off). */
const LIMITS: RulesFileLimits = { maxEntries: 0, maxLineChars: 0, maxFileBytes: 0, maxPatternSegments: 4, maxConditions: 3, maxHeaderLines: 3 };

const segments = (n: number): string => `/${Array.from({ length: n }, (_, i) => `s${i}`).join('/')}`;

describe('rules file caps', () => {
  it.each([
    [segments(4), true],
    [`${segments(4)}/`, true],
    [`${segments(3)}/*`, true],
    [`${segments(4)}/*`, false],
    [segments(5), false],
    ['/:a/:b/:c/:d', true],
    ['/:a/:b/:c/:d/:e', false],
  ])('a pattern %s fits 4 segments: %s', (pattern, fits) => {
    expect(compilePattern(pattern, 4).ok).toBe(fits);
    expect(compilePattern(pattern, 0).ok).toBe(true);
  });

  it.each([
    [`${segments(5)} /to 301`, 1, 'too_many_segments'],
    [`/a /to 301\n/b ${segments(5)} 301`, undefined, undefined],
    [`/a q=1 /to 301\n/b q=1 k=2 /to 301`, undefined, undefined],
    [`/a q=1 /to 301\n/b q=1 k=2 z=:z /to 301`, 2, 'too_many_conditions'],
    [`# a comment\n/a q=1 k=:k z=3 y=4 /to 301`, 2, 'too_many_conditions'],
  ])('_redirects %j is refused at line %s (%s)', (text, line, reason) => {
    const result = compileRedirects(text, LIMITS);
    expect(result.ok ? undefined : [result.error.line, result.error.reason]).toEqual(line === undefined ? undefined : [line, reason]);
    expect(compileRedirects(text, { ...LIMITS, maxPatternSegments: 0, maxConditions: 0 }).ok).toBe(true);
  });

  it.each([
    [`${segments(5)}\n  X-A: 1`, 1, 'too_many_segments'],
    [`/*\n  X-A: 1\n  X-B: 2\n/a\n  ! X-A`, undefined, undefined],
    [`/*\n  X-A: 1\n  X-B: 2\n/a\n  ! X-A\n  X-C: 3`, 6, 'too_many_headers'],
    [`/*\n  X-A: 1\n  X-A: 2\n  X-A: 3\n  X-A: 4`, 5, 'too_many_headers'],
  ])('_headers %j is refused at line %s (%s)', (text, line, reason) => {
    const result = compileHeaders(text, LIMITS);
    expect(result.ok ? undefined : [result.error.line, result.error.reason]).toEqual(line === undefined ? undefined : [line, reason]);
    expect(compileHeaders(text, { ...LIMITS, maxPatternSegments: 0, maxHeaderLines: 0 }).ok).toBe(true);
  });
});
