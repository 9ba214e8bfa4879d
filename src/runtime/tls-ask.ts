import type { RequestListener } from 'node:http';
import type { Logger } from '../log.js';
import type { DomainServing } from '../serve/index.js';
import { startOpsListener } from './ops-listener.js';

/**
 * The TLS terminator's question, on the operator listener (never a public host): Caddy's
 * on-demand TLS sends `GET /?domain=<name>` before it obtains a certificate for a name it has
 * none for, and obtains one only on a 2xx. Anything else (another path or method, no name, a
 * name we do not serve) is 404, so nobody can make the terminator ask a CA for names of theirs.
 */
export interface TlsAsk {
  readonly port: number;
  close(): Promise<void>;
}

export interface TlsAskOptions {
  serving: Pick<DomainServing, 'mayCertify'>;
  log: Logger;
}

/** The ask's answer to one request; the operator listener (ops-listener.ts) serves it at `/`. */
export function answerTlsAsk(options: TlsAskOptions): RequestListener {
  return (req, res) => {
    let allowed = false;
    try {
      const url = new URL(req.url ?? '/', 'http://ask.invalid');
      const name = url.searchParams.get('domain');
      allowed = req.method === 'GET' && url.pathname === '/' && name !== null && options.serving.mayCertify(name);
      options.log.debug({ domain: name?.slice(0, 253), allowed }, 'tls_ask.answered');
    } catch (err) {
      options.log.error({ err }, 'tls_ask.failed');
    }
    res.writeHead(allowed ? 200 : 404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(allowed ? 'ok\n' : 'no\n');
  };
}

/** The ask alone on a listener of its own (the operator listener without health or metrics). */
export function startTlsAsk(options: TlsAskOptions & { host: string; port: number }): Promise<TlsAsk> {
  return startOpsListener({ host: options.host, port: options.port, log: options.log, ask: answerTlsAsk(options) });
}
