import { describe, expect, it } from 'vitest';
import { createLruCache } from '../../src/serve/lru-cache.js';

describe('createLruCache', () => {
  it('evicts entries not used since they were stored before recently used ones', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    expect(cache.get('a')).toBe('A'); // a gets a second chance
    cache.set('c', 'C', 4); // over budget: b, never used, goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.weight).toBe(8);
  });

  it('falls back to insertion order when every entry was used', () => {
    const cache = createLruCache<string>(8);
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    cache.get('a');
    cache.get('b');
    cache.set('c', 'C', 4);
    expect(cache.size).toBe(2);
    expect(cache.weight).toBe(8);
    expect(cache.get('c')).toBe('C');
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

  it('deletes a key and gives its weight back; deleting a missing key changes nothing', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'one', 6);
    cache.set('b', 'two', 3);
    cache.delete('a');
    cache.delete('missing');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.weight).toBe(3);
    expect(cache.size).toBe(1);
    cache.set('c', 'three', 7);
    expect(cache.get('b')).toBe('two');
  });
});
