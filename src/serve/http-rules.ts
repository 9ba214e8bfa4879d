/**
 * Header rules for serving published files: Range (RFC 9110 §14), Accept-Encoding (§12.5.3),
 * If-None-Match (§13.1.2) and Cache-Control (SPEC 4.5.4). Pure string logic so the edge code stays
 * a thin sequence of lookups and writes.
 */
import { ENCODINGS, isHtmlType, type Encoding } from '../rules/index.js';

export type ByteRange = { start: number; end: number };

// One range-spec: `a-b`, `a-` or `-n`. Digits only: signs, spaces inside or hex are malformed.
const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * `undefined` means "send the whole body with 200": RFC 9110 lets a server ignore a Range header
 * it does not support (multiple ranges, other units) or cannot parse. Only a well-formed range
 * that starts past the end earns a 416.
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

const QVALUE = /^q=(0(\.\d{0,3})?|1(\.0{0,3})?)$/i;

/** Weight per listed coding; entries with an unreadable q are dropped, never guessed upward. */
function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const item of header.split(',')) {
    const [rawName = '', ...params] = item.split(';');
    let name = rawName.trim().toLowerCase();
    if (name === '') continue;
    // RFC 9110 §8.4.1.3: a recipient should treat x-gzip as gzip.
    if (name === 'x-gzip') name = 'gzip';
    let weight = 1;
    let valid = true;
    for (const param of params) {
      const trimmed = param.trim();
      if (!trimmed.toLowerCase().startsWith('q=')) continue;
      const q = QVALUE.exec(trimmed);
      if (q) weight = Number(q[1]);
      else valid = false;
    }
    // A coding listed twice keeps its first weight, like most servers.
    if (valid && !weights.has(name)) weights.set(name, weight);
  }
  return weights;
}

/**
 * The best encoding both sides have, or `undefined` for identity. No header means identity here:
 * the RFC allows any coding, but old clients and tools that omit it often cannot decode one.
 */
export function pickEncoding(acceptEncoding: string | undefined, available: readonly Encoding[]): Encoding | undefined {
  if (acceptEncoding === undefined || available.length === 0) return undefined;
  const weights = parseAcceptEncoding(acceptEncoding);
  const wildcard = weights.get('*') ?? 0;
  let best: Encoding | undefined;
  let bestWeight = 0;
  // At equal weight, the order of ENCODINGS: br is smaller for the same text.
  for (const encoding of ENCODINGS) {
    if (!available.includes(encoding)) continue;
    const weight = weights.get(encoding) ?? wildcard;
    // Strictly greater keeps the earlier (preferred) coding on ties; q=0 never wins.
    if (weight > bestWeight) {
      best = encoding;
      bestWeight = weight;
    }
  }
  return best;
}

// One list element: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, then a comma or the end. Commas
// may appear inside the quotes, so elements are matched whole rather than split on ','. Sticky, so
// each match must start where the previous one ended: garbage is not searched for tags.
const LIST_ENTITY_TAG = /[ \t,]*(W\/)?("[^"]*")[ \t]*(?:,|$)/y;

function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/**
 * If-None-Match uses weak comparison: `W/"x"` matches `"x"` (RFC 9110 §13.1.2). A malformed list
 * stops the scan and counts as no match, which only costs a full 200 response.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  const wanted = opaqueTag(etag);
  LIST_ENTITY_TAG.lastIndex = 0;
  while (LIST_ENTITY_TAG.lastIndex < trimmed.length) {
    const match = LIST_ENTITY_TAG.exec(trimmed);
    if (!match) return false;
    if (match[2] === wanted) return true;
  }
  return false;
}

// HTML is short-lived so a redeploy shows up within a minute; assets change name less often in
// practice and a 5-minute window saves most repeat fetches (SPEC 4.5.4).
export function cacheControlFor(type: string): string {
  return isHtmlType(type) ? 'public, max-age=60' : 'public, max-age=300';
}
