import { request } from 'node:http';
import { request as requestTls } from 'node:https';

/** What the CLI gets back from the API: the status and the parsed JSON body (if it was JSON). */
export interface ApiAnswer {
  status: number;
  json: ApiBody | undefined;
  text: string;
}

/** The fields the CLI reads from answers; the rest is passed through with --json. */
export interface ApiBody extends Record<string, unknown> {
  error?: { code: string; message: string; details?: Record<string, unknown> };
  agent_message?: string;
}

export interface ApiCall {
  apiUrl: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  token?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Upload progress: bytes handed to the socket so far, of the total. */
  onUpload?: (sent: number, total: number) => void;
}

/** A failure to reach the API at all (no answer): the message says where it tried. */
export class UnreachableError extends Error {}

const CHUNK_BYTES = 64 * 1024;

/**
 * One request with Node's own client. Browsers and curl send every `*.localhost` name to loopback
 * (RFC 6761) but Node's resolver does not, so those connect to 127.0.0.1 with the Host header.
 * The body goes out in chunks, each after the socket took the last, so progress is real.
 */
export function callApi(call: ApiCall): Promise<ApiAnswer> {
  const url = new URL(call.path, call.apiUrl.endsWith('/') ? call.apiUrl : `${call.apiUrl}/`);
  const send = url.protocol === 'https:' ? requestTls : request;
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  const headers: Record<string, string> = { ...call.headers, Host: url.host, Accept: 'application/json' };
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  if (call.body) headers['Content-Length'] = String(call.body.byteLength);
  return new Promise((resolve, reject) => {
    const req = send(
      {
        protocol: url.protocol,
        host: local ? '127.0.0.1' : url.hostname,
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: call.method,
        headers,
        // One connection per call: a refused upload may leave its connection closed by the server.
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: ApiBody | undefined;
          if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
            try {
              json = JSON.parse(text) as ApiBody;
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(new UnreachableError(`could not reach the API at ${call.apiUrl} (${(err as Error).message})`)));
    const body = call.body;
    if (!body) return void req.end();
    let sent = 0;
    const writeNext = (): void => {
      while (sent < body.byteLength) {
        const chunk = body.subarray(sent, sent + CHUNK_BYTES);
        sent += chunk.byteLength;
        const more = req.write(chunk, () => call.onUpload?.(Math.min(sent, body.byteLength), body.byteLength));
        if (!more) return void req.once('drain', writeNext);
      }
      req.end();
    };
    writeNext();
  });
}
