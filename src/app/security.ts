import { createHmac, timingSafeEqual } from 'node:crypto';
import { securityHeaders, type SecurityHeaderOptions } from '../http/index.js';

/**
 * Pure rules of the app host's security: the headers every page carries, the cross-site check on
 * state-changing requests, form tokens, and where `?next=` may send a person.
 */

/** The page variant of the security headers, and never cached: app pages carry per-person data and form tokens. */
export function pageHeaders(options: SecurityHeaderOptions = {}): Record<string, string> {
  return { ...securityHeaders('page', options), 'Cache-Control': 'no-store' };
}

/**
 * Whether a state-changing request comes from our own pages. Browsers send `Origin` on every
 * POST; when a client sends neither `Origin` nor `Referer` (curl, old browsers) the form token
 * alone decides. `null` (sandboxed or privacy-redirected contexts) counts as foreign.
 */
export function isCrossSite(origin: string | undefined, referer: string | undefined, appOrigin: string): boolean {
  if (origin !== undefined && origin !== '') return origin !== appOrigin;
  if (referer !== undefined && referer !== '') {
    try {
      return new URL(referer).origin !== appOrigin;
    } catch {
      return true;
    }
  }
  return false;
}

/** The token a form carries, bound to a secret (session or server key) and a binding value. */
export function formToken(key: string, binding: string): string {
  return createHmac('sha256', key).update(`form:${binding}`).digest('base64url');
}

export function tokensMatch(expected: string, given: string | null | undefined): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A `?next=` value we may redirect to after sign-in: a path on the app host only. The value is
 * normalised as a browser would (dot segments, `%2e`), and it is the normalised value that is
 * checked and returned, since that is what the `Location` header carries: it must start with
 * exactly one `/`, and it never holds a backslash, a control character or whitespace a browser
 * strips (any of which can turn a path into `//other.host`).
 */
export function safeNext(raw: string | null | undefined): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048) return undefined;
  if (!isLocalPath(raw)) return undefined;
  let resolved: URL;
  try {
    resolved = new URL(raw, 'http://app.invalid');
  } catch {
    return undefined;
  }
  if (resolved.origin !== 'http://app.invalid') return undefined;
  const next = `${resolved.pathname}${resolved.search}`;
  return isLocalPath(next) ? next : undefined;
}

/** Starts with one `/` and holds nothing a URL parser or a browser could read as another host. */
function isLocalPath(value: string): boolean {
  if (value[0] !== '/' || value[1] === '/' || value[1] === '\\') return false;
  // Control characters (browsers drop tab and newline), backslashes (read as `/`), and the
  // Unicode spaces and separators some parsers trim.
  return !/[\u0000-\u0020\u007f-\u00a0\\\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]/.test(value);
}
