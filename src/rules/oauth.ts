import { createHash } from 'node:crypto';

/**
 * Pure rules of the OAuth 2.1 authorization server: which redirect URIs a client may register and
 * how a request's redirect URI matches them, PKCE and resource indicators.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI cannot be registered, or undefined when it can: https, or loopback http(s). */
export function redirectUriProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) return 'must be a URL of at most 2000 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.hash !== '' || raw.includes('#')) return 'must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (isLoopbackRedirect(url)) return undefined;
  if (url.protocol !== 'https:') return 'must use https, or http on a loopback address (127.0.0.1, [::1], localhost)';
  return undefined;
}

export function isLoopbackRedirect(url: URL): boolean {
  return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Whether a requested redirect URI is one the client registered: exactly, except that a loopback
 * URI may use any port (RFC 8252 §7.3: native apps get an ephemeral port from the system).
 */
export function redirectUriMatches(requested: string, registered: readonly string[]): boolean {
  if (registered.includes(requested)) return true;
  let asked: URL;
  try {
    asked = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopbackRedirect(asked) || requested.includes('#')) return false;
  return registered.some((candidate) => {
    try {
      const known = new URL(candidate);
      return (
        isLoopbackRedirect(known) &&
        known.protocol === asked.protocol &&
        known.hostname === asked.hostname &&
        known.pathname === asked.pathname &&
        known.search === asked.search
      );
    } catch {
      return false;
    }
  });
}

/** RFC 7636: a verifier is 43-128 characters of [A-Z a-z 0-9 - . _ ~]. */
export function isCodeVerifier(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9\-._~]{43,128}$/.test(value);
}

/** An S256 challenge is the base64url SHA-256 of a verifier: 43 characters. */
export function isCodeChallenge(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * The resource a request names, matched against ours (RFC 8707), compared as URLs so
 * `https://mcp.example` and `https://mcp.example/` are the same. Returns our spelling, or
 * undefined when the value names something we do not serve.
 */
export function matchResource(requested: string, ours: readonly string[]): string | undefined {
  let asked: string;
  try {
    const url = new URL(requested);
    if (url.hash !== '') return undefined;
    asked = url.href;
  } catch {
    return undefined;
  }
  return ours.find((resource) => new URL(resource).href === asked);
}

/** Whether a client metadata document URL is acceptable as a `client_id`: https with a path. */
export function isClientMetadataUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
