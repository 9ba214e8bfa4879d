import { isIPv4, isIPv6 } from 'node:net';

/**
 * Pure rules for who a client is, for per-network caps: the socket's address, or the first
 * `X-Forwarded-For` hop when (and only when) a trusted proxy sits in front; then the network it
 * belongs to, IPv4 /24 or IPv6 /64, so one host cannot dodge a cap by rotating addresses.
 */

/** The client address a cap should count, from the socket address and X-Forwarded-For. */
export function clientAddress(socketAddress: string, forwardedFor: string, trustProxy: boolean): string {
  if (trustProxy && forwardedFor !== '') {
    const first = forwardedFor.split(',')[0]!.trim();
    const unbracketed = first.startsWith('[') ? first.slice(1, first.indexOf(']')) : first;
    // "1.2.3.4:5678" carries a port; an IPv6 address has more than one colon.
    const host = isIPv4(unbracketed.split(':')[0]!) && unbracketed.split(':').length === 2 ? unbracketed.split(':')[0]! : unbracketed;
    if (isIPv4(host) || isIPv6(host)) return host;
  }
  return socketAddress;
}

/** `a.b.c.0/24` for IPv4 (also IPv4-mapped IPv6), `xxxx:xxxx:xxxx:xxxx::/64` for IPv6. */
export function networkOf(address: string): string {
  if (isIPv4(address)) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  if (!isIPv6(address)) return `other:${address}`;
  const groups = expandIPv6(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [hi, lo] = [groups[6]!, groups[7]!];
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.0/24`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** Eight 16-bit groups of a valid IPv6 address (zone id dropped, embedded IPv4 folded in). */
function expandIPv6(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}
