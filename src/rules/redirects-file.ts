/**
 * `_redirects` at the site root, in Netlify's format (which Cloudflare Pages and GitLab Pages also
 * read): `from [key=:value …] to [status][!]`, one rule a line, `#` comments. Parsed and compiled
 * at deploy (in the ingest worker); serving only matches the compiled rules.
 */
import { matchingPatterns, patternIndexOf } from './rule-index.js';
import { compilePattern, matchPattern, patternNames, type CompiledPattern, type PatternParams } from './rule-patterns.js';
import { CONTROL, readRulesFile, type RuleLine, type RuleLineError, type RulesFileLimits, type RulesFileResult } from './rules-file.js';

export type RedirectStatus = 200 | 301 | 302 | 303 | 307 | 308 | 404 | 410;
export const REDIRECT_STATUSES: readonly RedirectStatus[] = [301, 302, 303, 307, 308];
const STATUSES: readonly RedirectStatus[] = [200, ...REDIRECT_STATUSES, 404, 410];

/** A part of `to`: literal text, or a placeholder's value. */
export type TargetPart = string | { p: string };

export interface CompiledRedirect {
  line: number;
  from: CompiledPattern;
  /** Query conditions: the parameter must be present; a literal value must be equal. */
  query?: Array<{ key: string; value: TargetPart }>;
  /**
   * Redirects: the Location, literal parts already URL-encoded. Rewrites (200), 404 and 410: the
   * site path to serve, literal parts decoded, without query or fragment.
   */
  to: TargetPart[];
  /** A redirect's `to` carries its own query, or its conditions used it: the request's is not added. */
  ownQuery: boolean;
  status: RedirectStatus;
  /** `!`: applies even where a file exists. */
  force: boolean;
}

export interface CompiledRedirects {
  rules: CompiledRedirect[];
  /** Some rule has query conditions: answers depend on the query string too. */
  usesQuery: boolean;
  /** Some rule names a host: answers depend on the request's host too. */
  usesHost?: true;
}

const NAME_IN_TARGET = /:([A-Za-z_][A-Za-z0-9_]*)/g;
// Netlify's conditions on the visitor, which need data a static host does not have.
const UNSUPPORTED_CONDITION = /^(country|language|role|cookie|header)=/i;

export function compileRedirects(text: string, limits: RulesFileLimits): RulesFileResult<CompiledRedirects> {
  const rules: CompiledRedirect[] = [];
  let conditions = 0;
  let entries = 0;
  let innerSplats = 0;
  const read = ({ line, trimmed, fail }: RuleLine): void => {
    const tokens = withoutComment(trimmed.split(/[ \t]+/));
    if (tokens.some((token) => CONTROL.test(token))) {
      fail('control_character', 'remove the control character; a rule is printable text');
      return;
    }
    // Each rule past the cap is refused (and counted), without being read.
    if (limits.maxEntries > 0 && ++entries > limits.maxEntries) {
      fail('too_many_rules', `a _redirects file may have at most ${limits.maxEntries} rules; use placeholders (:name) and * to cover many paths with one rule`);
      return;
    }
    const compiled = compileRule(tokens, line, limits.maxPatternSegments ?? 0);
    if ('reason' in compiled) {
      fail(compiled.reason, compiled.hint);
      return;
    }
    // A * inside the path is checked against the whole rest of every path it may match.
    if (compiled.from.glob !== undefined && limits.maxInnerSplats !== undefined && limits.maxInnerSplats > 0 && ++innerSplats > limits.maxInnerSplats) {
      fail('too_many_inner_splats', `a _redirects file may have at most ${limits.maxInnerSplats} rules with a * inside the path; end the others in /*`);
      return;
    }
    // Every request may have to check them all: their number is what a request can cost.
    conditions += compiled.query?.length ?? 0;
    if (limits.maxConditions !== undefined && limits.maxConditions > 0 && conditions > limits.maxConditions) {
      fail(
        'too_many_conditions',
        `a _redirects file may have at most ${limits.maxConditions} query conditions in all; use :name values rather than one rule per value`,
      );
      return;
    }
    rules.push(compiled);
  };
  return readRulesFile('_redirects', text, limits, { rules: [], usesQuery: false }, read, () => {
    const usesHost = rules.some((rule) => rule.from.host !== undefined);
    return { rules, usesQuery: rules.some((rule) => rule.query !== undefined), ...(usesHost ? { usesHost: true as const } : {}) };
  });
}

/** A rule's tokens up to a comment: a token starting with `#` starts one, as on both hosts. */
function withoutComment(tokens: string[]): string[] {
  const comment = tokens.findIndex((token) => token.startsWith('#'));
  return comment === -1 ? tokens : tokens.slice(0, comment);
}

