/**
 * `_headers` at the site root, in Netlify's and Cloudflare's format: a path pattern line (a line
 * starting with /), then `Name: value` lines (usually indented), or `! Name` (Cloudflare) to
 * remove a header a broader block set.
 * Every matching block applies, in file order. Headers that belong to the server, or would break
 * the answer, are refused at deploy; values are printable ASCII only, so no line break or other
 * control character can ever reach a response.
 */
import { matchingPatterns, patternIndexOf } from './rule-index.js';
import { compilePattern, matchPattern, type CompiledPattern } from './rule-patterns.js';
import { readRulesFile, type RuleLine, type RulesFileLimits, type RulesFileResult } from './rules-file.js';

export type HeaderPair = readonly [name: string, value: string];

export interface CompiledHeaderBlock {
  line: number;
  pattern: CompiledPattern;
  /** In file order; a name given twice in a block is joined with `, `. */
  set: HeaderPair[];
  /** Lower-case names to remove (`! Name`). */
  remove: string[];
}

export interface CompiledHeaders {
  blocks: CompiledHeaderBlock[];
  /** Some block names a host: answers depend on the request's host too. */
  usesHost?: true;
}

/** What the blocks matching one path add and remove (names lower-case in `remove`). */
export interface SiteHeaders {
  set: HeaderPair[];
  remove: string[];
}

// RFC 9110 token.
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Printable ASCII, space and tab: nothing that could end the header line or confuse a client.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/**
 * Headers a site may not set (lower-case), with why: they describe the bytes, the connection or
 * the server's own decisions (validators, ranges, compression, content type allowlist), or, for
 * cookies, would let one site's pages plant state for the visitor.
 */
const FORBIDDEN: ReadonlyMap<string, string> = new Map([
  ['content-length', 'the server sets Content-Length from the bytes it sends'],
  ['content-encoding', 'the server chooses the compression of each answer'],
  ['transfer-encoding', 'the server frames the answer itself'],
  ['content-range', 'the server answers byte ranges itself'],
  ['accept-ranges', 'the server decides which files answer byte ranges'],
  ['content-type', 'content types come from the file name, from an allowlist'],
  ['etag', 'the server makes ETags from the content'],
  ['last-modified', 'the server validates with ETags'],
  ['set-cookie', 'published sites cannot set cookies'],
  ['set-cookie2', 'published sites cannot set cookies'],
  ['connection', 'it belongs to the connection, not the site'],
  ['keep-alive', 'it belongs to the connection, not the site'],
  ['upgrade', 'it belongs to the connection, not the site'],
  ['proxy-connection', 'it belongs to the connection, not the site'],
  ['te', 'it belongs to the connection, not the site'],
  ['trailer', 'the server sends no trailers'],
  ['date', 'the server sets Date'],
  ['server', 'the server names itself'],
  ['location', 'write a redirect in _redirects instead'],
  ['status', 'write the status in _redirects instead'],
  ['www-authenticate', 'published sites have no sign-in of their own'],
  ['proxy-authenticate', 'published sites have no sign-in of their own'],
  ['age', 'caches set Age'],
  ['host', 'it is a request header'],
  // Applies to the whole registrable domain, which every site host shares: one site could sign
  // visitors out of every other site and wipe their storage.
  ['clear-site-data', 'it would clear the data of every site on the site domain, not only this one'],
]);

/**
 * Families of headers that the proxies and caches in front of the server act on (nginx
 * `X-Accel-Redirect` serves another file, `X-Sendfile` a file of the proxy's disk, LiteSpeed and
 * Surrogate-* steer the operator's cache): a site may not send them, and ones stored by a deploy
 * from before this rule are dropped when served.
 */
const FRONT_PROXY_PREFIXES: ReadonlyArray<readonly [prefix: string, proxy: string]> = [
  ['x-accel-', 'nginx'],
  ['x-sendfile', 'Apache and lighttpd'],
  ['x-lighttpd-', 'lighttpd'],
  ['x-litespeed-', 'LiteSpeed'],
  ['x-reproxy-', 'Perlbal'],
  ['surrogate-', 'caches and CDNs (Varnish, Fastly, Akamai)'],
];

/** Why a site may not set or remove header `lower` (a lower-case name), or undefined when it may. */
function refusalOf(lower: string): string | undefined {
  const forbidden = FORBIDDEN.get(lower);
  if (forbidden !== undefined) return forbidden;
  const proxy = FRONT_PROXY_PREFIXES.find(([prefix]) => lower.startsWith(prefix));
  return proxy === undefined ? undefined : `it is an instruction to the proxy or cache in front of the server (${proxy[1]}), which only the operator gives`;
}

