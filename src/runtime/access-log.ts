import { clientAddress, forwardedFor, loggedPath, networkOf, type HttpRequest, type HttpResponse } from '../http/index.js';
import type { Logger } from '../log.js';
import type { ProxyTrust } from '../rules/index.js';

/**
 * `PLINTH_ACCESS_LOG=1`: one JSON line per request on stdout, through the logger. What is read of
 * a request is read before its handler runs (uWS's request dies with the handler); the line is
 * written when its answer ends (http/response-meter.ts). Never a secret: no query string, no
 * header but Host, credentials in a path cut to their prefix, the client's network rather than
 * its address.
 */
export interface AccessDetail {
  host: string;
  method: string;
  path: string;
  network: string;
}

// A host name is at most 253 characters; a longer Host header is a client's nonsense.
const MAX_HOST = 253;

/** The path as logged (http/logged-path.ts): no query, credential-shaped segments cut to their prefix. */
export const accessLogPath = loggedPath;

/** Reads what the line needs; call in the handler, before anything else touches `req`. */
export function readAccessDetail(res: HttpResponse, req: HttpRequest, trustProxy: ProxyTrust): AccessDetail {
  const address = clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), forwardedFor(req), trustProxy);
  return {
    host: req.getHeader('host').slice(0, MAX_HOST),
    method: req.getMethod().toUpperCase(),
    path: accessLogPath(req.getUrl()),
    network: networkOf(address),
  };
}

/** Writes one `http.request` line per answered request, whatever the log level. */
export function createAccessLog(log: Logger): (detail: AccessDetail, status: number, bytes: number, ms: number, aborted: boolean) => void {
  return (detail, status, bytes, ms, aborted) => {
    // One shape for every line (no spreads): this runs once per request.
    const fields: Record<string, unknown> = {
      host: detail.host,
      method: detail.method,
      path: detail.path,
      network: detail.network,
      status,
      bytes,
      ms: Math.round(ms * 1000) / 1000,
    };
    if (aborted) fields.aborted = true;
    log.info(fields, 'http.request');
  };
}

/**
 * Collects lines and writes them together, every `flushMs` or per `maxBytes`: from an HTTP thread
 * each write to stdout is a message to the main thread, which cost more than the request it
 * logged. The timer keeps a stopping thread alive until its last lines are out.
 */
export function batchedLines(write: (text: string) => void, options: { maxBytes?: number; flushMs?: number } = {}): (line: string) => void {
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const flushMs = options.flushMs ?? 100;
  let pending: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    bytes = 0;
    write(text);
  };
  return (line) => {
    timer ??= setTimeout(flush, flushMs);
    pending.push(line);
    bytes += line.length;
    if (bytes >= maxBytes) flush();
  };
}
