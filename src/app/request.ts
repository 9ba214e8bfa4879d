import { ServiceError } from '../errors.js';
import type { Upload } from './upload.js';
import { readCookies, type RequestCopy } from '../http/index.js';

/** What a page handler may use after its first await. */
export interface AppRequest extends RequestCopy {
  cookies: Readonly<Record<string, string | undefined>>;
  /** Values captured by the route template. */
  params: string[];
  /** The raw request body (POST only), read before the handler runs; empty for uploads. */
  body: Buffer;
  /** An upload route's body, still arriving (see upload.ts). */
  upload?: Upload;
}

/** A form post's fields (`application/x-www-form-urlencoded`); empty for anything else. */
export function formOf(request: AppRequest): URLSearchParams {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return new URLSearchParams();
  return new URLSearchParams(request.body.toString('utf8'));
}

/** A JSON body as an object, or a 400 (used by the OAuth registration endpoint). */
export function jsonOf(request: AppRequest): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(request.body.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ServiceError('bad_request', 'The body must be a JSON object.');
}

/** The request's cookies, parsed once. */
export function cookiesOf(request: RequestCopy): AppRequest['cookies'] {
  return readCookies(request.headers.cookie);
}