/**
 * Whether `lower` (a lower-case header name) may tell a shared cache or CDN whether and how long
 * to keep an answer: any name with `cache` or `expires` in it (`Cache-Control`,
 * `CDN-Cache-Control`, `Cloudflare-CDN-Cache-Control` and every `*-CDN-Cache-Control`,
 * `X-LiteSpeed-Cache`, `Expires`, nginx's `X-Accel-Expires`…), `Pragma`, Akamai's `Edge-Control`,
 * `Surrogate-*`, `X-Accel-*`, and `*-Vary` cache keys. A site may send these when public; a
 * protected site's answers carry the server's instead.
 */
export function isCacheInstruction(lower: string): boolean {
  return (
    lower.includes('cache') ||
    lower.includes('expires') ||
    lower === 'pragma' ||
    lower === 'edge-control' ||
    lower.endsWith('-vary') ||
    lower.startsWith('surrogate-') ||
    lower.startsWith('x-accel-')
  );
}

/** Whether a site's `_headers` may set (or remove) the header `lower` (a lower-case name). */
export function siteMaySend(lower: string): boolean {
  return refusalOf(lower) === undefined;
}

/** Headers that must stay, whatever a site says. */
const KEPT: ReadonlyMap<string, string> = new Map([
  ['x-content-type-options', 'X-Content-Type-Options: nosniff is always sent'],
  ['vary', 'the server needs Vary for compressed answers; a site may add to it but not remove it'],
]);

export function compileHeaders(text: string, limits: RulesFileLimits): RulesFileResult<CompiledHeaders> {
  const blocks: CompiledHeaderBlock[] = [];
  let current: CompiledHeaderBlock | undefined;
  // After a refused path line, its header lines are not reported again as lines without a path.
  let skipping = false;
  let headerLines = 0;
  let innerSplats = 0;
  const read = ({ line, trimmed, fail }: RuleLine): void => {
    if (!HEADER_VALUE.test(trimmed)) {
      fail('bad_character', 'use printable ASCII only (no control characters or line breaks; %-encode other characters in values)');
      return;
    }
    // A path line starts with / (or names a host), however it is indented: as on both hosts.
    if (trimmed.startsWith('/') || /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
      current = undefined;
      skipping = true;
      // A header written on the path's own line is a slip, not a path with spaces in it.
      if (/\s[A-Za-z0-9-]+:(\s|$)/.test(trimmed)) {
        fail('bad_path', 'a path line holds only the path, such as /assets/*; put each header on its own line below it');
        return;
      }
      const pattern = compilePattern(trimmed, { maxSegments: limits.maxPatternSegments ?? 0, innerSplat: true, hosts: 'https' });
      if (!pattern.ok) {
        fail(pattern.reason, pattern.hint);
        return;
      }
      // Each block past a cap is refused (and counted), its header lines skipped.
      if (limits.maxEntries > 0 && blocks.length >= limits.maxEntries) {
        fail('too_many_blocks', `a _headers file may have at most ${limits.maxEntries} path blocks; use * and :name to cover many paths with one block`);
        return;
      }
      if (pattern.pattern.glob !== undefined && limits.maxInnerSplats !== undefined && limits.maxInnerSplats > 0 && ++innerSplats > limits.maxInnerSplats) {
        fail('too_many_inner_splats', `a _headers file may have at most ${limits.maxInnerSplats} paths with a * inside them; end the others in /*`);
        return;
      }
      current = { line, pattern: pattern.pattern, set: [], remove: [] };
      blocks.push(current);
      return;
    }
    if (current === undefined) {
      if (!skipping) fail('header_without_path', 'start with a path line such as /* and put the headers under it');
      return;
    }
    // Every matching block's lines are applied to each answer: their number is what an answer costs.
    if (limits.maxHeaderLines !== undefined && limits.maxHeaderLines > 0 && ++headerLines > limits.maxHeaderLines) {
      fail('too_many_headers', `a _headers file may have at most ${limits.maxHeaderLines} header lines in all; set a header once on a broader path such as /*`);
      return;
    }
    const colon = trimmed.indexOf(':');
    if (trimmed.startsWith('!') && colon === -1) {
      const name = trimmed.slice(1).trim();
      // `! Name`, as Cloudflare writes it; `!Name` is refused there too.
      if (!HEADER_NAME.test(name) || !/^![ \t]/.test(trimmed)) {
        fail('bad_header_name', 'write !, a space and the header name, such as ! X-Robots-Tag');
        return;
      }
      const lower = name.toLowerCase();
      const reason = KEPT.get(lower) ?? refusalOf(lower);
      if (reason !== undefined) fail('header_not_removable', `${name} cannot be removed: ${reason}`);
      else current.remove.push(lower);
      return;
    }
    if (colon === -1) {
      fail('not_a_header', 'write a header as Name: value, or ! Name to remove one');
      return;
    }
    const name = trimmed.slice(0, colon).trim();
    const value = trimmed.slice(colon + 1).trim();
    if (!HEADER_NAME.test(name)) {
      fail('bad_header_name', 'a header name is letters, digits and - only, such as Cache-Control');
      return;
    }
    const lower = name.toLowerCase();
    const forbidden = refusalOf(lower);
    if (forbidden !== undefined) fail('header_not_allowed', `${name} cannot be set by a site: ${forbidden}`);
    else if (lower === 'x-content-type-options' && value.toLowerCase() !== 'nosniff') fail('header_not_allowed', 'X-Content-Type-Options is always nosniff');
    else if (value === '') fail('empty_value', `give ${name} a value, or write ! ${name} to remove it`);
    else current.set.push([name, value]);
  };
  return readRulesFile('_headers', text, limits, { blocks: [] }, read, () => ({
    blocks,
    ...(blocks.some((block) => block.pattern.host !== undefined) ? { usesHost: true as const } : {}),
  }));
}

