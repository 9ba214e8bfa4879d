import { describe, expect, it } from 'vitest';
import { inlineValues } from '../../src/store/sql-literals.js';

describe('inlineValues', () => {
  it.each([
    ['SELECT $1', ['plain'], 'SELECT $q$plain$q$'],
    ['SELECT $1, $2', [7, null], 'SELECT 7, NULL'],
    ['SELECT $1::text[]', [[]], "SELECT '{}'::text[]"],
    ['SELECT $1::bigint[]', [[1, 2]], 'SELECT ARRAY[1,2]::bigint[]'],
    ['SELECT $2, $1', [true, 'b'], 'SELECT $q$b$q$, TRUE'],
    ['SELECT $10', Array.from({ length: 10 }, (_, i) => i), 'SELECT 9'],
  ])('%s with %j', (text, values, expected) => {
    expect(inlineValues(text, values)).toBe(expected);
  });

  it('quotes with another tag a string that holds the tag, or ends where it would begin', () => {
    for (const text of ['a$q$b', 'ends with $q', "it's \\ $$ $q"]) {
      const quoted = inlineValues('$1', [text]);
      const tag = quoted.slice(0, quoted.indexOf('$', 1) + 1);
      expect(quoted).toBe(`${tag}${text}${tag}`);
      expect((text + tag).indexOf(tag)).toBe(text.length);
    }
  });

  it.each([
    [['x'], '$2', RangeError],
    [[1.5], '$1', TypeError],
    [[{}], '$1', TypeError],
    [['nul\u0000'], '$1', TypeError],
  ])('refuses %j for %s', (values, text, error) => {
    expect(() => inlineValues(text, values)).toThrow(error);
  });
});
