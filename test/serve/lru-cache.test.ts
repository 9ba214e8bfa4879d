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

  it('grows an entry with adjust and evicts others to stay within budget, never the grown one', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'A', 3);
    cache.set('b', 'B', 3);
    cache.adjust('b', 5); // b now weighs 8: a goes
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe('B');
    expect(cache.weight).toBe(8);
    cache.adjust('b', 10); // alone and over budget: kept until something else is stored
    expect(cache.get('b')).toBe('B');
    expect(cache.weight).toBe(18);
    cache.set('c', 'C', 2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.weight).toBe(2);
  });

  it('gives weight back with a negative adjust; adjusting a missing key changes nothing', () => {
    const cache = createLruCache<string>(10);
    cache.set('a', 'A', 8);
    cache.adjust('a', -6);
    cache.adjust('missing', 100);
    expect(cache.weight).toBe(2);
    cache.set('b', 'B', 8);
    expect(cache.get('a')).toBe('A');
  });

  it('lists its values, and deleting while listing is safe', () => {
    const cache = createLruCache<string>(100);
    for (const key of ['a', 'b', 'c']) cache.set(key, key.toUpperCase(), 1);
    for (const value of cache.values()) if (value === 'B') cache.delete('b');
    expect([...cache.values()]).toEqual(['A', 'C']);
  });

  it('hands out entries whose value is gone once evicted, replaced or deleted', () => {
    const cache = createLruCache<string>(8);
    cache.set('a', 'A', 4);
    cache.set('b', 'B', 4);
    cache.set('c', 'C', 4);
    const a = cache.entry('a');
    const b = cache.entry('b');
    const c = cache.entry('c');
    expect(a).toBeUndefined(); // evicted by c: never used
    expect(cache.use(b!)).toBe('B');
    cache.set('d', 'D', 4); // b and c were both used: the older, b, loses its flag first and goes
    expect(cache.use(b!)).toBeUndefined();
    expect(b!.value).toBeUndefined(); // holds no memory for the keeper
    expect(cache.use(c!)).toBe('C');
    cache.set('c', 'C2', 4);
    expect(cache.use(c!)).toBeUndefined();
    const d = cache.entry('d')!;
    cache.delete('d');
    expect(cache.use(d)).toBeUndefined();
    expect(cache.entry('missing')).toBeUndefined();
  });

  it('counts use through a kept entry as a hit for eviction', () => {
    const cache = createLruCache<string>(12);
    cache.set('a', 'A', 4);
    const a = cache.entry('a')!;
    for (const key of ['b', 'c', 'd', 'e', 'f']) cache.set(key, key.toUpperCase(), 4);
    // a's flag was spent keeping it once; now it is the oldest entry and unused.
    expect([...cache.values()]).toEqual(['A', 'E', 'F']);
    cache.use(a);
    cache.set('g', 'G', 4);
    expect(cache.use(a)).toBe('A');
    expect(cache.get('e')).toBeUndefined();
  });
});
