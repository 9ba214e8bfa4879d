import { Agent, request as httpRequest, type ClientRequest } from 'node:http';

export interface SlowUpload {
  req: ClientRequest;
  /** Sends more of the body. */
  write(bytes: Buffer | string): void;
  /** Sends the rest and ends the request. */
  end(bytes?: Buffer | string): void;
  /** The answer, or the error that ended the exchange (reset, hang-up). */
  outcome: Promise<{ status: number; body: string; headers: Record<string, unknown> } | { error: string }>;
}

/** A request whose body the test sends piece by piece, to 127.0.0.1 with an explicit Host. */
export function slowUpload(options: {
  port: number;
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  contentLength: number;
  agent?: Agent;
}): SlowUpload {
  const req = httpRequest({
    host: '127.0.0.1',
    port: options.port,
    method: options.method ?? 'POST',
    path: options.path,
    headers: { host: options.host, 'content-length': String(options.contentLength), ...options.headers },
    agent: options.agent ?? false,
  });
  const outcome = new Promise<{ status: number; body: string; headers: Record<string, unknown> } | { error: string }>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
  });
  return {
    req,
    write: (bytes) => void req.write(bytes),
    end: (bytes) => void req.end(bytes),
    outcome,
  };
}

/** Splits a body in two at `at` bytes. */
export function splitBody(body: Buffer, at: number): [Buffer, Buffer] {
  return [body.subarray(0, at), body.subarray(at)];
}
