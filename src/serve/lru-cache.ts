/**
 * A least-recently-used cache bounded by a byte budget (or, with a weight of 1 per entry, by a
 * count). Each HTTP thread owns its own, so there is no locking; a Map keeps insertion order and a
 * hit re-inserts the key, which makes the first key the least recently used.
 */
export interface LruCache<V> {
  get(key: string): V | undefined;
  /** Stores a value unless its weight alone exceeds the budget. */
  set(key: string, value: V, weight: number): void;
  readonly weight: number;
  readonly size: number;
}

export function createLruCache<V>(budget: number): LruCache<V> {
  const entries = new Map<string, { value: V; weight: number }>();
  let total = 0;

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value, weight) {
      if (weight > budget) return;
      const previous = entries.get(key);
      if (previous) {
        total -= previous.weight;
        entries.delete(key);
      }
      entries.set(key, { value, weight });
      total += weight;
      for (const [oldest, entry] of entries) {
        if (total <= budget) break;
        entries.delete(oldest);
        total -= entry.weight;
      }
    },
    get weight() {
      return total;
    },
    get size() {
      return entries.size;
    },
  };
}
