import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

/**
 * A small https server on loopback that plays the app behind a `client_id` URL: it serves client
 * metadata documents and a few broken answers, and counts every TCP connection it accepts, so a
 * test can tell "refused before connecting" from "connected, then refused". Its certificate is
 * made for the test and names localhost, 127.0.0.1 and ::1.
 */

export interface MetadataServer {
  port: number;
  cert: Buffer;
  /** TCP connections accepted so far, on every address the server listens on. */
  connections(): number;
  /** What each request said it was for: Host header, TLS server name (SNI) and the local address. */
  requests: { host: string; servername: string | false; localAddress: string; path: string }[];
  close(): Promise<void>;
}

export const METADATA_REDIRECT_URI = 'http://127.0.0.1:7777/callback';

/** Listens on each of `addresses` (the same port on all of them; the first picks it). */
export async function startMetadataServer(dir: string, addresses: readonly string[] = ['127.0.0.1']): Promise<MetadataServer> {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(join(dir, 'cert.pem'));
  const key = readFileSync(join(dir, 'key.pem'));
  let connections = 0;
  const requests: MetadataServer['requests'] = [];
  const servers: Server[] = [];

  const serve: Parameters<typeof createServer>[1] = (req, res) => {
    const path = req.url ?? '/';
    const socket = req.socket as TLSSocket;
    requests.push({ host: req.headers.host ?? '', servername: socket.servername ?? false, localAddress: socket.localAddress ?? '', path });
    const json = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    // Whatever spelling of the address reached it, the document names the URL it was asked for.
    const self = `https://${req.headers.host}${path}`;
    if (path === '/client.json')
      json({ client_id: self, client_name: 'Metadata App', redirect_uris: [METADATA_REDIRECT_URI], token_endpoint_auth_method: 'none' });
    else if (path === '/other-id.json') json({ client_id: 'https://elsewhere.example/client.json', redirect_uris: [METADATA_REDIRECT_URI] });
    else if (path === '/array.json') json([self]);
    else if (path === '/big.json') json({ client_id: self, padding: 'x'.repeat(100 * 1024) });
    else if (path === '/redirect.json') {
      res.writeHead(302, { location: '/client.json' });
      res.end();
    } else if (path === '/missing.json') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
    } else if (path === '/slow.json') {
      // Never answers.
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<h1>not json</h1>');
    }
  };

  let port = 0;
  for (const address of addresses) {
    const server = createServer({ key, cert }, serve);
    server.on('connection', () => {
      connections++;
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    port = (server.address() as { port: number }).port;
    servers.push(server);
  }

  return {
    port,
    cert,
    connections: () => connections,
    requests,
    async close() {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}
