import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isFetchableAddress, slotsOf } from '../rules/index.js';
import { LATE, lookupBy, systemLookup, type Addresses, type NameLookup } from './name-lookup.js';

/**
 * Sends webhook deliveries (docs/webhooks.md). The target URL is whatever a site's owner typed,
 * so it is fenced like the client-metadata fetch (client-metadata.ts): the name is resolved once,
 * every address it has must be public, the connection goes to the checked address itself, no
 * redirect is followed, the attempt has a deadline (the name's lookup included) and only the first
 * bytes of the answer are read. https only; plain http only to loopback, and loopback only with
 * `PLINTH_WEBHOOK_ALLOW_LOOPBACK=1` (tests).
 *
 * A refused target is `refused address` whichever check refused it: the owner reads the attempt's
 * error, and "does not resolve" against "not a public address" would tell them which internal
 * names exist where the server resolves. The check that refused is in `reason`, for the log.
 */

export interface WebhookTransportOptions {
  allowLoopback: boolean;
  timeoutMs: number;
  /** Bytes of the receiver's answer read at most; the rest is not waited for. */
  maxResponseBytes: number;
  /** Resolves a host name to all its addresses; `dns.lookup` unless a test stands in for DNS. */
  lookup?: NameLookup;
  /** Lookups unanswered at once (`PLINTH_OUTBOUND_LOOKUPS`; 0: no bound), counted in `lookupSlots`. */
  lookupsAtOnce?: number;
  /** The process's count of outbound lookups unanswered (shared by its HTTP threads); a thread of its own without it. */
  lookupSlots?: SharedArrayBuffer;
  /** Extra trusted certificate authorities (tests with a local https receiver). */
  ca?: string | Buffer;
}

export interface WebhookAttempt {
  /** The receiver's status, when it answered. */
  status?: number;
  /** Why there was no answer (`timeout`, `connection failed`, `refused address`), as the owner is shown it. */
  error?: string;
  /** Which check refused the target (`not a public address`, …): for the log, never shown. */
  reason?: string;
}

/** The one error of every refused target (see above). */
export const WEBHOOK_REFUSED_ADDRESS = 'refused address';

export interface WebhookTransport {
  /**
   * Why a target is refused (undefined: it may be sent to); checks the URL and the addresses its
   * name has now, a name that does not resolve within the deadline being refused.
   */
  check(url: string): Promise<string | undefined>;
  /** POSTs `body` to `url` with `headers`; never throws. */
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<WebhookAttempt>;
}

export const WEBHOOK_URL_MAX_CHARS = 2000;

const isLoopback = (address: string): boolean => {
  try {
    const parsed = ipaddr.process(address);
    return parsed.range() === 'loopback';
  } catch {
    return false;
  }
};

export function createWebhookTransport(options: WebhookTransportOptions): WebhookTransport {
  const lookup = options.lookup ?? systemLookup;
  const slots = slotsOf(options.lookupsAtOnce ?? 0, options.lookupSlots);

  /** The address to connect to, or why there is none (`late`: the name was not found by `deadline`). */
  async function target(raw: string, deadline: number): Promise<{ url: URL; address: string } | { refused: string } | { late: true }> {
    if (raw.length > WEBHOOK_URL_MAX_CHARS) return { refused: 'too long' };
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { refused: 'not a URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { refused: 'not http(s)' };
    if (url.username !== '' || url.password !== '') return { refused: 'credentials in the URL' };
    // The URL parser has turned IPv4 in any spelling (`127.1`, `0x7f.1`, `2130706433`) into
    // dotted decimal and IPv6 into its compressed form; the brackets go for the resolver.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let found: Addresses | typeof LATE;
    try {
      // A name not found in time, or not looked up for want of a slot, is a late attempt: retried.
      found = await lookupBy(lookup, slots, host, deadline);
    } catch {
      return { refused: 'name does not resolve' };
    }
    if (found === LATE) return { late: true };
    if (found.length === 0) return { refused: 'name does not resolve' };
    // Every address must be public: a name with one public and one internal address could lead inside.
    if (found.some((entry) => !isFetchableAddress(entry.address, options.allowLoopback))) return { refused: 'not a public address' };
    if (url.protocol === 'http:' && !found.every((entry) => isLoopback(entry.address))) return { refused: 'not https' };
    return { url, address: found[0]!.address };
  }

  return {
    async check(raw) {
      const found = await target(raw, performance.now() + options.timeoutMs);
      if ('late' in found) return 'name not resolved in time';
      return 'refused' in found ? found.refused : undefined;
    },
    async send(raw, headers, body) {
      // One deadline for the attempt as a whole, from before the name is looked up.
      const deadline = performance.now() + options.timeoutMs;
      const found = await target(raw, deadline);
      // Not refused: the name's DNS may answer in time at the next attempt.
      if ('late' in found) return { error: 'timeout' };
      if ('refused' in found) return { error: WEBHOOK_REFUSED_ADDRESS, reason: found.refused };
      const { url, address } = found;
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const secure = url.protocol === 'https:';
      const requestOptions: RequestOptions = {
        // An IP literal as host: no second lookup, so the connection goes to the address checked.
        host: address,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          ...headers,
          host: url.host,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Plinth-Webhooks',
        },
        // A fresh connection each time: none kept for, or taken from, other requests.
        agent: false,
      };
      return new Promise<WebhookAttempt>((resolve) => {
        let settled = false;
        const done = (attempt: WebhookAttempt): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.destroy();
          resolve(attempt);
        };
        const onAnswer = (res: IncomingMessage): void => {
          const status = res.statusCode ?? 0;
          // A redirect is an answer like any other that is not 2xx: never followed.
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.byteLength;
            if (read > options.maxResponseBytes) done({ status });
          });
          res.on('end', () => done({ status }));
          res.on('error', () => done({ status }));
        };
        const req: ClientRequest = secure
          ? httpsRequest({ ...requestOptions, ...(isIP(host) === 0 ? { servername: host } : {}), ca: options.ca }, onAnswer)
          : httpRequest(requestOptions, onAnswer);
        const timer = setTimeout(() => done({ error: 'timeout' }), Math.max(0, deadline - performance.now()));
        req.on('error', () => done({ error: 'connection failed' }));
        req.end(body);
      });
    },
  };
}
