import ipaddr from 'ipaddr.js';
import { addressBytes, inNetworks, isIPv4Bytes, type AddressBytes, type ProxyTrust } from '../rules/index.js';
import type { HttpRequest } from './uws.js';

/**
 * Who a client is, for per-network caps: the connection's address, or, behind proxies the
 * operator trusts (`PLINTH_TRUST_PROXY`), the address the nearest of them recorded in
 * `X-Forwarded-For`; then the network it belongs to, IPv4 /24 or IPv6 /64, so one host cannot
 * dodge a cap by rotating addresses.
 *
 * Proxies append: nginx's `$proxy_add_x_forwarded_for`, HAProxy's `option forwardfor` (a header
 * line of its own), Caddy, cloud load balancers. So the rightmost entries are the proxies' own
 * and everything to their left is whatever the client sent. The walk starts at the right and
 * never goes further left than the trust reaches; an entry it cannot read, or a chain shorter
 * than the trust says, leaves the connection's address, which the client cannot choose.
 * `Forwarded` (RFC 7239), `X-Real-IP` and the like are not read: a proxy set up for
 * `X-Forwarded-For` passes them through as the client wrote them.
 */

/** Every `X-Forwarded-For` line of a request, joined in order (RFC 9110 §5.3), or ''. */
export function forwardedFor(req: Pick<HttpRequest, 'forEach'>): string {
  let joined: string | undefined;
  req.forEach((name, value) => {
    if (name === 'x-forwarded-for') joined = joined === undefined ? value : `${joined},${value}`;
  });
  return joined ?? '';
}

/**
 * A connection's address as text, from the 4 or 16 bytes uWS's `getRemoteAddress` gives: IPv4
 * dotted (also for IPv4-mapped IPv6), IPv6 as eight hexadecimal groups (not shortened; every
 * reader here parses it). Built in JavaScript because `getRemoteAddressAsText` and the Buffer
 * that turns its ArrayBuffer into a string cost a counted page view a few per cent more
 * (bench/RESULTS.md, "Analytics: what counting costs serving"); '' for anything else (uWS gives
 * no bytes for a closed socket).
 */
export function remoteAddressText(raw: ArrayBuffer): string {
  const b = new Uint8Array(raw);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return '';
  let mapped = b[10] === 0xff && b[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) mapped = b[i] === 0;
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  let text = ((b[0]! << 8) | b[1]!).toString(16);
  for (let i = 2; i < 16; i += 2) text += `:${((b[i]! << 8) | b[i + 1]!).toString(16)}`;
  return text;
}

/** The client address a cap should count, from the connection's address and X-Forwarded-For. */
export function clientAddress(socketAddress: string, forwarded: string, trust: ProxyTrust): string {
  const socket = readAddress(socketAddress);
  const fallback = socket === undefined ? socketAddress : socket.text;
  if (trust.kind === 'none' || forwarded === '' || socket === undefined) return fallback;
  // Empty entries (`a,,b`, a trailing comma, an empty header line) are no entries (RFC 9110 §5.6.1).
  const entries = forwarded.split(',').filter((entry) => entry.trim() !== '');
  if (trust.kind === 'hops') {
    if (entries.length < trust.hops) return fallback;
    let found: ReadAddress | undefined;
    for (let i = 1; i <= trust.hops; i++) {
      found = readEntry(entries[entries.length - i]!);
      if (found === undefined) return fallback;
    }
    return found!.text;
  }
  if (!inNetworks(socket.bytes, trust.networks)) return fallback;
  for (let i = entries.length - 1; i >= 0; i--) {
    const found = readEntry(entries[i]!);
    if (found === undefined) return fallback;
    if (!inNetworks(found.bytes, trust.networks)) return found.text;
  }
  // Every hop was a trusted proxy (a request from inside): no outside client to name.
  return fallback;
}

interface ReadAddress {
  bytes: AddressBytes;
  /** Plain text: IPv4 dotted (also for IPv4-mapped IPv6), IPv6 in its short form (RFC 5952) without brackets, port or zone. */
  text: string;
}

/**
 * One `X-Forwarded-For` entry: an address, optionally with a port (`1.2.3.4:80`, `[::1]:80`) or
 * in brackets (`[::1]`), surrounded by spaces or tabs. `unknown`, RFC 7239's obfuscated `_name`,
 * quoted text and anything else is not an address.
 */
function readEntry(entry: string): ReadAddress | undefined {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1]!.includes(':') ? readAddress(bracketed[1]!) : undefined;
  const withPort = /^(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}):\d{1,5}$/.exec(text);
  return readAddress(withPort ? withPort[1]! : text);
}

function readAddress(text: string): ReadAddress | undefined {
  const bytes = addressBytes(text);
  if (bytes === undefined) return undefined;
  if (isIPv4Bytes(bytes)) return { bytes, text: bytes.slice(12).join('.') };
  return { bytes, text: ipaddr.fromByteArray([...bytes]).toString() };
}

/** `a.b.c.0/24` for IPv4 (also IPv4-mapped IPv6), `xxxx:xxxx:xxxx:xxxx::/64` for IPv6. */
export function networkOf(address: string): string {
  const bytes = addressBytes(address);
  if (bytes === undefined) return `other:${address}`;
  if (isIPv4Bytes(bytes)) return `${bytes.slice(12, 15).join('.')}.0/24`;
  const groups = ipaddr
    .fromByteArray([...bytes])
    .toNormalizedString()
    .split(':');
  return `${groups.slice(0, 4).join(':')}::/64`;
}
