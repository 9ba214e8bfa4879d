/**
 * Path patterns of `_redirects` and `_headers` (Netlify's and Cloudflare's form): literal
 * segments, `:name` placeholders (a whole segment, or a part of one as in `/file-:id.html`) and a
 * `*` splat. As the last segment `*` is the rest of the path (possibly nothing); elsewhere
 * (`/*.xml`, `/blog/*` + `/feed`) it stands for any characters, `/` included. A pattern may name a
 * host (`https://example.com/*`, `https://:sub.example.com/*`): it then applies to requests for
 * that host only. Compiled at deploy into plain data that crosses threads and is stored with the
 * revision; matched segment by segment while serving, without regular expressions, so a hostile
 * pattern costs no more than its length.
 */

/**
 * A literal segment (decoded), or a placeholder by name: a whole segment, or with literal text
 * before and after it in the segment (`file-:id.html`).
 */
export type PatternPart = string | { p: string; prefix?: string; suffix?: string };

/** A label of a host pattern: literal (lower-case), a placeholder (one label), or `*` (one or more labels). */
export type HostLabel = string | { p: string } | { splat: true };

export interface CompiledPattern {
  parts: PatternPart[];
  /** Has a `*`: matches any rest of the path, nothing included (see `glob`). */
  splat: boolean;
  /**
   * A `*` that is not the whole last segment: the rest of the path after `parts`, joined by `/`,
   * must start with `prefix` and end with `suffix` (decoded literals); what lies between is the
   * splat. `suffix` starts with `/` when `*` was a whole segment, and may then also match without
   * that `/` when the splat is empty (`/a/*` + `/b` matches `/a/b`, as on Netlify).
   */
  glob?: { prefix: string; suffix: string };
  /** The host the rule is for; absent: every host of the site. */
  host?: HostLabel[];
  /**
   * The rule index (rule-index.ts) narrows by whole segments only: a pattern with a `*` inside the
   * path, a placeholder inside a segment or a host must then be matched (`matchPattern`).
   */
  checked?: true;
}

/** Placeholder values of a match, decoded; `splat` holds the rest joined by `/`. */
export type PatternParams = Record<string, string>;

const PLACEHOLDER = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
// A placeholder inside a segment: literal text, `:name`, literal text (one placeholder a segment).
const INNER_PLACEHOLDER = /^([^:]*):([A-Za-z_][A-Za-z0-9_]*)(.*)$/;
const HOST_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

export type PatternResult = { ok: true; pattern: CompiledPattern } | { ok: false; reason: string; hint: string };

export interface PatternOptions {
  /** Segments a pattern may have; 0: any. */
  maxSegments?: number;
  /** A `*` may stand elsewhere than as the whole last segment. */
  innerSplat?: boolean;
  /** Which host patterns are read: `http(s)://host/path` (`_redirects`, as Netlify), `https://` only (`_headers`, as Cloudflare). */
  hosts?: 'http' | 'https';
}

type Refused = { ok: false; reason: string; hint: string };

const refuse = (reason: string, hint: string): Refused => ({ ok: false, reason, hint });

/**
 * Compiles `/a/:b/*` or `https://host/a/*`. The pattern is matched against decoded request paths,
 * so escapes in it are decoded here (an escape that is not one stays as written); a trailing
 * slash and empty segments are not significant (`/about/`, `//about` and `/about` match the same
 * paths, as request paths are normalized the same way). A query string is not part of a path: it
 * is left out, as Cloudflare does.
 */
