import { clientAddress, networkOf } from './client-network.js';
import type { Headers } from './respond.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** What a handler may use after its first await: copied out of uWS's short-lived request. */
export interface RequestCopy {
  /** Upper case. */
  method: string;
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Readonly<Headers>;
  /** Socket peer address as text. */
  remoteAddress: string;
}

/**
 * Copies a request out of uWS; call it before any await. Repeated `Authorization` lines combine
 * as RFC 9110 §5.3 combines any repeated field, into one comma-separated value that no scheme
 * accepts, so the request gets 401: acting on whichever came last could act on a credential other
 * than the one a proxy in front checked.
 */
export function copyRequest(res: HttpResponse, req: HttpRequest): RequestCopy {
  const headers: Headers = {};
  req.forEach((name, value) => {
    headers[name] = name === 'authorization' && name in headers ? `${headers[name]}, ${value}` : value;
  });
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    query: new URLSearchParams(req.getQuery() ?? ''),
    headers,
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
  };
}

/** The network a request counts against for per-network caps (IPv4 /24, IPv6 /64). */
export function clientNetwork(request: Pick<RequestCopy, 'headers' | 'remoteAddress'>, trustProxy: boolean): string {
  return networkOf(clientAddress(request.remoteAddress, request.headers['x-forwarded-for'] ?? '', trustProxy));
}
