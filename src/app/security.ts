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
