import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface TestResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface TestRequest {
  port: number;
  host: string;
  /** Where to connect: 127.0.0.1 unless another loopback address (a node of its own) is named. */
  address?: string;
  path?: string;
  method?: string;
  /** A list sends the field as that many lines, in order. */
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/**
 * One request to 127.0.0.1 with an explicit Host header (`*.localhost` names are not resolved by
 * Node, and `fetch` would drop the header). No keep-alive, so nothing lingers after a test.
 */
export function request(options: TestRequest): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: options.address ?? '127.0.0.1',
        port: options.port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { host: options.host, connection: 'close', ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface ApiCall {
  method?: string;
  path: string;
  token?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** A body sent as it is (an archive, or text that is not JSON). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface ApiResponse extends TestResponse {
  /** The parsed body, or undefined for an answer that is not JSON. */
  json: any;
}

/** One call to the API host of a server at `port` (in-process or a spawned `dist/main.js`). */
export async function callApi(port: number, call: ApiCall): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  let body = call.raw;
  if (call.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.body);
  }
  const res = await request({ port, host: 'api.localhost', method: call.method ?? 'GET', path: call.path, headers, body });
  const json: unknown = String(res.headers['content-type'] ?? '').startsWith('application/json') ? JSON.parse(res.text) : undefined;
  return { ...res, json };
}

/**
 * A request that declares a larger body than it sends: `sent` bytes, then nothing. For refusals
 * the server must give before reading a body it will not take (the declared length is too big).
 */
export function declaredButUnsent(options: {
  port: number;
  host: string;
  path: string;
  headers: Record<string, string>;
  declaredBytes: number;
  sent?: Buffer;
}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        method: 'POST',
        path: options.path,
        headers: { host: options.host, ...options.headers, 'content-length': String(options.declaredBytes) },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.write(options.sent ?? Buffer.alloc(1024));
  });
}
