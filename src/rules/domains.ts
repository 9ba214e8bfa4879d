import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { parse as parseName } from 'tldts';
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
 * names, public suffixes, and the service's own hosts and site domain (and anything under them).
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
  // A public suffix, ICANN's (`co.uk`) or a private one (`github.io`), is shared by many owners.
  if (parseName(ascii, { allowPrivateDomains: true }).domain === null) {
    return {
      ok: false,
      problem: `${ascii} is a public suffix, under which many owners register names; give a name of your own under it, such as "example.${ascii}".`,
    };
  }
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
 * Whether a domain is a zone apex, which cannot have a CNAME record: the name registered under a
 * public suffix of the Public Suffix List's ICANN section (`example.org`, `example.co.uk`; not
 * `www.example.org` nor `blog.github.io`, which a private suffix's owner serves from its zone).
 */
export function isApex(domain: string): boolean {
  return parseName(domain).domain === domain;
}