/**
 * The headers every block matching a path (and `host`, the request's, for blocks that name one)
 * gives, in file order (undefined when none matches). The matching blocks come from an index
 * (rule-index.ts), in file order.
 */
export function headersFor(compiled: CompiledHeaders, segments: readonly string[], host?: string): SiteHeaders | undefined {
  const index = patternIndexOf(compiled, () => compiled.blocks.map((block) => block.pattern));
  const matched: number[] = [];
  for (const n of matchingPatterns(index, segments)) {
    const block = compiled.blocks[n]!;
    // The index decides alone, but for a * inside the path, a placeholder inside a segment or a host.
    if (block.pattern.checked && matchPattern(block.pattern, segments, host) === undefined) continue;
    matched.push(n);
  }
  if (matched.length === 0) return undefined;
  // Most paths of a site match the same few blocks (`/*` above all): their merge is made once.
  let merged = mergedBySet.get(compiled);
  if (merged === undefined) mergedBySet.set(compiled, (merged = new Map()));
  const key = matched.join(',');
  let headers = merged.get(key);
  if (headers === undefined) {
    if (merged.size >= MAX_MERGED_SETS) merged.clear();
    merged.set(key, (headers = mergeBlocks(matched.map((n) => compiled.blocks[n]!))));
  }
  return headers;
}

const MAX_MERGED_SETS = 256;
const mergedBySet = new WeakMap<CompiledHeaders, Map<string, SiteHeaders>>();

/** The headers of blocks that match together, in file order: later ones add to or remove earlier ones. */
function mergeBlocks(blocks: readonly CompiledHeaderBlock[]): SiteHeaders {
  const set = new Map<string, [string, string]>();
  const removed = new Set<string>();
  for (const block of blocks) {
    for (const name of block.remove) {
      set.delete(name);
      removed.add(name);
    }
    for (const [name, value] of block.set) {
      const lower = name.toLowerCase();
      const had = set.get(lower);
      set.set(lower, had ? [had[0], `${had[1]}, ${value}`] : [name, value]);
      removed.delete(lower);
    }
  }
  return { set: [...set.values()], remove: [...removed] };
}

/**
 * Compiled rules as they may be served: headers refused since a deploy stored them
 * (`Clear-Site-Data`, instructions to the proxy in front) taken out. The same object when there
 * are none, as there are in every deploy since; read once per revision, never per request.
 */
export function servableHeaders(compiled: CompiledHeaders): CompiledHeaders {
  const refused = (name: string): boolean => !siteMaySend(name.toLowerCase());
  if (!compiled.blocks.some((block) => block.set.some(([name]) => refused(name)) || block.remove.some(refused))) return compiled;
  return {
    ...compiled,
    blocks: compiled.blocks.map((block) => ({
      ...block,
      set: block.set.filter(([name]) => !refused(name)),
      remove: block.remove.filter((name) => !refused(name)),
    })),
  };
}

/**
 * The server's headers for an answer with a site's applied: a site's value replaces the
 * server's (Cache-Control, Referrer-Policy), Vary is added to, `remove` drops the server's.
 */
export function withSiteHeaders(list: readonly HeaderPair[], site: SiteHeaders): HeaderPair[] {
  const own = byLowerName(site);
  const out: HeaderPair[] = [];
  let varyJoined = false;
  for (const pair of list) {
    const lower = pair[0].toLowerCase();
    const theirs = own.get(lower);
    if (theirs !== undefined) {
      if (lower === 'vary') {
        out.push([pair[0], `${pair[1]}, ${theirs[1]}`]);
        varyJoined = true;
      }
      // Replaced: the site's pair goes out below, in its place in the site's order.
      continue;
    }
    if (site.remove.includes(lower) && !KEPT.has(lower)) continue;
    out.push(pair);
  }
  for (const [lower, pair] of own) if (!(varyJoined && lower === 'vary')) out.push(pair);
  return out;
}

/** A site's headers by lower-case name, made once per merged set (headersFor shares them). */
function byLowerName(site: SiteHeaders): ReadonlyMap<string, HeaderPair> {
  let own = lowerNames.get(site);
  if (own === undefined) lowerNames.set(site, (own = new Map(site.set.map((pair) => [pair[0].toLowerCase(), pair] as const))));
  return own;
}
const lowerNames = new WeakMap<SiteHeaders, ReadonlyMap<string, HeaderPair>>();