type Refusal = { reason: string; hint: string };

function compileRule(tokens: string[], line: number, maxSegments: number): CompiledRedirect | Refusal {
  const [written, ...rest] = tokens as [string, ...string[]];
  // A from without its leading / (`old.html /new`) is a path all the same, as on both hosts.
  const fromRaw = written.startsWith('/') || /^[a-z][a-z0-9+.-]*:/i.test(written) ? written : `/${written}`;
  const from = compilePattern(fromRaw, { maxSegments, innerSplat: true, hosts: 'http' });
  if (!from.ok) return { reason: from.reason, hint: from.hint };
  // Query conditions come between `from` and `to`; `to` starts with / or a scheme.
  const query: NonNullable<CompiledRedirect['query']> = [];
  let at = 0;
  const names = patternNames(from.pattern);
  while (at < rest.length && isCondition(rest[at]!)) {
    const condition = rest[at]!;
    if (UNSUPPORTED_CONDITION.test(condition)) return unsupported(condition);
    const equals = condition.indexOf('=');
    const key = condition.slice(0, equals);
    const value = condition.slice(equals + 1);
    const placeholder = /^:([A-Za-z_][A-Za-z0-9_]*)$/.exec(value);
    if (placeholder) {
      if (names.has(placeholder[1]!)) return { reason: 'duplicate_placeholder', hint: `:${placeholder[1]} is already used in the path; name it differently` };
      names.add(placeholder[1]!);
    }
    query.push({ key: safeDecode(key), value: placeholder ? { p: placeholder[1]! } : safeDecode(value) });
    at++;
  }
  let toRaw = rest[at];
  let statusAt = at + 1;
  // Netlify's forward rule: `/app/* 200` serves /app/:splat, the same path (handy with `!`).
  if (toRaw !== undefined && /^2\d\d!?$/.test(toRaw) && fromRaw.endsWith('/*') && query.length === 0) {
    toRaw = `${fromRaw.slice(0, -1)}:splat`;
    statusAt = at;
  }
  if (toRaw === undefined || /^\d{3}!?$/.test(toRaw)) {
    return { reason: 'missing_to', hint: `write where ${fromRaw} leads after it, such as ${fromRaw} /new-page 301` };
  }
  const statusRaw = rest[statusAt] ?? '301';
  const extra = rest[statusAt + 1];
  if (extra !== undefined) {
    // Netlify signs proxied requests (`Sign=`): there is no proxying here to sign.
    if (/^(sign|signed)=/i.test(extra)) return PROXY_REFUSAL;
    if (UNSUPPORTED_CONDITION.test(extra) || extra.includes('=')) return unsupported(extra);
    return { reason: 'unexpected_text', hint: `a rule is "from to status"; remove ${JSON.stringify(extra)} (or start a comment with #)` };
  }
  const statusMatch = /^(\d{3})(!?)$/.exec(statusRaw);
  const status = statusMatch ? (Number(statusMatch[1]) as RedirectStatus) : undefined;
  if (status === undefined || !STATUSES.includes(status)) {
    if (UNSUPPORTED_CONDITION.test(statusRaw) || statusRaw.includes('=')) return unsupported(statusRaw);
    return { reason: 'unknown_status', hint: `the status must be one of ${STATUSES.join(', ')} (with ! to force), such as ${fromRaw} ${toRaw} 301` };
  }
  const force = statusMatch![2] === '!';
  const to = compileTarget(toRaw, status, names);
  if ('reason' in to) return to;
  // Query conditions consume the query (their values fill the target), as in Netlify's example.
  if (query.length > 0 && REDIRECT_STATUSES.includes(status)) to.ownQuery = true;
  return { line, from: from.pattern, ...(query.length > 0 ? { query } : {}), ...to, status, force };
}

const PROXY_REFUSAL: Refusal = {
  reason: 'proxy_not_supported',
  hint: 'Plinth does not proxy to other hosts; a 200 rule rewrites to a path of this site, such as /app/index.html, and a 301 or 302 sends visitors elsewhere',
};

function isCondition(token: string): boolean {
  return token.includes('=') && !token.startsWith('/') && !/^[a-z][a-z0-9+.-]*:/i.test(token);
}

