import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which proxies in front of Plinth may say who the client is (`PLINTH_TRUST_PROXY`), and the IP
 * address arithmetic that needs. Pure: the setting is parsed once by the configuration, and the
 * client network is picked per request by the HTTP edge (http/client-network.ts).
 */

/** An address as 16 bytes; IPv4 as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`). */
export type AddressBytes = readonly number[];

/** A network of trusted proxies: its first `prefixBits` bits (of the 128) are fixed. */
export interface TrustedNetwork {
  readonly bytes: AddressBytes;
  readonly prefixBits: number;
}

export type ProxyTrust =
  /** No proxy is trusted: the connection's own address counts. */
  | { readonly kind: 'none' }
  /** This many proxies sit in front, each appending to `X-Forwarded-For`. */
  | { readonly kind: 'hops'; readonly hops: number }
  /** Proxies in these networks are trusted (walk from the right, skipping them). */
  | { readonly kind: 'networks'; readonly networks: readonly TrustedNetwork[] };

export const NO_PROXY_TRUST: ProxyTrust = Object.freeze({ kind: 'none' });

/** More hops than any real chain of proxies has; a larger number is a mistake in the setting. */
export const MAX_PROXY_HOPS = 16;

// The names Express's `trust proxy` knows, for operators who write them.
const NAMED_NETWORKS: ReadonlyMap<string, readonly string[]> = new Map([
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['linklocal', ['169.254.0.0/16', 'fe80::/10']],
  ['uniquelocal', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
]);

/**
 * `PLINTH_TRUST_PROXY`: `0`/`false`/empty (no proxy), a number of hops (`1`/`true` is one), or
 * a comma list of proxy addresses and networks (`10.0.0.0/8, ::1, loopback`).
 */
export function parseProxyTrust(raw: string): { ok: true; trust: ProxyTrust } | { ok: false; problem: string } {
  const text = raw.trim().toLowerCase();
  if (text === '' || text === '0' || text === 'false') return { ok: true, trust: NO_PROXY_TRUST };
  if (text === 'true') return { ok: true, trust: { kind: 'hops', hops: 1 } };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > MAX_PROXY_HOPS) return { ok: false, problem: `a hop count is at most ${MAX_PROXY_HOPS}` };
    return { ok: true, trust: hops === 0 ? NO_PROXY_TRUST : { kind: 'hops', hops } };
  }
  const networks: TrustedNetwork[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    if (item === '') continue;
    const named = NAMED_NETWORKS.get(item);
    for (const cidr of named ?? [item]) {
      const network = parseNetwork(cidr);
      if (network === undefined)
        return { ok: false, problem: `"${item}" is not an IP address, a network such as 10.0.0.0/8, or loopback, linklocal, uniquelocal` };
      networks.push(network);
    }
  }
  if (networks.length === 0) return { ok: false, problem: 'the list names no network' };
  return { ok: true, trust: { kind: 'networks', networks } };
}

/** The setting as an operator would write it, for the effective configuration in the log. */
export function describeProxyTrust(trust: ProxyTrust): string {
  if (trust.kind === 'none') return '0';
  if (trust.kind === 'hops') return String(trust.hops);
  return trust.networks.map(describeNetwork).join(', ');
}

function describeNetwork({ bytes, prefixBits }: TrustedNetwork): string {
  if (isIPv4Bytes(bytes) && prefixBits >= 96) {
    const address = bytes.slice(12).join('.');
    return prefixBits === 128 ? address : `${address}/${prefixBits - 96}`;
  }
  const address = ipaddr.fromByteArray([...bytes]).toNormalizedString();
  return prefixBits === 128 ? address : `${address}/${prefixBits}`;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or one address (all its bits). */
export function parseNetwork(text: string): TrustedNetwork | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const bytes = addressBytes(address);
  if (bytes === undefined) return undefined;
  const v4 = isIP(address) === 4;
  if (slash === -1) return { bytes, prefixBits: 128 };
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (v4 ? 32 : 128)) return undefined;
  return { bytes, prefixBits: v4 ? 96 + prefix : prefix };
}

/** Whether an address lies in any of the networks. */
export function inNetworks(address: AddressBytes, networks: readonly TrustedNetwork[]): boolean {
  return networks.some((network) => inNetwork(address, network));
}

function inNetwork(address: AddressBytes, network: TrustedNetwork): boolean {
  let bits = network.prefixBits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((address[i]! & mask) !== (network.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * The 16 bytes of an IPv4 or IPv6 address in its plain text form, or undefined for anything
 * else. Node's `isIP` decides what is an address (ipaddr.js alone would also read `0x7f.1` or
 * `127.1`, which no proxy writes); ipaddr.js reads it (an IPv6 zone id is dropped, and the
 * deprecated `::a.b.c.d` is read as IPv4-mapped).
 */
export function addressBytes(text: string): AddressBytes | undefined {
  const family = isIP(text);
  if (family === 0) return undefined;
  return family === 4 ? ipaddr.IPv4.parse(text).toIPv4MappedAddress().toByteArray() : ipaddr.IPv6.parse(text).toByteArray();
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** Whether the bytes are an IPv4 address (or IPv4-mapped IPv6, which is the same address). */
export function isIPv4Bytes(bytes: AddressBytes): boolean {
  return V4_MAPPED_PREFIX.every((byte, i) => bytes[i] === byte);
}
