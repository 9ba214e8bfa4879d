/**
 * Header names that serving reads or writes on every request, as bytes. uWS converts a string
 * argument of `getHeader` or `writeHeader` to UTF-8 in a fresh allocation on every call, and reads
 * a byte array in place: with four such calls a bare 2 KB answer cost about 3 % more CPU with
 * strings (bench/RESULTS.md, "Serving back at the ceiling"). Never written to.
 */
export const HEADER_NAMES = {
  host: Buffer.from('host'),
  acceptEncoding: Buffer.from('accept-encoding'),
  ifNoneMatch: Buffer.from('if-none-match'),
  range: Buffer.from('range'),
  // Read for a page view when analytics count it.
  userAgent: Buffer.from('user-agent'),
  referer: Buffer.from('referer'),
  xForwardedFor: Buffer.from('x-forwarded-for'),
  contentType: Buffer.from('Content-Type'),
  etag: Buffer.from('ETag'),
} as const;