function unsupported(condition: string): Refusal {
  const name = condition.slice(0, Math.max(0, condition.indexOf('='))) || condition;
  return {
    reason: 'unsupported_condition',
    hint: `Plinth does not support ${name}= conditions (they need data about the visitor); remove the condition, or serve one rule for everyone`,
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function compileTarget(raw: string, status: RedirectStatus, names: Set<string>): Pick<CompiledRedirect, 'to' | 'ownQuery'> | Refusal {
  if (raw.includes('\\')) return { reason: 'bad_target', hint: 'write / rather than \\ in the target' };
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(raw) && !raw.startsWith('/');
  const redirect = REDIRECT_STATUSES.includes(status);
  if (absolute || raw.startsWith('//')) {
    if (status === 200) return PROXY_REFUSAL;
    if (!redirect) return { reason: 'target_not_a_path', hint: `a ${status} rule serves a page of this site: write its path, such as /404.html` };
    if (raw.startsWith('//')) return { reason: 'scheme_relative_target', hint: `write the address in full, such as https:${raw}` };
    const scheme = /^https?:\/\//i.exec(raw);
    if (scheme === null) return { reason: 'bad_scheme', hint: 'an address on another host must start with https:// (or http://)' };
    const authority = raw.slice(scheme[0].length).split(/[/?#]/, 1)[0]!;
    if (/:[A-Za-z_]/.test(authority) || authority.includes('*') || authority === '') {
      return { reason: 'placeholder_in_host', hint: 'the host of the target must be written out; placeholders may only fill its path' };
    }
    try {
      new URL(raw.replace(NAME_IN_TARGET, 'x'));
    } catch {
      return { reason: 'bad_target', hint: 'write the target as a full https:// address or as a path starting with /' };
    }
  } else if (!raw.startsWith('/')) {
    return { reason: 'bad_target', hint: 'the target must be a path starting with / or, for a redirect, an https:// address' };
  }

  const cut = redirect ? raw.length : raw.search(/[?#]/) === -1 ? raw.length : raw.search(/[?#]/);
  const written = raw.slice(0, cut);
  if (!absolute) {
    const segments = written.split(/[?#]/, 1)[0]!.split('/');
    if (segments.some((segment) => segment === '.' || segment === '..' || safeDecode(segment) === '..' || safeDecode(segment) === '.')) {
      return { reason: 'path_traversal', hint: 'write the target without . or .. segments, as a path from the site root' };
    }
  }
  const to: TargetPart[] = [];
  let last = 0;
  for (const match of written.matchAll(NAME_IN_TARGET)) {
    const name = match[1]!;
    // As on Netlify, only the names the path (or a query condition) defines are filled in; any
    // other `:name` is text of the target and stays in it as written (`/blog/:slug /posts/:id`).
    if (!names.has(name)) continue;
    if (match.index > last) to.push(literal(written.slice(last, match.index), redirect));
    to.push({ p: name });
    last = match.index + match[0].length;
  }
  if (last < written.length) to.push(literal(written.slice(last), redirect));
  if (!redirect && to.some((part) => typeof part === 'string' && part.includes('%'))) {
    const decoded = to.map((part) => (typeof part === 'string' ? safeDecode(part) : part));
    return { to: decoded, ownQuery: false };
  }
  return { to, ownQuery: redirect && raw.includes('?') };
}

/** A literal of a Location: anything outside printable ASCII is %-encoded (UTF-8). */
function literal(text: string, redirect: boolean): string {
  return redirect ? text.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c)) : text;
}

/** What a request path matched: the rule, and its placeholder values. */
export interface RedirectMatch {
  rule: CompiledRedirect;
  params: PatternParams;
}

/**
 * The first rule that applies to a request path: with `fileExists`, only forced rules (`!`)
 * apply, as on Netlify. `query` is read only if a rule has query conditions; `host` (the
 * request's, lower-case, no port) only by rules that name one. The rules whose path pattern
 * matches come from an index (rule-index.ts), then are tried in file order.
 */
export function matchRedirect(
  compiled: CompiledRedirects,
  segments: readonly string[],
  fileExists: boolean,
  query: () => URLSearchParams,
  host?: string,
): RedirectMatch | undefined {
  let params: Map<string, string> | undefined;
  const index = patternIndexOf(compiled, () => compiled.rules.map((rule) => rule.from));
  let among: Int32Array | undefined;
  if (compiled.usesQuery) {
    params = firstValues(query());
    among = rulesWithKeysOf(compiled, index.words, params);
  }
  for (const n of matchingPatterns(index, segments, among)) {
    const rule = compiled.rules[n]!;
    if (fileExists && !rule.force) continue;
    // The index decides alone, but for a * inside the path, a placeholder inside a segment or a host.
    let matched: PatternParams | undefined;
    if (rule.from.checked) {
      matched = matchPattern(rule.from, segments, host);
      if (matched === undefined) continue;
    }
    if (rule.query === undefined) return { rule, params: matched ?? matchPattern(rule.from, segments)! };
    params ??= firstValues(query());
    let fromQuery: PatternParams | undefined;
    let ok = true;
    for (const condition of rule.query) {
      const value = params.get(condition.key);
      if (value === undefined || (typeof condition.value === 'string' && condition.value !== value)) {
        ok = false;
        break;
      }
      if (typeof condition.value !== 'string') (fromQuery ??= {})[condition.value.p] = value;
    }
    if (ok) return { rule, params: { ...(matched ?? matchPattern(rule.from, segments)!), ...fromQuery } };
  }
  return undefined;
}

/** Built once per rules file and thread, on first use, beside the pattern index. */
interface QueryKeys {
  /** Bits of the rules without query conditions. */
  withoutQuery: Int32Array;
  /** Per parameter name: the rules whose first condition names it. */
  byFirstKey: Map<string, number[]>;
}

const queryKeys = new WeakMap<CompiledRedirects, QueryKeys>();

/**
 * Which rules a request's query parameters leave in play: a rule with query conditions can only
 * apply when its first condition's parameter is present. Without this, a file of 2,000 `/*` rules
 * each with its own parameter would try every rule on every request; with it, a request tries those
 * whose parameter it names, and how many it can name is bounded by the request line's length.
 */
function rulesWithKeysOf(compiled: CompiledRedirects, words: number, params: ReadonlyMap<string, string>): Int32Array {
  let keys = queryKeys.get(compiled);
  if (keys === undefined) {
    keys = { withoutQuery: new Int32Array(words), byFirstKey: new Map() };
    for (let n = 0; n < compiled.rules.length; n++) {
      const first = compiled.rules[n]!.query?.[0];
      if (first === undefined) keys.withoutQuery[n >>> 5]! |= 1 << (n & 31);
      else {
        const list = keys.byFirstKey.get(first.key);
        if (list === undefined) keys.byFirstKey.set(first.key, [n]);
        else list.push(n);
      }
    }
    queryKeys.set(compiled, keys);
  }
  const among = keys.withoutQuery.slice();
  for (const key of params.keys()) {
    const rules = keys.byFirstKey.get(key);
    if (rules !== undefined) for (const n of rules) among[n >>> 5]! |= 1 << (n & 31);
  }
  return among;
}

/** Each query parameter's first value (as `URLSearchParams.get`), looked up in constant time. */
function firstValues(query: URLSearchParams): Map<string, string> {
  const values = new Map<string, string>();
  for (const [key, value] of query) if (!values.has(key)) values.set(key, value);
  return values;
}

/**
 * Whether a target ending in `:splat` keeps the request's trailing slash: the splat holds segments
 * only, so `/old/* /new/:splat` would take `/old/a/` to `/new/a` (Netlify keeps `/new/a/`).
 */
function keepsTrailingSlash(match: RedirectMatch, requestTrailingSlash: boolean): boolean {
  const last = match.rule.to[match.rule.to.length - 1];
  return requestTrailingSlash && last !== undefined && typeof last !== 'string' && last.p === 'splat' && (match.params.splat ?? '') !== '';
}

/** A redirect's Location without the request's query: placeholders %-encoded. */
export function redirectTarget(match: RedirectMatch, requestTrailingSlash = false): string {
  let location = '';
  for (const part of match.rule.to) {
    if (typeof part === 'string') location += part;
    else {
      const value = match.params[part.p] ?? '';
      location += part.p === 'splat' ? value.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(value);
    }
  }
  if (keepsTrailingSlash(match, requestTrailingSlash)) location += '/';
  // A `//` at the start would be read as another host; literals never start so, values are encoded.
  if (location.startsWith('//') || location.startsWith('/\\')) location = `/${location.replace(/^[/\\]+/, '')}`;
  return location;
}

/** A Location with the request's query added (before any fragment), %-encoding what is not printable ASCII. */
export function withRequestQuery(location: string, requestQuery: string): string {
  if (requestQuery === '') return location;
  const query = requestQuery.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
  const hash = location.indexOf('#');
  return hash === -1 ? `${location}?${query}` : `${location.slice(0, hash)}?${query}${location.slice(hash)}`;
}

/** A rewrite's (200), 404's or 410's site path, normalized; undefined if it would leave the site. */
export function targetPath(match: RedirectMatch, requestTrailingSlash = false): { path: string; trailingSlash: boolean } | undefined {
  let path = '';
  for (const part of match.rule.to) path += typeof part === 'string' ? part : (match.params[part.p] ?? '');
  if (keepsTrailingSlash(match, requestTrailingSlash)) path += '/';
  const segments = path.split('/').filter((segment) => segment !== '');
  if (segments.some((segment) => segment === '.' || segment === '..' || segment.includes('\\') || CONTROL.test(segment))) return undefined;
  return { path: segments.join('/'), trailingSlash: segments.length > 0 && path.endsWith('/') };
}

export type { RuleLineError };
