import { describe, expect, it } from 'vitest';
import { withGetters } from '../../src/serve/fast-object.js';

describe('withGetters', () => {
  it('gives the methods as own properties and each getter as a read-only property with its current value', () => {
    let count = 0;
    const counter = withGetters({ add: () => void count++ }, { count: () => count });
    expect(counter.count).toBe(0);
    counter.add();
    counter.add();
    expect(counter.count).toBe(2);
    expect(Object.keys(counter)).toEqual(['add']);
    expect(() => {
      (counter as { count: number }).count = 5;
    }).toThrow(TypeError);
    expect(counter.count).toBe(2);
  });

  it('keeps each object’s getters its own, however many are made', () => {
    const made = [1, 2, 3].map((n) => withGetters({}, { n: () => n }));
    expect(made.map((object) => object.n)).toEqual([1, 2, 3]);
  });
});
