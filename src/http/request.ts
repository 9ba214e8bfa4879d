import type { ProxyTrust } from '../rules/index.js';
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

/** Fields whose repeated lines are joined rather than the last one kept. */
const JOINED = new Set(['authorization', 'x-forwarded-for']);

/**
 * Copies a request out of uWS; call it before any await. Repeated `Authorization` and
 * `X-Forwarded-For` lines combine as RFC 9110 §5.3 combines any repeated field, into one
 * comma-separated value. No scheme accepts such an `Authorization`, so the request gets 401:
 * acting on whichever came last could act on a credential other than the one a proxy in front
 * checked. `X-Forwarded-For` needs every line: HAProxy adds its entry as a line of its own, after
 * whatever the client sent.
 */
export function copyRequest(res: HttpResponse, req: HttpRequest): RequestCopy {
  const headers: Headers = {};
  req.forEach((name, value) => {
    headers[name] = JOINED.has(name) && name in headers ? `${headers[name]}, ${value}` : value;
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
export function clientNetwork(request: Pick<RequestCopy, 'headers' | 'remoteAddress'>, trustProxy: ProxyTrust): string {
  return networkOf(clientAddress(request.remoteAddress, request.headers['x-forwarded-for'] ?? '', trustProxy));
}
