import { lookup } from 'node:dns/promises';
import { request } from 'node:https';
import { ServiceError } from '../errors.js';
import { isFetchableAddress } from './oauth-rules.js';

/**
 * Fetches an OAuth Client ID Metadata Document (the `client_id` is an https URL whose JSON names
 * the client and its redirect URIs). The URL comes from whoever starts an authorization, so the
 * fetch is fenced: https only, no redirects, a few seconds, a small body, and only to public
 * addresses — the address is checked after resolving and the connection goes to that checked
 * address, so a name cannot resolve to a public address for the check and a private one for the
 * connection.
 */

export interface ClientMetadataFetchOptions {
  /** Loopback addresses are fetchable (the server itself runs on localhost). */
  allowLoopback: boolean;
  timeoutMs?: number;
  maxBytes?: number;
  /** Extra trusted certificate authorities (tests with a local https server). */
  ca?: string | Buffer;
}

export type ClientMetadataFetcher = (url: string) => Promise<Record<string, unknown>>;

export const CLIENT_METADATA_MAX_BYTES = 64 * 1024;
export const CLIENT_METADATA_TIMEOUT_MS = 5000;

const refused = (message: string): ServiceError => new ServiceError('bad_request', `The client metadata document could not be used: ${message}`, { details: { oauth_error: 'invalid_client' } });

export function createClientMetadataFetcher(options: ClientMetadataFetchOptions): ClientMetadataFetcher {
  const timeoutMs = options.timeoutMs ?? CLIENT_METADATA_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? CLIENT_METADATA_MAX_BYTES;

  return async (raw) => {
    const url = new URL(raw);
    if (url.protocol !== 'https:') throw refused('it must be served over https.');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const found = await lookup(host, { all: true }).catch(() => []);
    if (found.length === 0) throw refused(`${url.hostname} does not resolve.`);
    // Every address must be public: otherwise a name with one public and one private address
    // could still lead inside.
    if (!found.every((entry) => isFetchableAddress(entry.address, options.allowLoopback))) throw refused(`${url.hostname} is not a public address.`);
    const pinned = found[0]!;

    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json', 'user-agent': 'Plinth OAuth' },
          timeout: timeoutMs,
          ca: options.ca,
          // The connection goes to the address checked above, whatever a second lookup would say.
          lookup: ((_host: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
            if (opts.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
            else callback(null, pinned.address, pinned.family);
          }) as never,
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(refused(`${raw} answered ${res.statusCode} (redirects are not followed).`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > maxBytes) {
              req.destroy();
              reject(refused(`it is larger than ${maxBytes} bytes.`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        reject(refused(`${raw} did not answer within ${timeoutMs} ms.`));
      }, timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('error', (err) => reject(err instanceof ServiceError ? err : refused(`${raw} could not be fetched (${err.message}).`)));
      req.end();
    });
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw refused('it is not JSON.');
    }
    if (document === null || typeof document !== 'object' || Array.isArray(document)) throw refused('it is not a JSON object.');
    return document as Record<string, unknown>;
  };
}
