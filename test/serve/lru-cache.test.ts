import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createLruCache, type LruHolder } from '../../src/serve/lru-cache.js';

const holder = <V>(): LruHolder<V> => ({ held: undefined, used: false, heldFrom: undefined });

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

  it('counts shared memory no entry weighs (charge), evicting others than the one kept, and gives it back from dropped', () => {
    // Two entries of weight 0 share 6 bytes, counted until both are gone.
    const shared = { live: 0 };
    const cache = createLruCache<string>(10, (value) => {
      if (value.startsWith('s') && --shared.live === 0) cache.charge(-6, '');
    });
    cache.set('x', 'X', 3);
    shared.live = 2;
    cache.set('s1', 's1', 0);
    cache.set('s2', 's2', 0);
    cache.charge(6, 's2');
    expect(cache.weight).toBe(9);
    // Over budget: x, the oldest, goes; a sharer going alone would free nothing.
    cache.set('y', 'Y', 4);
    expect(cache.get('x')).toBeUndefined();
    expect(cache.weight).toBe(10);
    cache.delete('s1');
    cache.delete('s2');
    expect(cache.weight).toBe(4);
    expect(cache.get('y')).toBe('Y');
    // Nothing left to drop: charging past the budget ends (the charge waits for its owner).
    const empty = createLruCache<string>(4);
    empty.charge(6, 'none');
    expect(empty.weight).toBe(6);
    empty.charge(-6, '');
    expect(empty.weight).toBe(0);
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

  it('takes a held value back from every holder when the entry is evicted, replaced or deleted', () => {
    const cache = createLruCache<string>(8);
    cache.set('a', 'A', 4);
    const [first, second] = [holder<string>(), holder<string>()];
    expect(cache.hold('a', first)).toBe('A');
    expect(cache.hold('a', second)).toBe('A');
    expect(first.held).toBe('A');
    expect(second.held).toBe('A');
    cache.set('b', 'B', 4);
    cache.set('c', 'C', 4); // a was used through its holders (a hold counts as a use): b goes
    expect(cache.get('b')).toBeUndefined();
    expect(first.held).toBe('A');
    cache.set('d', 'D', 4); // c is the oldest now, never used: it goes
    expect(cache.get('c')).toBeUndefined();
    expect(first.held).toBe('A');
    cache.set('e', 'E', 4); // nobody used a since its second chance: it goes, and from both holders
    expect(cache.get('a')).toBeUndefined();
    expect(first.held).toBeUndefined();
    expect(second.held).toBeUndefined();
    expect(cache.weight).toBe(8);

    cache.hold('d', first);
    cache.set('d', 'D2', 4);
    expect(first.held).toBeUndefined();
    cache.hold('d', first);
    expect(first.held).toBe('D2');
    cache.delete('d');
    expect(first.held).toBeUndefined();
    expect(cache.hold('missing', first)).toBeUndefined();
    expect(first.held).toBeUndefined();
  });

  it('hands a holder the form of the value it asks for, and takes that back with the value', () => {
    const cache = createLruCache<{ bytes: string }>(8);
    cache.set('a', { bytes: 'A' }, 4);
    const plain = holder<string>();
    expect(cache.hold('a', plain, (value) => value.bytes)).toBe('A');
    expect(plain.held).toBe('A');
    cache.set('a', { bytes: 'A2' }, 4);
    expect(plain.held).toBeUndefined();
    expect(cache.hold('a', plain, (value) => value.bytes)).toBe('A2');
    cache.delete('a');
    expect(plain.held).toBeUndefined();
  });

  it('forgets a released holder: its value goes back, and the entry no longer clears it', () => {
    const cache = createLruCache<string>(8);
    cache.set('a', 'A', 4);
    const kept = holder<string>();
    const released = holder<string>();
    cache.hold('a', kept);
    cache.hold('a', released);
    cache.release(released);
    expect(released.held).toBeUndefined();
    released.held = 'elsewhere'; // the owner reuses the object: the entry must not touch it
    cache.delete('a');
    expect(kept.held).toBeUndefined();
    expect(released.held).toBe('elsewhere');
  });

  it('tells whether a value was stored, and names each value that leaves', () => {
    const left: string[] = [];
    const cache = createLruCache<string>(8, (value) => left.push(value));
    expect(cache.set('a', 'A', 4)).toBe(true);
    expect(cache.set('huge', 'H', 9)).toBe(false);
    cache.set('b', 'B', 4);
    cache.set('c', 'C', 4);
    cache.set('b', 'B2', 4);
    cache.delete('c');
    expect(left).toEqual(['A', 'B', 'C']);
  });

  it('keeps no memory of an evicted value through its holders', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const cache = createLruCache<Buffer>(2 * 1024 * 1024);
    const holders = [holder<Buffer>(), holder<Buffer>()];
    const weak = (() => {
      const bytes = Buffer.alloc(1024 * 1024, 1);
      cache.set('a', bytes, bytes.byteLength);
      for (const each of holders) cache.hold('a', each);
      return new WeakRef(bytes);
    })();
    cache.set('b', Buffer.alloc(1024 * 1024 + 1), 1024 * 1024 + 1);
    cache.set('c', Buffer.alloc(1024 * 1024 + 1), 1024 * 1024 + 1);
    expect(holders.every((each) => each.held === undefined)).toBe(true);
    // A WeakRef keeps its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(weak.deref()).toBeUndefined();
  });
});