export function compilePattern(raw: string, options: PatternOptions | number = {}): PatternResult {
  const { maxSegments = 0, innerSplat = false, hosts } = typeof options === 'number' ? { maxSegments: options } : options;
  const names = new Set<string>();
  let host: HostLabel[] | undefined;
  let pathRaw = raw;
  if (!raw.startsWith('/')) {
    const url = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(raw);
    if (url === null) return refuse('not_a_path', 'write a path that starts with /, such as /old-page');
    if (hosts === undefined || (hosts === 'https' && url[1]!.toLowerCase() === 'http')) {
      return hosts === undefined
        ? refuse('per_host_rule', 'rules for one host name are not read here; write the path only, such as /blog/*')
        : refuse('not_https', 'a rule for one host name starts with https://, such as https://www.example.org/*');
    }
    const compiled = compileHost(url[2]!, names);
    if (!compiled.ok) return compiled;
    host = compiled.host;
    pathRaw = url[3]!.startsWith('/') ? url[3]! : `/${url[3]!}`;
  }
  const query = pathRaw.indexOf('?');
  const path = query === -1 ? pathRaw : pathRaw.slice(0, query);
  // Whitespace at the end of a segment is not part of it, as on Netlify (`/a /` is `/a/`).
  const segments = path
    .split('/')
    .map((segment) => segment.trimEnd())
    .filter((segment) => segment !== '');
  if (maxSegments > 0 && segments.length > maxSegments) {
    return refuse('too_many_segments', `a path pattern may have at most ${maxSegments} segments; end it in * to cover deeper paths`);
  }
  const stars = segments.reduce((count, segment) => count + segment.split('*').length - 1, 0) + (names.has('splat') ? 1 : 0);
  if (stars > 1) return refuse('multiple_splats', 'a rule may have one *; use a :name placeholder for the other parts, such as /blog/:year/*');
  if (stars > 0 && /:splat(?![A-Za-z0-9_])/.test(path)) return refuse('splat_twice', ':splat is the value of *; name the placeholder differently');
  const parts: PatternPart[] = [];
  const withHost = (pattern: CompiledPattern): PatternResult => {
    const inside =
      pattern.glob !== undefined || host !== undefined || pattern.parts.some((part) => typeof part !== 'string' && (part.prefix ?? part.suffix) !== undefined);
    return { ok: true, pattern: { ...pattern, ...(host !== undefined ? { host } : {}), ...(inside ? { checked: true as const } : {}) } };
  };
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.includes('*')) {
      if (segment === '*' && i === segments.length - 1) return withHost({ parts, splat: true });
      if (!innerSplat) {
        return segment === '*'
          ? refuse('splat_not_last', 'a * must be the last segment of the path, such as /assets/*')
          : refuse('partial_splat', 'a * stands for whole segments here: write /assets/* rather than /assets/*.js');
      }
      const glob = inner(segment, segments.slice(i + 1));
      return glob.ok ? withHost({ parts, splat: true, glob: glob.glob }) : glob;
    }
    if (segment === '.' || segment === '..') return refuse('bad_segment', 'write the path without ./ or ../ segments');
    const placeholder = PLACEHOLDER.exec(segment) ?? INNER_PLACEHOLDER.exec(segment);
    if (placeholder) {
      const name = placeholder.length === 2 ? placeholder[1]! : placeholder[2]!;
      if (names.has(name)) return refuse(name === 'splat' ? 'splat_twice' : 'duplicate_placeholder', `use :${name} once in the rule`);
      if (name === 'splat' && stars > 0) return refuse('splat_twice', ':splat is the value of *; name the placeholder differently');
      if (placeholder.length === 2) {
        names.add(name);
        parts.push({ p: name });
        continue;
      }
      const [prefix, suffix] = [decodeSegment(placeholder[1]!), decodeSegment(placeholder[3]!)];
      if (suffix.includes(':') && INNER_PLACEHOLDER.test(suffix)) {
        return refuse('placeholders_in_one_segment', 'a segment may hold one :name; put a / or a literal between two, such as /:year/:month');
      }
      names.add(name);
      parts.push({ p: name, ...(prefix !== '' ? { prefix } : {}), ...(suffix !== '' ? { suffix } : {}) });
      continue;
    }
    const decoded = decodeSegment(segment);
    if (decoded.includes('/') || decoded.includes('\\')) return refuse('bad_segment', 'write / as a separator, not %2F, and no backslashes');
    parts.push(decoded);
  }
  return withHost({ parts, splat: false });
}

function compileHost(text: string, names: Set<string>): { ok: true; host: HostLabel[] } | Refused {
  if (/:\d*$/.test(text)) return refuse('port_in_host', 'write the host name without a port, such as https://www.example.org/*');
  const labels: HostLabel[] = [];
  for (const label of text.toLowerCase().split('.')) {
    if (label === '*') {
      if (names.has('splat')) return refuse('multiple_splats', 'a rule may have one *');
      names.add('splat');
      labels.push({ splat: true });
      continue;
    }
    const placeholder = PLACEHOLDER.exec(label);
    if (placeholder) {
      // Placeholder names keep the case they were written in, to match the target's.
      const name = text.split('.')[labels.length]!.slice(1);
      if (names.has(name)) return refuse('duplicate_placeholder', `use :${name} once in the rule`);
      names.add(name);
      labels.push({ p: name });
      continue;
    }
    if (!HOST_LABEL.test(label)) return refuse('bad_host', 'write a host name of letters, digits, - and dots, with :name or * for a whole label');
    labels.push(label);
  }
  return { ok: true, host: labels };
}

