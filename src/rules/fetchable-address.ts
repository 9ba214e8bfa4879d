import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

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
