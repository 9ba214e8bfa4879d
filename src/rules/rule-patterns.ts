/**
 * Path patterns of `_redirects` and `_headers` (Netlify's and Cloudflare's form): literal
 * segments, `:name` placeholders (one segment each) and a final `*` splat (the rest, possibly
 * nothing). Compiled at deploy into plain data that crosses threads and is stored with the
 * revision; matched segment by segment while serving, without regular expressions, so a hostile
 * pattern costs no more than its length.
 */

/** A literal segment (decoded), or a placeholder by name. */
export type PatternPart = string | { p: string };

export interface CompiledPattern {
  parts: PatternPart[];
  /** Ends in `*`: matches any rest of the path, nothing included. */
  splat: boolean;
}

/** Placeholder values of a match, decoded; `splat` holds the rest joined by `/`. */
export type PatternParams = Record<string, string>;

const PLACEHOLDER = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

export type PatternResult = { ok: true; pattern: CompiledPattern } | { ok: false; reason: string; hint: string };

/**
 * Compiles `/a/:b/*`. The pattern is matched against decoded request paths, so escapes in it
 * are decoded here; a trailing slash is not significant (`/about/` and `/about` match both).
 */
export function compilePattern(raw: string, maxSegments = 0): PatternResult {
  if (!raw.startsWith('/')) {
    return /^https?:\/\//i.test(raw) || raw.startsWith('//')
      ? { ok: false, reason: 'full_url', hint: 'a site is served at one address: write the path only, such as /blog/*' }
      : { ok: false, reason: 'not_a_path', hint: 'write a path that starts with /, such as /old-page' };
  }
  if (raw.includes('?')) {
    return { ok: false, reason: 'query_in_path', hint: 'write a query condition as key=:value after the path, such as /search q=:q' };
  }
  const segments = raw.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  if (maxSegments > 0 && segments.length > maxSegments) {
    return { ok: false, reason: 'too_many_segments', hint: `a path pattern may have at most ${maxSegments} segments; end it in * to cover deeper paths` };
  }
  const parts: PatternPart[] = [];
  const names = new Set<string>();
  let splat = false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment === '*') {
      if (i !== segments.length - 1) return { ok: false, reason: 'splat_not_last', hint: 'a * must be the last segment of the path, such as /assets/*' };
      splat = true;
      continue;
    }
    if (segment.includes('*'))
      return { ok: false, reason: 'partial_splat', hint: 'a * stands for whole segments only: write /assets/* rather than /assets/*.js' };
    if (segment === '' || segment === '.' || segment === '..')
      return { ok: false, reason: 'bad_segment', hint: 'write the path without //, ./ or ../ segments' };
    const placeholder = PLACEHOLDER.exec(segment);
    if (placeholder) {
      const name = placeholder[1]!;
      if (name === 'splat') return { ok: false, reason: 'reserved_name', hint: ':splat is the value of *; name the placeholder differently' };
      if (names.has(name)) return { ok: false, reason: 'duplicate_placeholder', hint: `use :${name} once in the path` };
      names.add(name);
      parts.push({ p: name });
      continue;
    }
    if (segment.startsWith(':')) return { ok: false, reason: 'bad_placeholder', hint: 'a placeholder is : and a name of letters, digits and _, such as :slug' };
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return { ok: false, reason: 'bad_encoding', hint: 'write %-escapes as % and two hex digits' };
    }
    if (decoded.includes('/') || decoded.includes('\\'))
      return { ok: false, reason: 'bad_segment', hint: 'write / as a separator, not %2F, and no backslashes' };
    parts.push(decoded);
  }
  return { ok: true, pattern: { parts, splat } };
}

/** Placeholder names a pattern defines (`splat` included when it ends in `*`). */
export function patternNames(pattern: CompiledPattern): Set<string> {
  const names = new Set<string>();
  for (const part of pattern.parts) if (typeof part !== 'string') names.add(part.p);
  if (pattern.splat) names.add('splat');
  return names;
}

/**
 * Matches a normalized request path, as segments (no empty ones). Returns the placeholder values,
 * or undefined. Linear in the pattern's length.
 */
export function matchPattern(pattern: CompiledPattern, segments: readonly string[]): PatternParams | undefined {
  const { parts } = pattern;
  if (segments.length < parts.length) return undefined;
  if (!pattern.splat && segments.length !== parts.length) return undefined;
  let params: PatternParams | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (typeof part === 'string') {
      if (part !== segments[i]) return undefined;
    } else {
      (params ??= {})[part.p] = segments[i]!;
    }
  }
  if (pattern.splat) (params ??= {}).splat = segments.slice(parts.length).join('/');
  return params ?? NO_PARAMS;
}

const NO_PARAMS: PatternParams = Object.freeze({}) as PatternParams;
