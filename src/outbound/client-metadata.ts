import { request } from 'node:https';
import { isIP } from 'node:net';
import { ServiceError } from '../errors.js';
import type { Logger } from '../log.js';
import { isFetchableAddress, slotsOf } from '../rules/index.js';
import { LATE, lookupBy, systemLookup, type NameLookup } from './name-lookup.js';

/**
 * Fetches an OAuth Client ID Metadata Document (the `client_id` is an https URL whose JSON names
 * the client and its redirect URIs). The URL comes from whoever starts an authorization, signed in
 * or not, so the fetch is fenced: https only, no redirects, a few seconds (the name's lookup
 * included), a small body, and only to public addresses. The name is resolved once, every address it has is checked, and the
 * connection is made to the checked address itself, so a name cannot resolve to a public address
 * for the check and a private one for the connection.
 *
 * Every failure, from an unresolvable name to a body that is not JSON, gives the caller the same
 * message: distinct ones ("connection refused", "did not answer", "answered 404") would let anyone
 * probe which internal addresses and ports are open through this server. The reason goes to the
 * debug log.
 */

export interface ClientMetadataFetchOptions {
  /** Loopback addresses are fetchable (the server itself runs on localhost). */
  allowLoopback: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** Extra trusted certificate authorities (tests with a local https server). */
  ca?: string | Buffer;
  /** Where the reason of a refused fetch is written, at debug level. */
  log?: Logger;
  /** Resolves a host name to all its addresses; `dns.lookup` unless a test stands in for DNS. */
  lookup?: NameLookup;
  /** Lookups unanswered at once (`PLINTH_OUTBOUND_LOOKUPS`; 0: no bound), counted in `lookupSlots`. */
  lookupsAtOnce?: number;
  /** The process's count of outbound lookups unanswered (shared by its HTTP threads); a thread of its own without it. */
  lookupSlots?: SharedArrayBuffer;
}

export type ClientMetadataFetcher = (url: string) => Promise<Record<string, unknown>>;

export const CLIENT_METADATA_MAX_BYTES = 64 * 1024;
export const CLIENT_METADATA_TIMEOUT_MS = 5000;

/** The one answer for every failed fetch; says what a working document looks like, not what failed. */
export const CLIENT_METADATA_UNAVAILABLE =
  'The client metadata document at the client_id URL could not be fetched. It must be served over https from a public address, answer 200 without redirects within 5 seconds, and be a JSON object of at most 64 KB.';

const unavailable = (): ServiceError => new ServiceError('bad_request', CLIENT_METADATA_UNAVAILABLE, { details: { oauth_error: 'invalid_client' } });

export function createClientMetadataFetcher(options: ClientMetadataFetchOptions): ClientMetadataFetcher {
  const timeoutMs = options.timeoutMs ?? CLIENT_METADATA_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? CLIENT_METADATA_MAX_BYTES;
  const lookup = options.lookup ?? systemLookup;
  const slots = slotsOf(options.lookupsAtOnce ?? 0, options.lookupSlots);

  async function fetchDocument(raw: string): Promise<Record<string, unknown>> {
    // One deadline for the fetch as a whole, from before the name is looked up.
    const deadline = performance.now() + timeoutMs;
    const url = new URL(raw);
    if (url.protocol !== 'https:') throw new Error('not https');
    // The URL parser has already turned IPv4 in any spelling (`127.1`, `0x7f.1`, `2130706433`)
    // into dotted decimal and IPv6 into its compressed hex form; the brackets go for the resolver.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const found = await lookupBy(lookup, slots, host, deadline).catch((err: unknown) => {
      throw new Error(`lookup failed (${(err as Error).message})`);
    });
    if (found === LATE) throw new Error(`name not resolved within ${timeoutMs} ms, or too many lookups at once`);
    if (found.length === 0) throw new Error('no addresses');
    // Every address must be fetchable: otherwise a name with one public and one internal address
    // could still lead inside.
    const refused = found.find((entry) => !isFetchableAddress(entry.address, options.allowLoopback));
    if (refused) throw new Error(`address ${refused.address} is not fetchable`);
    const pinned = found[0]!.address;

    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          // An IP literal as host: Node connects to it without a second lookup, so the connection
          // goes to the address checked above whatever the name resolves to a moment later.
          host: pinned,
          port: url.port === '' ? 443 : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: 'GET',
          headers: { host: url.host, accept: 'application/json', 'user-agent': 'Plinth OAuth' },
          // The certificate is checked against the name in the URL (SNI may not carry an IP).
          ...(isIP(host) === 0 ? { servername: host } : {}),
          ca: options.ca,
          // A fresh connection each time: none is kept for, or taken from, other requests.
          agent: false,
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`answered ${res.statusCode} (redirects are not followed)`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > maxBytes) {
              req.destroy();
              reject(new Error(`larger than ${maxBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      const timer = setTimeout(
        () => {
          req.destroy();
          reject(new Error(`no answer within ${timeoutMs} ms`));
        },
        Math.max(0, deadline - performance.now()),
      );
      req.on('close', () => clearTimeout(timer));
      req.on('error', (err) => reject(new Error(`connection to ${pinned} failed (${err.message})`)));
      req.end();
    });
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw new Error('not JSON');
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new Error('not a JSON object');
    return document as Record<string, unknown>;
  }

  return async (raw) => {
    try {
      return await fetchDocument(raw);
    } catch (err) {
      options.log?.debug({ client_id: raw, reason: (err as Error).message }, 'oauth.client_metadata_unavailable');
      throw unavailable();
    }
  };
}
