/**
 * Turns the raw request target into a site-relative path, before any lookup. Every safety check
 * (traversal, NUL, backslash) runs on the DECODED form: checking before decoding is how
 * `%2e%2e%2f` and `..%5c` style traversals get through.
 */

export type RequestPath = { ok: true; path: string; trailingSlash: boolean } | { ok: false; status: 400 | 414 };

const BAD_REQUEST = { ok: false, status: 400 } as const;

// C0 controls and DEL never name a file a browser can link to; NUL in particular truncates
// paths in C libraries and would let `a.html%00.png` mean two different files.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

export function normalizeRequestPath(rawUrl: string, maxBytes: number): RequestPath {
  // Length first, on the raw bytes: decoding a huge hostile string is the cost we want to avoid.
  if (Buffer.byteLength(rawUrl, 'utf8') > maxBytes) return { ok: false, status: 414 };

  // The query never selects a file. A raw `#` cannot be part of a file name either: browsers
  // send a literal `#` in a name as `%23` and never send the fragment.
  const end = rawUrl.search(/[?#]/);
  const target = end === -1 ? rawUrl : rawUrl.slice(0, end);
  // Origin-form only; absolute-form (`http://host/x`) and `*` are not for a static file server.
  if (!target.startsWith('/')) return BAD_REQUEST;

  let decoded: string;
  try {
    // Throws URIError on `%zz`, truncated escapes and escapes that are not valid UTF-8.
    decoded = decodeURIComponent(target);
  } catch {
    return BAD_REQUEST;
  }
  // `\` is a separator on Windows and in some URL parsers; a site path never needs one.
  if (CONTROL_CHARS.test(decoded) || decoded.includes('\\')) return BAD_REQUEST;

  // `%2F` decodes to `/` and is split like any other slash, so `..%2F` is resolved below too.
  const segments: string[] = [];
  const parts = decoded.split('/');
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      // Climbing above the root is an attack or a broken link; either way, not a file.
      if (segments.length === 0) return BAD_REQUEST;
      segments.pop();
      continue;
    }
    segments.push(part);
  }

  const path = segments.join('/');
  // As in URL resolution, `/a/.` and `/a/b/..` name the directory `a/`, like `/a/`.
  const last = parts[parts.length - 1];
  const trailingSlash = path !== '' && (last === '' || last === '.' || last === '..');
  return { ok: true, path, trailingSlash };
}