/** A `*` inside the path: literal text only may follow it (a placeholder there would be ambiguous). */
function inner(segment: string, after: readonly string[]): { ok: true; glob: { prefix: string; suffix: string } } | Refused {
  const star = segment.indexOf('*');
  const literals = [segment.slice(star + 1), ...after];
  if (literals.some((text) => /:[A-Za-z_]/.test(text))) {
    return refuse('placeholder_after_splat', 'write :name placeholders before the *, not after it');
  }
  const decoded = literals.map(decodeSegment);
  if (decoded.some((text) => text === '.' || text === '..' || text.includes('\\'))) {
    return refuse('bad_segment', 'write the path without ./ or ../ segments and no backslashes');
  }
  return { ok: true, glob: { prefix: decodeSegment(segment.slice(0, star)), suffix: decoded.join('/') } };
}

/** A segment decoded; one with an escape that is not one is matched as written. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Placeholder names a pattern defines (`splat` included when it has a `*`). */
export function patternNames(pattern: CompiledPattern): Set<string> {
  const names = new Set<string>();
  for (const label of pattern.host ?? []) {
    if (typeof label === 'string') continue;
    names.add('p' in label ? label.p : 'splat');
  }
  for (const part of pattern.parts) if (typeof part !== 'string') names.add(part.p);
  if (pattern.splat) names.add('splat');
  return names;
}

/**
 * Matches a normalized request path, as segments (no empty ones), and for a pattern that names a
 * host, the request's host (lower-case, no port; without one such a pattern never matches).
 * Returns the placeholder values, or undefined. Linear in the pattern's and the path's length.
 */
export function matchPattern(pattern: CompiledPattern, segments: readonly string[], host?: string): PatternParams | undefined {
  const { parts } = pattern;
  if (segments.length < parts.length) return undefined;
  if (!pattern.splat && segments.length !== parts.length) return undefined;
  let params: PatternParams | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const segment = segments[i]!;
    if (typeof part === 'string') {
      if (part !== segment) return undefined;
    } else if (part.prefix === undefined && part.suffix === undefined) {
      (params ??= {})[part.p] = segment;
    } else {
      const prefix = part.prefix ?? '';
      const suffix = part.suffix ?? '';
      // At least one character of its own, as a whole-segment placeholder.
      if (segment.length <= prefix.length + suffix.length || !segment.startsWith(prefix) || !segment.endsWith(suffix)) return undefined;
      (params ??= {})[part.p] = segment.slice(prefix.length, segment.length - suffix.length);
    }
  }
  if (pattern.splat) {
    const rest = restOf(segments, parts.length);
    if (pattern.glob === undefined) (params ??= {}).splat = rest;
    else {
      const splat = globSplat(pattern.glob, rest);
      if (splat === undefined) return undefined;
      (params ??= {}).splat = splat;
    }
  }
  if (pattern.host !== undefined) {
    if (host === undefined || !matchHost(pattern.host, host, (params ??= {}))) return undefined;
  }
  return params ?? NO_PARAMS;
}

/** Whether `host` matches the labels; fills in their placeholders. `*` is one label or more. */
function matchHost(labels: readonly HostLabel[], host: string, params: PatternParams): boolean {
  const names = host.split('.');
  const star = labels.findIndex((label) => typeof label !== 'string' && 'splat' in label);
  if (star === -1 ? names.length !== labels.length : names.length < labels.length) return false;
  const after = labels.length - star - 1;
  for (let i = 0; i < labels.length; i++) {
    if (i === star) continue;
    const label = labels[i]!;
    // Labels after the `*` are matched against the host's last labels.
    const name = star !== -1 && i > star ? names[names.length - (labels.length - i)]! : names[i]!;
    if (typeof label === 'string') {
      if (label !== name) return false;
    } else if ('p' in label) params[label.p] = name;
  }
  if (star !== -1) params.splat = names.slice(star, names.length - after).join('.');
  return true;
}

// The rest of a path after its first `from` segments, kept for the last path asked (a request's
// segments are never changed once split): one request tries its path against every candidate
// pattern in turn, and most start with as many segments, so the rest is joined once, not per rule.
let lastSegments: readonly string[] | undefined;
let lastFrom = -1;
let lastRest = '';

function restOf(segments: readonly string[], from: number): string {
  if (segments !== lastSegments || from !== lastFrom) {
    lastSegments = segments;
    lastFrom = from;
    lastRest = from === 0 ? segments.join('/') : segments.slice(from).join('/');
  }
  return lastRest;
}

function globSplat({ prefix, suffix }: { prefix: string; suffix: string }, rest: string): string | undefined {
  if (rest.length >= prefix.length + suffix.length && rest.startsWith(prefix) && rest.endsWith(suffix)) {
    return rest.slice(prefix.length, rest.length - suffix.length);
  }
  // `/a/*` + `/b` against `/a/b`: an empty splat takes its slash with it.
  if (prefix === '' && suffix.startsWith('/') && rest === suffix.slice(1)) return '';
  return undefined;
}

const NO_PARAMS: PatternParams = Object.freeze({}) as PatternParams;
