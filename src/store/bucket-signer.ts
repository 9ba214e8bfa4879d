import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for S3 requests signed in the `Authorization` header, as AWS documents it
 * ("Authenticating Requests: Using the Authorization Header"), over node:crypto. The SDK's signer
 * does the same work behind several layers of middleware; this one is for the bucket's hot calls
 * (a deploy's PUTs and HEADs), where those layers cost more CPU than the request itself.
 */

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface RequestToSign {
  method: string;
  /** The `Host` header as sent (with a port when not the scheme's default). */
  host: string;
  /** The path as sent, already percent-encoded once (S3 does not encode it twice). */
  path: string;
  /** Headers to sign besides host and the `x-amz-*` ones added here; names in lower case. */
  headers?: Readonly<Record<string, string>>;
  /** Hex sha256 of the body, or `UNSIGNED-PAYLOAD`. */
  payloadSha256: string;
  region: string;
  credentials: SigningCredentials;
  /** When it is signed (the clock corrected by the bucket's offset). */
  at: Date;
}

/** The sha256 of an empty body, which a HEAD or GET signs. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const SERVICE = 's3';
/** A derived key is good for one day, region and secret: one per day instead of four HMACs per request. */
const keys = new Map<string, Buffer>();

/** The headers to send (every signed one, `authorization` last), names in lower case. */
export function signRequest(request: RequestToSign): Record<string, string> {
  const amzDate = request.at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    ...request.headers,
    host: request.host,
    'x-amz-content-sha256': request.payloadSha256,
    'x-amz-date': amzDate,
    ...(request.credentials.sessionToken !== undefined ? { 'x-amz-security-token': request.credentials.sessionToken } : {}),
  };
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonicalHeaders = names.map((name) => `${name}:${headers[name]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const [path, query = ''] = request.path.split('?', 2) as [string, string?];
  const canonicalRequest = [request.method, path, canonicalQuery(query), canonicalHeaders, signedHeaders, request.payloadSha256].join('\n');
  const scope = `${day}/${request.region}/${SERVICE}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const signature = createHmac('sha256', signingKey(request.credentials.secretAccessKey, day, request.region))
    .update(stringToSign)
    .digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${request.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** Percent-encodes a key for a URL path as S3 expects: every byte but unreserved ones and `/`. */
export function encodeKeyPath(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => (pair.includes('=') ? pair : `${pair}=`))
    .sort()
    .join('&');
}

function signingKey(secret: string, day: string, region: string): Buffer {
  const id = `${day}/${region}/${createHash('sha256').update(secret).digest('hex')}`;
  let key = keys.get(id);
  if (key === undefined) {
    const hmac = (k: string | Buffer, data: string): Buffer => createHmac('sha256', k).update(data).digest();
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), SERVICE), 'aws4_request');
    // Days, regions and secrets change rarely: a handful of keys at most, dropped when stale.
    if (keys.size >= 16) keys.clear();
    keys.set(id, key);
  }
  return key;
}
