import { copyRequestBasics } from '../http/index.js';
import type { HttpRequest, HttpResponse } from '../http/index.js';

/** What an API handler may use after its first await: copied out of uWS's short-lived request. */
export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: Readonly<Record<string, string>>;
  /** Socket peer address as text. */
  remoteAddress: string;
  /** Values captured by the route pattern. */
  params: readonly string[];
}

export function readRequest(res: HttpResponse, req: HttpRequest, params: readonly string[]): ApiRequest {
  const { headers, remoteAddress } = copyRequestBasics(res, req);
  const authorization = repeatedAuthorization(req);
  if (authorization !== undefined) headers.authorization = authorization;
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    query: new URLSearchParams(req.getQuery() ?? ''),
    headers,
    remoteAddress,
    params,
  };
}

/**
 * Repeated `Authorization` lines, combined as RFC 9110 §5.3 combines any repeated field: into
 * one comma-separated value, which no scheme accepts, so the request gets 401. Keeping only one
 * of them would let the credential we act on differ from the one a proxy in front checked.
 */
function repeatedAuthorization(req: HttpRequest): string | undefined {
  const values: string[] = [];
  req.forEach((name, value) => {
    if (name === 'authorization') values.push(value);
  });
  return values.length > 1 ? values.join(', ') : undefined;
}
