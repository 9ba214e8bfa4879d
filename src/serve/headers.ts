import { securityHeaders } from '../http/index.js';
import { isCacheInstruction, isHtmlType, withSiteHeaders, type SiteHeaders } from '../rules/index.js';
import type { Encoding } from '../store/index.js';

/**
 * The one header builder of the site host: which headers an answer carries, in which order, and
 * the ETag of every representation. Every answer, file or status page, carries the security
 * headers of SPEC 4.5.4.
 */

export type HeaderList = Array<readonly [name: string, value: string]>;

/** The site variant of the one security-header builder. */
export const SECURITY_HEADERS: HeaderList = Object.entries(securityHeaders('site'));

// HTML is short-lived so a redeploy shows up within a minute; assets change name less often in
// practice and a 5-minute window saves most repeat fetches (SPEC 4.5.4).
export function cacheControlFor(type: string): string {
  return isHtmlType(type) ? 'public, max-age=60' : 'public, max-age=300';
}

/** The ETag of a stored blob, or of one of its precompressed forms. */
export function blobEtag(sha256: string, encoding?: Encoding): string {
  return encoding ? `"${sha256}-${encoding}"` : `"${sha256}"`;
}

/** What the headers of one file answer depend on. */
export interface FileAnswer {
  type: string;
  cacheControl: string;
  /** Other representations exist: `Vary: Accept-Encoding`. */
  varies: boolean;
  /** Absent for a 404 (the site's own 404.html). */
  etag?: string;
  /** Byte ranges are served (not for HTML, not for a 404). */
  ranges: boolean;
  encoding?: Encoding;
  contentRange?: string;
  /** What the site's `_headers` give this path. */
  site?: SiteHeaders;
  /** `X-Robots-Tag: noindex`: previews and protected sites. */
  noindex?: boolean;
  /** Behind the access gate: the privacy headers win over the site's (`protectedHeaders`). */
  protected?: boolean;
}

/** What shared caches are told about every answer of a protected site. */
export const PROTECTED_CACHE_CONTROL = 'private, no-store';
/** The request headers that carry a visitor's credential: a protected answer depends on them. */
const CREDENTIAL_VARY = ['Cookie', 'Authorization'];

/**
 * The headers of an answer of a protected site (behind the gate, or the gate's own pages): the
 * server's privacy headers win over anything the site's `_headers` say, including rules deployed
 * while the site was public. No cache instruction of the site's survives (`Cache-Control`,
 * `Expires`, `CDN-Cache-Control` and the like: see `isCacheInstruction`), `Cache-Control` is
 * `private, no-store`, `noindex` stays, `Vary` names the credential, and no other origin may
 * embed the answer (`Cross-Origin-Resource-Policy: same-origin`).
 */
export function protectedHeaders(list: readonly (readonly [string, string])[]): HeaderList {
  const out: HeaderList = [];
  const vary: string[] = [];
  for (const pair of list) {
    const lower = pair[0].toLowerCase();
    if (lower === 'vary') vary.push(pair[1]);
    else if (!isCacheInstruction(lower) && lower !== 'x-robots-tag' && lower !== 'cross-origin-resource-policy') out.push(pair);
  }
  out.push(
    ['Cache-Control', PROTECTED_CACHE_CONTROL],
    ['X-Robots-Tag', 'noindex'],
    ['Vary', joinVary([...vary, ...CREDENTIAL_VARY])],
    // Browsers refuse the answer to a `<script>` or `<img>` of another origin (access.ts has why).
    ['Cross-Origin-Resource-Policy', 'same-origin'],
  );
  return out;
}

/** One `Vary` value from several, each name once (`*` alone stands for everything). */
function joinVary(values: readonly string[]): string {
  const names = new Map<string, string>();
  for (const value of values) {
    for (const name of value.split(',')) {
      const trimmed = name.trim();
      if (trimmed === '*') return '*';
      if (trimmed !== '' && !names.has(trimmed.toLowerCase())) names.set(trimmed.toLowerCase(), trimmed);
    }
  }
  return [...names.values()].join(', ');
}

/** The headers a 304 shares with the full answer. */
function validatorHeaders(answer: FileAnswer): HeaderList {
  const list: HeaderList = [['Cache-Control', answer.cacheControl], ...SECURITY_HEADERS];
  if (answer.varies) list.push(['Vary', 'Accept-Encoding']);
  if (answer.noindex) list.push(['X-Robots-Tag', 'noindex']);
  return list;
}

