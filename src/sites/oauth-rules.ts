import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Pure rules of the OAuth 2.1 authorization server: which redirect URIs a client may register and
 * how a request's redirect URI matches them, PKCE, resource indicators, and which addresses a
 * client metadata document may be fetched from.
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

/**
 * Whether an address may be fetched from for a client metadata document. The URL comes from
 * anyone who starts an authorization, so the server must not become a way into its own network:
 * only addresses ipaddr.js calls plain `unicast` pass (an allow-list, so a range added to its table
 * later is refused until we look at it), and for IPv6 only inside 2000::/3, the space IANA hands
 * out for global unicast. Loopback passes only when the server itself runs on localhost.
 *
 * `address` is what the resolver returned and what the connection is made to, so it must be an
 * address in the form `net.isIP` accepts; other spellings (`127.1`, `0x7f.1`, `2130706433`) are
 * not addresses a connection takes and are refused rather than interpreted.
 */
export function isFetchableAddress(address: string, allowLoopback: boolean): boolean {
  const family = isIP(address);
  if (family === 4) return isFetchableIPv4(ipaddr.IPv4.parse(address), allowLoopback);
  if (family !== 6) return false;
  // A zone id scopes the address to one link of this machine: never a public destination.
  if (address.includes('%')) return false;
  // ipaddr.js reads `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`), where the kernel's inet_pton
  // reads the IPv4-compatible `::a.b.c.d`. The URL parser agrees with the kernel and writes the
  // address in hex, which ipaddr.js reads the same way: so what is judged is what is connected to.
  let v6: ipaddr.IPv6;
  try {
    v6 = ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  } catch {
    return false;
  }
  const range = v6.range();
  // The kernel sends ::ffff:a.b.c.d to a.b.c.d over IPv4: judge that address, loopback included.
  if (range === 'ipv4Mapped') return isFetchableIPv4(v6.toIPv4Address(), allowLoopback);
  // IPv4-translated (RFC 6145) and the NAT64 well-known prefix (RFC 6052) carry the IPv4
  // address a translator will reach in their last 32 bits; that address must be public, and a
  // translator is not this machine, so never loopback.
  if (range === 'rfc6145' || (range === 'rfc6052' && v6.match(NAT64_WELL_KNOWN))) return isFetchableIPv4(embeddedIPv4(v6), false);
  if (range === 'loopback') return allowLoopback;
  // Everything else must be plain unicast. This refuses, whatever they embed: the local-use NAT64
  // prefix 64:ff9b:1::/48 (an operator's own translator, where the IPv4 sits depends on a prefix
  // length we cannot know), 6to4 and Teredo (deprecated tunnels whose embedded IPv4 is a relay
  // this machine may route to), and the deprecated IPv4-compatible ::a.b.c.d, which ipaddr.js
  // calls unicast but lies outside 2000::/3.
  return range === 'unicast' && v6.match(GLOBAL_UNICAST);
}

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  return ipaddr.IPv4.parse(address.toByteArray().slice(12).join('.'));
}

function isFetchableIPv4(address: ipaddr.IPv4, allowLoopback: boolean): boolean {
  const range = address.range();
  if (range === 'loopback') return allowLoopback;
  // Refused by name: private, carrierGradeNat, linkLocal, unspecified, broadcast, multicast,
  // reserved (documentation, benchmarking, 240/4, …), and the anycast as112 and amt blocks.
  return range === 'unicast';
}
