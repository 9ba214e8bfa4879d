import { describe, expect, it } from 'vitest';
import { createLruCache } from '../../src/serve/lru-cache.js';

describe('createLruCache', () => {
  it('evicts the least recently used entries past the byte budget', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    expect(cache.get('a')).toBe('A'); // a is now the most recent
    cache.set('c', 'C', 4); // over budget: b goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.weight).toBe(8);
  });

  it('never stores a value heavier than the whole budget', () => {
    const cache = createLruCache<string>(10);
    cache.set('big', 'x', 11);
    expect(cache.get('big')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('replaces a key without double counting', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'one', 6);
    cache.set('a', 'two', 6);
    expect(cache.weight).toBe(6);
    expect(cache.get('a')).toBe('two');
  });
});