/** Every header of a file answer with its body, Content-Type first. */
export function fileHeaders(answer: FileAnswer): HeaderList {
  const list: HeaderList = [['Content-Type', answer.type], ...validatorHeaders(answer)];
  if (answer.etag !== undefined) list.push(['ETag', answer.etag]);
  if (answer.ranges) list.push(['Accept-Ranges', 'bytes']);
  if (answer.encoding) list.push(['Content-Encoding', answer.encoding]);
  if (answer.contentRange) list.push(['Content-Range', answer.contentRange]);
  // Content-Type stays first: the prepared path writes the rest as its value (`joinAfterFirst`).
  return finish(list, answer.site, answer.protected);
}

/** Every header of a 304 for that answer, ETag first. */
export function notModifiedHeaders(answer: FileAnswer & { etag: string }): HeaderList {
  const list: HeaderList = [['ETag', answer.etag], ...validatorHeaders(answer)];
  return finish(list, answer.site, answer.protected);
}

/** The headers of a status page (404, 410, 451…) or a redirect; `protect` for a protected site's. */
export function pageHeaders(cacheControl: string, extra: Record<string, string> = {}, site?: SiteHeaders, protect = false): HeaderList {
  const list: HeaderList = [['Content-Type', 'text/html; charset=utf-8'], ['Cache-Control', cacheControl], ...SECURITY_HEADERS, ...Object.entries(extra)];
  return finish(list, site, protect);
}

/** The site's `_headers` applied, then, for a protected site, the privacy headers over all. */
function finish(list: HeaderList, site: SiteHeaders | undefined, protect: boolean | undefined): HeaderList {
  const withSite = site ? withSiteHeaders(list, site) : list;
  return protect ? protectedHeaders(withSite) : withSite;
}

/**
 * A header list as the one value of a `writeHeader` call named after its first header
 * ("<value>\r\nName: value…"): one native call, no string conversion per request. Only our own
 * constants go in (allowlisted types, hash ETags) and a site's `_headers` values, which deploy
 * admits as printable ASCII only; never request data.
 */
export function joinAfterFirst(list: HeaderList): Buffer {
  return Buffer.from(joinedText(list), 'latin1');
}

const joinedText = (list: HeaderList): string => [list[0]![1], ...list.slice(1).map(([name, value]) => `${name}: ${value}`)].join('\r\n');

// The prepared path's header blocks (`packedAfterFirst`) are packed side by side into slabs, each
// site's into its own: small at first (a site of a few pages does not pay for 16 KB), then twice
// what the site's blocks took so far, up to this size; a block over a quarter of it gets its own.
const BLOCK_SLAB_BYTES = 16 * 1024;
const FIRST_SLAB_BYTES = 1024;

/**
 * Where one owner's header blocks are packed (`packedAfterFirst`), and the memory they keep alive.
 * A slab lives as long as any block in it, so its owner counts every slab it made (`bytes`) for as
 * long as any of its blocks may be kept: the site cache charges a site for them until the site and
 * all its targets go together (site-cache.ts).
 */
export interface BlockSlabs {
  slab: Buffer;
  used: number;
  /** Every slab and own block made so far, in bytes. */
  bytes: number;
}

export const newBlockSlabs = (): BlockSlabs => ({ slab: NO_SLAB, used: 0, bytes: 0 });
const NO_SLAB = Buffer.alloc(0);

/**
 * `joinAfterFirst`, its bytes packed beside the other blocks of `slabs` (a view of a shared slab,
 * which lives as long as any block in it). Across many pages this keeps what uWS reads of a
 * block to the view and its bytes: an `ArrayBuffer` of its own would add three objects outside
 * the JavaScript heap (its extension, its backing store and that store's count) to every answer's
 * reads, each a cache miss once the rotation outgrows the caches (bench/RESULTS.md, "Serving back
 * at the ceiling", twelfth pass). uWS reads a view with a few more instructions than an
 * `ArrayBuffer`, fewer than the misses cost.
 */
export function packedAfterFirst(list: HeaderList, slabs: BlockSlabs): Buffer {
  const text = joinedText(list);
  const length = Buffer.byteLength(text, 'latin1');
  if (length > BLOCK_SLAB_BYTES / 4) {
    slabs.bytes += length;
    return Buffer.from(text, 'latin1');
  }
  if (slabs.used + length > slabs.slab.byteLength) {
    const size = Math.max(length, Math.min(BLOCK_SLAB_BYTES, Math.max(FIRST_SLAB_BYTES, slabs.bytes)));
    slabs.slab = Buffer.allocUnsafeSlow(size);
    slabs.used = 0;
    slabs.bytes += size;
  }
  const block = slabs.slab.subarray(slabs.used, slabs.used + length);
  block.write(text, 'latin1');
  slabs.used += length;
  return block;
}
