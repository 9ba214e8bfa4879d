import type { RecognizedString } from './uws.js';

/**
 * Bytes for uWS to read in place, as an `ArrayBuffer` of exactly their length: the cheapest
 * argument uWS takes. A string is converted to UTF-8 in a fresh allocation on every call; a
 * `Buffer` (a typed array) makes V8 find its `ArrayBuffer`, backing store, offset and length,
 * about 110 instructions more per argument than an `ArrayBuffer` (bench/serve-instructions.mjs).
 */
export function exactBytes(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/**
 * Header names that serving reads or writes on every request, as bytes (`exactBytes`): with four
 * such calls a bare 2 KB answer cost about 3 % more CPU with strings (bench/RESULTS.md, "Serving
 * back at the ceiling"). Never written to.
 */
export const HEADER_NAMES = {
  host: exactBytes(Buffer.from('host')),
  acceptEncoding: exactBytes(Buffer.from('accept-encoding')),
  ifNoneMatch: exactBytes(Buffer.from('if-none-match')),
  range: exactBytes(Buffer.from('range')),
  ifRange: exactBytes(Buffer.from('if-range')),
  // Read for a page view when analytics count it.
  userAgent: exactBytes(Buffer.from('user-agent')),
  referer: exactBytes(Buffer.from('referer')),
  xForwardedFor: exactBytes(Buffer.from('x-forwarded-for')),
  contentType: exactBytes(Buffer.from('Content-Type')),
  etag: exactBytes(Buffer.from('ETag')),
} as const;

/**
 * A header name as text, whichever form it was asked by: a request copy (made before an await)
 * keys its headers by text, and `String()` of an `ArrayBuffer` is not its bytes.
 */
export function headerNameText(name: RecognizedString): string {
  if (typeof name === 'string') return name;
  const bytes = name instanceof ArrayBuffer ? Buffer.from(name) : Buffer.from(name.buffer, name.byteOffset, name.byteLength);
  return bytes.toString('latin1');
}
