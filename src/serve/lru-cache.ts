import { withGetters } from './fast-object.js';

/**
 * A cache bounded by a byte budget (or, with a weight of 1 per entry, by a count) that evicts
 * approximately least-recently-used entries. Each HTTP thread owns its own, so there is no
 * locking. A hit only sets a flag ("second chance"): eviction walks from the oldest insert and
 * moves flagged entries to the back instead of dropping them. That keeps the hot path to one
 * Map lookup instead of a delete and re-insert per hit.
 */
export interface LruCache<V> {
  get(key: string): V | undefined;
  /** Like `get`, but returns the stored entry itself, for a caller that keeps it to skip the lookup. */
  entry(key: string): LruEntry<V> | undefined;
  /** The value of a kept entry, marked as used; undefined once it was evicted, replaced or deleted. */
  use(entry: LruEntry<V>): V | undefined;
  /** Stores a value unless its weight alone exceeds the budget. */
  set(key: string, value: V, weight: number): void;
  delete(key: string): void;
  /** Adds `delta` to a stored entry's weight (a value that grew), evicting others if needed. */
  adjust(key: string, delta: number): void;
  values(): IterableIterator<V>;
  readonly weight: number;
  readonly size: number;
}

/** A stored entry. Its value is dropped when it leaves the cache, so keeping one holds no memory. */
export interface LruEntry<V> {
  readonly value: V | undefined;
}

interface Slot<V> {
  value: V | undefined;
  weight: number;
  used: boolean;
}

export function createLruCache<V>(budget: number): LruCache<V> {
  const entries = new Map<string, Slot<V>>();
  let total = 0;

  const evict = (keep: string): void => {
    // Each step drops an entry or clears a flag, so this ends within two rounds. The entry just
    // stored is never the victim of its own insert.
    for (const [key, slot] of entries) {
      if (total <= budget) return;
      // Only the entry being kept is left: it may stay over budget until something else is stored.
      if (entries.size === 1 && key === keep) return;
      entries.delete(key);
      if (slot.used || key === keep) {
        slot.used = false;
        entries.set(key, slot);
      } else {
        total -= slot.weight;
        slot.value = undefined;
      }
    }
    if (total > budget) evict(keep);
  };

  const methods: Omit<LruCache<V>, 'weight' | 'size'> = {
    get(key) {
      const slot = entries.get(key);
      if (slot === undefined) return undefined;
      // Written only when it changes: a hit leaves the slot's memory clean (many pages, one reader).
      if (!slot.used) slot.used = true;
      return slot.value;
    },
    entry(key) {
      const slot = entries.get(key);
      if (slot !== undefined) slot.used = true;
      return slot;
    },
    use(entry) {
      const slot = entry as Slot<V>;
      if (slot.value !== undefined && !slot.used) slot.used = true;
      return slot.value;
    },
    set(key, value, weight) {
      if (weight > budget) return;
      const previous = entries.get(key);
      if (previous) {
        total -= previous.weight;
        previous.value = undefined;
        entries.delete(key);
      }
      entries.set(key, { value, weight, used: false });
      total += weight;
      if (total > budget) evict(key);
    },
    delete(key) {
      const slot = entries.get(key);
      if (slot === undefined) return;
      total -= slot.weight;
      slot.value = undefined;
      entries.delete(key);
    },
    adjust(key, delta) {
      const slot = entries.get(key);
      if (slot === undefined) return;
      slot.weight += delta;
      total += delta;
      if (total > budget) evict(key);
    },
    *values() {
      for (const slot of entries.values()) yield slot.value!;
    },
  };
  // Not `get weight()` in the literal: that would make every cache a slow object (fast-object.ts).
  return withGetters(methods, { weight: () => total, size: () => entries.size });
}
