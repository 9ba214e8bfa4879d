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
  /**
   * Hands a stored value to `holder` (`holder.held`), which then reads it without the cache; the
   * cache takes it back from every holder when the entry leaves (evicted, replaced or deleted), so
   * holding keeps no memory past the budget. Undefined (and nothing held) when `key` is not stored.
   * `form`: what the holder keeps of the value instead, the same memory (a Buffer's ArrayBuffer),
   * so the budget still counts it and it goes with the value.
   */
  hold(key: string, holder: LruHolder<V>): V | undefined;
  hold<H>(key: string, holder: LruHolder<H>, form: (value: V) => H): H | undefined;
  /** Takes a holder's value back (its owner is going away): the entry no longer knows it. */
  release(holder: LruHolder<unknown>): void;
  /** Stores a value unless its weight alone exceeds the budget; whether it was stored. */
  set(key: string, value: V, weight: number): boolean;
  delete(key: string): void;
  /** Adds `delta` to a stored entry's weight (a value that grew), evicting others if needed. */
  adjust(key: string, delta: number): void;
  /**
   * Counts `delta` bytes that are no one entry's (memory that several entries share and that lives
   * until the last of them leaves: bodies.ts `BodySlab`), evicting others than `keep` if needed.
   * Called with a negative `delta` from `dropped` too, while eviction runs: it only counts then.
   */
  charge(delta: number, keep: string): void;
  values(): IterableIterator<V>;
  readonly weight: number;
  readonly size: number;
}

/** A stored entry. Its value is dropped when it leaves the cache, so keeping one holds no memory. */
export interface LruEntry<V> {
  readonly value: V | undefined;
}

/**
 * An object outside the cache that keeps a stored value, to read it with no lookup and no read of
 * the entry (across many entries, one object fewer in the CPU's caches per read). Its use counts
 * as a hit of the entry when eviction looks (`used`, set by the holder, cleared by eviction).
 */
export interface LruHolder<V> {
  held: V | undefined;
  used: boolean;
  /** The entry it holds from, for `release`; the cache's own. */
  heldFrom: LruEntry<unknown> | undefined;
}

interface Slot<V> {
  value: V | undefined;
  weight: number;
  used: boolean;
  /** Whoever holds the value (`hold`), cleared with it. */
  holders: Set<LruHolder<unknown>> | undefined;
}

/** Takes a slot's value from the slot and every holder: nothing keeps it once it left the cache. */
function drop<V>(slot: Slot<V>): void {
  slot.value = undefined;
  const holders = slot.holders;
  if (holders === undefined) return;
  slot.holders = undefined;
  for (const holder of holders) {
    holder.held = undefined;
    holder.heldFrom = undefined;
  }
}

/** Whether the slot was used since eviction last looked, through the cache or a holder; clears the marks. */
function usedSince<V>(slot: Slot<V>): boolean {
  let used = slot.used;
  slot.used = false;
  if (slot.holders !== undefined)
    for (const holder of slot.holders)
      if (holder.used) {
        holder.used = false;
        used = true;
      }
  return used;
}

/** `dropped` runs for each value that leaves the cache (evicted, replaced or deleted). */
export function createLruCache<V>(budget: number, dropped?: (value: V) => void): LruCache<V> {
  const entries = new Map<string, Slot<V>>();
  let total = 0;

  const leave = (slot: Slot<V>): void => {
    const value = slot.value;
    drop(slot);
    if (dropped !== undefined && value !== undefined) dropped(value);
  };

  const evict = (keep: string): void => {
    // Each step drops an entry or clears a flag, so this ends within two rounds. The entry just
    // stored is never the victim of its own insert.
    for (const [key, slot] of entries) {
      if (total <= budget) return;
      // Only the entry being kept is left: it may stay over budget until something else is stored.
      if (entries.size === 1 && key === keep) return;
      entries.delete(key);
      if (usedSince(slot) || key === keep) {
        entries.set(key, slot);
      } else {
        total -= slot.weight;
        leave(slot);
      }
    }
    // Nothing left to drop: what is counted without an entry (`charge`) can only wait for its own.
    if (total > budget && entries.size > 0) evict(keep);
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
    hold<H>(key: string, holder: LruHolder<H>, form?: (value: V) => H): H | undefined {
      const slot = entries.get(key);
      if (slot === undefined || slot.value === undefined) return undefined;
      if (holder.heldFrom !== slot) {
        if (holder.heldFrom !== undefined) methods.release(holder);
        (slot.holders ??= new Set()).add(holder);
        holder.heldFrom = slot;
      }
      const held = form === undefined ? (slot.value as unknown as H) : form(slot.value);
      holder.held = held;
      holder.used = true;
      return held;
    },
    release(holder) {
      (holder.heldFrom as Slot<unknown> | undefined)?.holders?.delete(holder);
      holder.held = undefined;
      holder.heldFrom = undefined;
    },
    set(key, value, weight) {
      if (weight > budget) return false;
      const previous = entries.get(key);
      if (previous) {
        total -= previous.weight;
        leave(previous);
        entries.delete(key);
      }
      entries.set(key, { value, weight, used: false, holders: undefined });
      total += weight;
      if (total > budget) evict(key);
      return true;
    },
    delete(key) {
      const slot = entries.get(key);
      if (slot === undefined) return;
      total -= slot.weight;
      entries.delete(key);
      leave(slot);
    },
    adjust(key, delta) {
      const slot = entries.get(key);
      if (slot === undefined) return;
      slot.weight += delta;
      total += delta;
      if (total > budget) evict(key);
    },
    charge(delta, keep) {
      total += delta;
      if (delta > 0 && total > budget) evict(keep);
    },
    *values() {
      for (const slot of entries.values()) yield slot.value!;
    },
  };
  // Not `get weight()` in the literal: that would make every cache a slow object (fast-object.ts).
  return withGetters(methods, { weight: () => total, size: () => entries.size });
}
