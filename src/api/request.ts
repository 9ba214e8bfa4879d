import { copyRequestBasics } from '../http.js';
import type { HttpRequest, HttpResponse } from '../uws.js';

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
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    query: new URLSearchParams(req.getQuery() ?? ''),
    headers,
    remoteAddress,
    params,
  };
}
