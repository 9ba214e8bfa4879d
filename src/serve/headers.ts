import { withSiteHeaders, type SiteHeaders } from '../rules/index.js';
import type { Encoding } from '../store/index.js';

/**
 * The one header builder of the site host: which headers an answer carries, in which order, and
 * the ETag of every representation. Every answer, file or status page, carries the security
 * headers of SPEC 4.5.4.
 */

export type HeaderList = Array<readonly [name: string, value: string]>;

export const SECURITY_HEADERS: HeaderList = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'strict-origin-when-cross-origin'],
];

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
  return answer.site ? withSiteHeaders(list, answer.site) : list;
}

/** Every header of a 304 for that answer, ETag first. */
export function notModifiedHeaders(answer: FileAnswer & { etag: string }): HeaderList {
  const list: HeaderList = [['ETag', answer.etag], ...validatorHeaders(answer)];
  return answer.site ? withSiteHeaders(list, answer.site) : list;
}

/** The headers of a status page (404, 410, 451…) or a redirect. */
export function pageHeaders(cacheControl: string, extra: Record<string, string> = {}, site?: SiteHeaders): HeaderList {
  const list: HeaderList = [['Content-Type', 'text/html; charset=utf-8'], ['Cache-Control', cacheControl], ...SECURITY_HEADERS, ...Object.entries(extra)];
  return site ? withSiteHeaders(list, site) : list;
}

/**
 * A header list as the one value of a `writeHeader` call named after its first header
 * ("<value>\r\nName: value…"): one native call, no string conversion per request. Only our own
 * constants go in (allowlisted types, hash ETags) and a site's `_headers` values, which deploy
 * admits as printable ASCII only; never request data.
 */
export function joinAfterFirst(list: HeaderList): Buffer {
  return Buffer.from([list[0]![1], ...list.slice(1).map(([name, value]) => `${name}: ${value}`)].join('\r\n'), 'latin1');
}
