import { parse as parseCookieHeader, serialize as serializeCookie } from 'cookie';
import fresh from 'fresh';
import Negotiator from 'negotiator';

/**
 * The one set of HTTP rules every host answers by (the site host, the docs, the app and their
 * assets, the API): content negotiation (RFC 9110 §12), conditional requests (§13.1.2), byte
 * ranges (§14) and cookies. Negotiation, `If-None-Match` and cookies come from the jshttp
 * libraries (`negotiator`, `fresh`, `cookie`); only the range parser is ours (see `parseRange`).
 * Pure string logic, so each host's edge stays a thin sequence of lookups and writes.
 */

// negotiator 1.x takes a `preferred` order for ties; @types/negotiator still describes 0.6.
type EncodingNegotiator = { encodings(available: readonly string[], options: { preferred: readonly string[] }): string[] };

/**
 * The coding of `available` the client ranks highest by `Accept-Encoding`, or `undefined` for
 * the plain bytes. Ties go to the order of `available` (br before gzip: smaller for the same
 * text). `identity` takes part: a client that ranks it above a coding gets the plain bytes. No
 * header means identity here: the RFC allows any coding, but old clients and tools that omit it
 * often cannot decode one.
 */
export function pickEncoding<E extends string>(acceptEncoding: string | undefined, available: readonly E[]): E | undefined {
  if (!acceptEncoding || available.length === 0) return undefined;
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as EncodingNegotiator;
  const offered = [...available, 'identity'];
  const best = negotiator.encodings(offered, { preferred: offered })[0];
  return best === undefined || best === 'identity' ? undefined : (best as E);
}

/**
 * `pickEncoding` with its answers kept per header value, for hosts that answer often: browsers
 * send a handful of distinct `Accept-Encoding` values, and negotiating one costs microseconds
 * where a cached answer costs a Map lookup. `offered` is every coding the host ever has, in order
 * of preference; `available` (a subset, same order) is what one resource has.
 */
export function createEncodingChooser<E extends string>(offered: readonly E[], maxEntries = 1000) {
  const choices = new Map<string, E | undefined>();
  return (acceptEncoding: string | undefined, available: readonly E[] = offered): E | undefined => {
    if (!acceptEncoding || available.length === 0) return undefined;
    // A subset as long as the whole is the whole: the usual case is keyed by the header alone.
    const key = available.length === offered.length ? acceptEncoding : `${available.join(',')}|${acceptEncoding}`;
    const cached = choices.get(key);
    if (cached !== undefined || choices.has(key)) return cached;
    const choice = pickEncoding(acceptEncoding, available);
    if (choices.size >= maxEntries) choices.clear();
    choices.set(key, choice);
    return choice;
  };
}

/**
 * The type of `available` the client ranks highest by `Accept`; at equal weight, the one it
 * lists first, then the order of `available`. No header counts as `*\/*`.
 */
export function pickMediaType<T extends string>(accept: string | undefined, available: readonly T[]): T | undefined {
  return new Negotiator({ headers: { accept: accept || '*/*' } }).mediaType(available) as T | undefined;
}

/**
 * Whether `If-None-Match` names the answer's ETag, so a 304 may replace it. Weak comparison:
 * `W/"x"` matches `"x"`; `*` matches any answer that has a representation. Only this header is
 * read (a request's `Cache-Control: no-cache` is for caches, not for the origin server).
 */
export function matchesIfNoneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return fresh({ 'if-none-match': ifNoneMatch.trim() }, { etag });
}

export type ByteRange = { start: number; end: number };

// One range-spec: `a-b`, `a-` or `-n`. Digits only: signs, spaces inside or hex are malformed.
const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * `undefined` means "send the whole body with 200": RFC 9110 lets a server ignore a Range header
 * it does not support (multiple ranges, other units) or cannot parse. Only a well-formed range
 * that starts past the end earns a 416. Ours rather than `range-parser`'s, which answers 416 to
 * a reversed range (`5-2`, which the RFC says to ignore) and to `bytes=0-` of an empty file,
 * which media players send.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const equals = header.indexOf('=');
  if (equals === -1 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return undefined;
  const spec = header.slice(equals + 1).trim();
  // Multipart/byteranges responses are rarely needed and easy to abuse (many overlapping ranges).
  if (spec.includes(',')) return undefined;
  const match = RANGE_SPEC.exec(spec);
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  // An empty file has no byte to point at; media players still send `bytes=0-`, so answer 200.
  if (size === 0) return undefined;

  if (first === '') {
    // Suffix range: the last n bytes, all of them if n >= size. `-0` selects nothing.
    const suffixLength = Number(last);
    if (suffixLength === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffixLength), end: size - 1 };
  }
  const start = Number(first);
  // `5-2` is invalid, not unsatisfiable: the RFC says to ignore it.
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/**
 * Whether a Range request's `If-Range` lets its range apply (RFC 9110 13.1.5): absent, or naming
 * the answer's ETag by strong comparison. A weak tag or a date (these answers carry no
 * Last-Modified) does not: the whole current body goes out with 200, so a download resumed after
 * a redeploy never gets a piece of the new file spliced onto the old one.
 */
export function ifRangeHolds(ifRange: string, etag: string | undefined): boolean {
  if (ifRange === '') return true;
  return etag !== undefined && !etag.startsWith('W/') && ifRange.trim() === etag;
}

/** How long a cookie lasts, and whether the host is served over https. */
export interface CookieOptions {
  /** https: `Secure`, and the `__Host-` prefix on the name (`cookieName`). */
  secure: boolean;
  /** 0 deletes the cookie. */
  maxAgeSeconds: number;
}

/** A cookie's name on this install: `__Host-` over https, which browsers accept only host-only, `Secure`, `Path=/`. */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base;
}

/**
 * A `Set-Cookie` value, with the one set of attributes every cookie Plinth sets has (the app's
 * and the site gate's): host-only (no `Domain`), `Path=/` (a `__Host-` cookie needs it),
 * `HttpOnly`, `SameSite=Lax`, and `Secure` over https.
 */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  return serializeCookie(name, value, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
    maxAge: Math.max(0, Math.floor(options.maxAgeSeconds)),
  });
}

/** The request's cookies by name; of several with one name, the first (the browser's most specific). */
export function readCookies(header: string | undefined): Record<string, string | undefined> {
  return header ? parseCookieHeader(header) : {};
}

/**
 * Every value of the cookies called `name`, in order, at most `max`. For a reader that must try
 * each (the site gate: another site host may plant cookies of the same name for the whole site
 * domain, which browsers send first); `cookie` keeps only the first.
 */
export function cookieValues(header: string | undefined, name: string, max: number): string[] {
  const values: string[] = [];
  if (!header) return values;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
    if (values.length === max) break;
  }
  return values;
}
