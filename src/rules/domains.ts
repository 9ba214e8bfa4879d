import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { isDnsLabel } from './dns-label.js';

/**
 * Custom domains: which names a site may claim, how a Host header is compared with them, and
 * where the verification record lives. Pure functions; the store keeps the records and the
 * operations decide who may change them.
 */

/** Longest domain name DNS allows, in its ASCII (punycode) form, without the trailing dot. */
export const MAX_DOMAIN_LENGTH = 253;
/** The TXT record that proves control of `<domain>` lives at `<prefix>.<domain>`. */
export const DOMAIN_CHALLENGE_PREFIX = '_plinth-challenge';
/** Statuses of a site's claim on a custom domain, as stored; only `active` ones are served and certified. */
export const DOMAIN_STATUSES = ['pending', 'active', 'failed', 'suspended'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
/**
 * Statuses as a site's owner is shown them: also `taken`, never stored, which a pending or failed
 * claim shows while another site's claim holds the domain (that site's TXT record was found first).
 */
export const SHOWN_DOMAIN_STATUSES = [...DOMAIN_STATUSES, 'taken'] as const;
export type ShownDomainStatus = (typeof SHOWN_DOMAIN_STATUSES)[number];

/** The service's own names, which no site may claim. */
export interface ServiceHosts {
  readonly docs: string;
  readonly api: string;
  readonly mcp: string;
  readonly app: string;
  readonly siteDomain: string;
}

// Names that never resolve on the public internet (RFC 6761, RFC 6762, RFC 8375 and ICANN's .internal).
const LOCAL_SUFFIXES = ['localhost', 'local', 'invalid', 'internal', 'arpa', 'home.arpa', 'lan'];

export type DomainParse = { ok: true; domain: string } | { ok: false; problem: string };

/**
 * A domain as people type it (any case, a trailing dot, an internationalised name) in the form
 * the records and Host headers use: lower-case ASCII, punycode for non-ASCII labels, no trailing
 * dot. Refuses IP literals, single labels, names over 253 characters, wildcards, local-only
 * names, and the service's own hosts and site domain (and anything under them).
 */
export function parseDomain(input: unknown, hosts: ServiceHosts): DomainParse {
  if (typeof input !== 'string' || input.trim() === '') return { ok: false, problem: 'Give the domain as a name such as "www.example.org".' };
  let raw = input.trim();
  if (raw.startsWith('[') || isIP(raw) !== 0) return { ok: false, problem: 'An IP address cannot be a custom domain; give a domain name.' };
  if (/[/:@?#%\s\\*]/.test(raw)) {
    return { ok: false, problem: 'Give only the domain name: no scheme, port, path, wildcard or spaces (e.g. "www.example.org").' };
  }
  if (raw.endsWith('.')) raw = raw.slice(0, -1);
  // WHATWG's domain-to-ASCII (UTS #46): lower-cases, maps and punycodes, or gives '' when invalid.
  const ascii = domainToASCII(raw);
  if (ascii === '') return { ok: false, problem: `"${raw.slice(0, 80)}" is not a valid domain name.` };
  if (ascii.length > MAX_DOMAIN_LENGTH) return { ok: false, problem: `A domain name has at most ${MAX_DOMAIN_LENGTH} characters.` };
  if (isIP(ascii) !== 0 || /^[0-9.]+$/.test(ascii)) return { ok: false, problem: 'An IP address cannot be a custom domain; give a domain name.' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, problem: 'A custom domain needs at least one dot, such as "example.org".' };
  if (!labels.every(isDnsLabel)) {
    return { ok: false, problem: 'Each part of the domain must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen.' };
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return { ok: false, problem: 'The last part of a domain name cannot be a number.' };
  const own = [hosts.siteDomain, hosts.docs, hosts.api, hosts.mcp, hosts.app];
  if (own.some((host) => isAtOrUnder(ascii, host))) {
    return { ok: false, problem: `${ascii} belongs to this service; give a domain of your own.` };
  }
  if (LOCAL_SUFFIXES.some((suffix) => isAtOrUnder(ascii, suffix))) return { ok: false, problem: `${ascii} is a local-only name; give a public domain.` };
  return { ok: true, domain: ascii };
}

/** True when `name` is `parent` or a name under it. */
export function isAtOrUnder(name: string, parent: string): boolean {
  return name === parent || (name.length > parent.length + 1 && name.endsWith(parent) && name.charCodeAt(name.length - parent.length - 1) === 46);
}

/**
 * The host a Host header names, as records are keyed: lower-cased, port and trailing dot
 * removed. Non-ASCII bytes are left as they are, so they match no record (records are punycode).
 */
export function hostOfHeader(header: string): string {
  let host = header.toLowerCase();
  if (host.startsWith('[')) return host;
  const colon = host.indexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** The other half of an apex/www pair: `example.org` ↔ `www.example.org`. */
export function wwwPartner(domain: string): string {
  return domain.startsWith('www.') ? domain.slice(4) : `www.${domain}`;
}

/** Where the verification TXT record of a domain lives. */
export function challengeName(domain: string): string {
  return `${DOMAIN_CHALLENGE_PREFIX}.${domain}`;
}

/**
 * Second-level labels under which countries register names (`co.uk`, `com.au`, `ne.jp`): a name
 * right under one (`example.co.uk`) is the apex of its zone as `example.org` is.
 */
const COUNTRY_SECOND_LEVELS: ReadonlySet<string> = new Set(['ac', 'co', 'com', 'edu', 'gen', 'go', 'gov', 'ltd', 'ne', 'net', 'or', 'org', 'plc']);

/**
 * Whether a domain is most likely a zone apex, which cannot have a CNAME record: two labels
 * (`example.org`), or three under a country's second level (`example.co.uk`, `example.com.au`),
 * `www.` names aside. A guess without the public suffix list; when it says apex, the
 * instructions name an ALIAS and, for DNS hosts without one, A and AAAA records, which also
 * work for a name that is not an apex.
 */
export function looksLikeApex(domain: string): boolean {
  const labels = domain.split('.');
  if (labels.length === 2) return true;
  return labels.length === 3 && labels[0] !== 'www' && /^[a-z]{2}$/.test(labels[2]!) && COUNTRY_SECOND_LEVELS.has(labels[1]!);
}
