import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { Readiness } from './readiness.js';

/**
 * The operator listener, `PLINTH_OPS_HOST`:`PLINTH_OPS_PORT`, on the main thread and never on a
 * public host: `GET /healthz` (the process runs), `GET /readyz` (this node can serve, else 503
 * with the reason), `GET /metrics` (Prometheus text), and everything else to the TLS
 * terminator's question (`GET /?domain=<name>`, tls-ask.ts), which answers 404 to what it does
 * not know.
 */
export interface OpsListener {
  readonly port: number;
  close(): Promise<void>;
}

export interface OpsListenerOptions {
  host: string;
  port: number;
  log: Logger;
  /** The TLS ask, and the answer to any path not listed above. */
  ask: RequestListener;
  readiness?: () => Promise<Readiness>;
  /** undefined: metrics are off, and `/metrics` answers 404. */
  metrics?: () => Promise<{ contentType: string; text: string } | undefined>;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

export function startOpsListener(options: OpsListenerOptions): Promise<OpsListener> {
  const send = (res: ServerResponse, status: number, contentType: string, body: string, head: boolean): void => {
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), ...NO_STORE });
    res.end(head ? undefined : body);
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const head = req.method === 'HEAD';
    const { readiness, metrics } = options;
    if (req.method !== 'GET' && !head) {
      if (path === '/healthz' || path === '/readyz' || path === '/metrics') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8', ...NO_STORE });
        return void res.end(`${path} is read with GET or HEAD.\n`);
      }
      return options.ask(req, res);
    }
    if (path === '/healthz') return send(res, 200, 'text/plain; charset=utf-8', 'ok\n', head);
    if (path === '/readyz' && readiness) {
      return void readiness().then(
        (answer) => send(res, answer.ready ? 200 : 503, 'application/json; charset=utf-8', `${JSON.stringify(answer)}\n`, head),
        (err: unknown) => {
          options.log.error({ err }, 'ops.readiness_failed');
          send(res, 503, 'application/json; charset=utf-8', `${JSON.stringify({ ready: false, reason: 'readiness could not be judged' })}\n`, head);
        },
      );
    }
    if (path === '/metrics' && metrics) {
      return void metrics().then(
        (exposition) =>
          exposition
            ? send(res, 200, exposition.contentType, exposition.text, head)
            : send(res, 404, 'text/plain; charset=utf-8', 'Metrics are off (PLINTH_METRICS=0).\n', head),
        (err: unknown) => {
          options.log.error({ err }, 'ops.metrics_failed');
          send(res, 500, 'text/plain; charset=utf-8', 'Metrics could not be gathered.\n', head);
        },
      );
    }
    return options.ask(req, res);
  });
  // Load balancers and Caddy keep connections open; none may hold a stopping process open.
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
