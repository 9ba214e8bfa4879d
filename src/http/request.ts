import type { ProxyTrust } from '../rules/index.js';
import { clientAddress, forwardedFor, networkOf } from './client-network.js';
import { headerNameText } from './header-names.js';
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

/** What the site host's serving path reads of a request: uWS's, or a copy of it (`copyServedRequest`). */
export type ServedRequest = Pick<HttpRequest, 'getMethod' | 'getUrl' | 'getQuery' | 'getHeader' | 'forEach'>;

/**
 * A served request kept past its handler's return (uWS's is gone then; call this before any
 * await): its method, URL, query, the `headers` named (lower case) and every `X-Forwarded-For`
 * line, joined, as `forwardedFor` reads them from uWS's. Other headers read as absent.
 */
export function copyServedRequest(req: ServedRequest, headers: readonly string[]): ServedRequest {
  const method = req.getMethod();
  const url = req.getUrl();
  const query = req.getQuery();
  const kept: Record<string, string> = {};
  for (const name of headers) kept[name] = req.getHeader(name);
  kept['x-forwarded-for'] = forwardedFor(req);
  return {
    getMethod: () => method,
    getUrl: () => url,
    getQuery: () => query,
    getHeader: (name) => kept[headerNameText(name)] ?? '',
    forEach: (each) => {
      for (const [name, value] of Object.entries(kept)) if (value !== '') each(name, value);
    },
  };
}

/** The network a request counts against for per-network caps (IPv4 /24, IPv6 /64). */
export function clientNetwork(request: Pick<RequestCopy, 'headers' | 'remoteAddress'>, trustProxy: ProxyTrust): string {
  return networkOf(clientAddress(request.remoteAddress, request.headers['x-forwarded-for'] ?? '', trustProxy));
}
