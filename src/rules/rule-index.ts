/**
 * An index over the path patterns of a rules file (`_redirects` rules, `_headers` blocks), so a
 * request path is matched against all of them at a cost that does not grow with how much of each
 * pattern the path matches. A pattern matches a path when the lengths fit (equal, or no longer
 * with a `*`) and every literal segment equals the path's segment at its position; placeholders
 * match any segment. So the index keeps, as bit sets over the patterns (one bit each, in file
 * order): the patterns of each length, and per position the patterns with a literal there and
 * those with each literal value. A lookup ANDs these, once per position where the patterns'
 * literals differ (at most `PLINTH_RULES_MAX_SEGMENTS`); the bits left are the matching patterns,
 * read in file order. Built once per rules file and thread, on first use, and kept beside it in a
 * WeakMap (the compiled rules themselves stay plain stored data).
 */
import type { CompiledPattern } from './rule-patterns.js';

export interface PatternIndex {
  /** 32-bit words per bit set. */
  readonly words: number;
  /** Patterns without `*`, by their segment count. */
  readonly exactByLength: ReadonlyMap<number, Int32Array>;
  /** `splatUpTo[n]`: patterns with `*` of at most `n` segments before it (n up to the longest). */
  readonly splatUpTo: readonly Int32Array[];
  /** Per position with a literal in some pattern: the patterns with one there, and those with each value. */
  readonly positions: ReadonlyArray<Position | undefined>;
}

interface Position {
  literal: Int32Array;
  byValue: ReadonlyMap<string, Int32Array | number[]>;
  /** The one value every literal here has, if so: a path with it there drops nothing. */
  only?: string;
}

// A value that more patterns than a bit set has words share at one position is kept as a bit
// set, a rarer one as a list of pattern numbers: a lookup then costs at most about two passes over
// the words per position, and the index stays near the size of the patterns themselves.

export function buildPatternIndex(patterns: readonly CompiledPattern[]): PatternIndex {
  const words = Math.max(1, Math.ceil(patterns.length / 32));
  const bits = (): Int32Array => new Int32Array(words);
  const exactByLength = new Map<number, Int32Array>();
  let longestSplat = -1;
  for (const pattern of patterns) if (pattern.splat) longestSplat = Math.max(longestSplat, pattern.parts.length);
  const splatAt = Array.from({ length: longestSplat + 1 }, bits);
  const positions: Array<{ literal: Int32Array; values: Map<string, number[]> }> = [];
  patterns.forEach((pattern, n) => {
    const word = n >>> 5;
    const bit = 1 << (n & 31);
    if (pattern.splat) splatAt[pattern.parts.length]![word]! |= bit;
    else {
      let set = exactByLength.get(pattern.parts.length);
      if (set === undefined) exactByLength.set(pattern.parts.length, (set = bits()));
      set[word]! |= bit;
    }
    pattern.parts.forEach((part, i) => {
      if (typeof part !== 'string') return;
      const position = (positions[i] ??= { literal: bits(), values: new Map() });
      position.literal[word]! |= bit;
      const list = position.values.get(part);
      if (list === undefined) position.values.set(part, [n]);
      else list.push(n);
    });
  });
  // Up to n segments: every splat pattern no longer than n.
  for (let n = 1; n < splatAt.length; n++) for (let w = 0; w < words; w++) splatAt[n]![w]! |= splatAt[n - 1]![w]!;
  const listMax = words;
  return {
    words,
    exactByLength,
    splatUpTo: splatAt,
    positions: Array.from({ length: positions.length }, (_, i): Position | undefined => {
      const position = positions[i];
      if (position === undefined) return undefined;
      const byValue = new Map<string, Int32Array | number[]>();
      for (const [value, list] of position.values) {
        if (list.length <= listMax) byValue.set(value, list);
        else {
          const set = bits();
          for (const n of list) set[n >>> 5]! |= 1 << (n & 31);
          byValue.set(value, set);
        }
      }
      return { literal: position.literal, byValue, ...(position.values.size === 1 ? { only: [...position.values.keys()][0] } : {}) };
    }),
  };
}

/**
 * The numbers of the patterns that match a path (as segments), in file order; with `among`, only
 * those whose bit is set there (a bit set of the same size, built by the caller).
 */
export function matchingPatterns(index: PatternIndex, segments: readonly string[], among?: Int32Array): number[] {
  const { words } = index;
  const candidates = new Int32Array(words);
  const exact = index.exactByLength.get(segments.length);
  const splat = index.splatUpTo[Math.min(segments.length, index.splatUpTo.length - 1)];
  let any = false;
  for (let w = 0; w < words; w++) {
    const word = ((exact?.[w] ?? 0) | (splat?.[w] ?? 0)) & (among === undefined ? -1 : among[w]!);
    candidates[w] = word;
    if (word !== 0) any = true;
  }
  const reach = Math.min(segments.length, index.positions.length);
  for (let i = 0; i < reach && any; i++) {
    const position = index.positions[i];
    // No literal here, or the one every pattern has: nothing drops out.
    if (position === undefined || position.only === segments[i]) continue;
    const same = position.byValue.get(segments[i]!);
    // Patterns with another literal here drop out; those with this one, or a placeholder, stay.
    any = false;
    if (same === undefined || Array.isArray(same)) {
      const kept = same === undefined ? undefined : same.filter((n) => (candidates[n >>> 5]! & (1 << (n & 31))) !== 0);
      for (let w = 0; w < words; w++) if ((candidates[w]! &= ~position.literal[w]!) !== 0) any = true;
      if (kept !== undefined && kept.length > 0) {
        any = true;
        for (const n of kept) candidates[n >>> 5]! |= 1 << (n & 31);
      }
    } else {
      for (let w = 0; w < words; w++) if ((candidates[w]! &= ~position.literal[w]! | same[w]!) !== 0) any = true;
    }
  }
  const found: number[] = [];
  if (!any) return found;
  for (let w = 0; w < words; w++) {
    let word = candidates[w]!;
    while (word !== 0) {
      const low = word & -word;
      found.push(w * 32 + 31 - Math.clz32(low));
      word ^= low;
    }
  }
  return found;
}

const indexes = new WeakMap<object, PatternIndex>();

/** The index of a rules file's patterns, built on first use and kept as long as the rules are. */
export function patternIndexOf(owner: object, patterns: () => readonly CompiledPattern[]): PatternIndex {
  let index = indexes.get(owner);
  if (index === undefined) indexes.set(owner, (index = buildPatternIndex(patterns())));
  return index;
}
