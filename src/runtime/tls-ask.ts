import { createServer, type Server } from 'node:http';
import type { Logger } from '../log.js';
import type { DomainServing } from '../serve/index.js';

/**
 * The TLS terminator's question, on a listener of its own (never a public host): Caddy's
 * on-demand TLS sends `GET /?domain=<name>` before it obtains a certificate for a name it has
 * none for, and obtains one only on a 2xx. Anything else (another path or method, no name, a
 * name we do not serve) is 404, so nobody can make the terminator ask a CA for names of theirs.
 */
export interface TlsAsk {
  readonly port: number;
  close(): Promise<void>;
}

export function startTlsAsk(options: { serving: Pick<DomainServing, 'mayCertify'>; host: string; port: number; log: Logger }): Promise<TlsAsk> {
  const server: Server = createServer((req, res) => {
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
  });
  // Caddy keeps connections to the ask endpoint; none may hold a stopping process open.
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : options.port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
