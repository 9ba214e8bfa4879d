import { request } from 'node:http';
import { request as requestTls } from 'node:https';

/** What the CLI gets back from the API: the status and the parsed JSON body (if it was JSON). */
export interface ApiAnswer {
  status: number;
  json: ApiBody | undefined;
  text: string;
  /** The body's bytes as they came. */
  body: Buffer;
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
  /** One buffer, or the pieces of one body (sent in order, never joined). */
  body?: Buffer | readonly Buffer[];
  /** Upload progress: bytes handed to the socket so far, of the total. */
  onUpload?: (sent: number, total: number) => void;
}

/** A failure to reach the API at all (no answer): the message says where it tried. */
export class UnreachableError extends Error {
  constructor(
    message: string,
    /** It failed while the body was going out (the server may have refused it and closed). */
    readonly duringUpload = false,
  ) {
    super(message);
  }
}

// Large enough that a 300 MB upload is a few hundred writes, small enough for a smooth progress bar.
const CHUNK_BYTES = 1024 * 1024;

/** How long a refused upload's request is given to repeat the server's answer without its body. */
const PROBE_MS = 5000;

/**
 * One request with Node's own client. Browsers and curl send every `*.localhost` name to loopback
 * (RFC 6761) but Node's resolver does not, so those connect to 127.0.0.1 with the Host header.
 * The body goes out in chunks, each after the socket took the last, so progress is real.
 *
 * A server may refuse an upload before reading it (a declared length over its limit), answer and
 * close while the body is still going out: the write then fails (EPIPE, ECONNRESET), and the
 * answer, already received, may be dropped with the socket. So a failed write is never reported
 * as such while an answer can be had: the answer is used if it arrived, and otherwise the same
 * request is made again without its body, which a refusal decided on the headers answers at once.
 */
export async function callApi(call: ApiCall): Promise<ApiAnswer> {
  try {
    return await exchange(call, call.body);
  } catch (err) {
    if (!(err instanceof UnreachableError) || !call.body || !err.duringUpload) throw err;
    const answer = await exchange(call, undefined, bodyLength(call.body)).catch(() => undefined);
    if (answer) return answer;
    throw err;
  }
}

const bodyLength = (body: Buffer | readonly Buffer[]): number =>
  Buffer.isBuffer(body) ? body.byteLength : body.reduce((sum, piece) => sum + piece.byteLength, 0);

function exchange(call: ApiCall, body: Buffer | readonly Buffer[] | undefined, declaredBytes?: number): Promise<ApiAnswer> {
  const url = new URL(call.path, call.apiUrl.endsWith('/') ? call.apiUrl : `${call.apiUrl}/`);
  const send = url.protocol === 'https:' ? requestTls : request;
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  const headers: Record<string, string> = { Accept: 'application/json', ...call.headers, Host: url.host };
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  const length = body === undefined ? declaredBytes : bodyLength(body);
  if (length !== undefined) headers['Content-Length'] = String(length);
  return new Promise((resolve, reject) => {
    let answered = false;
    let uploading = false;
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
        answered = true;
        clearTimeout(probeTimer);
        const chunks: Buffer[] = [];
        const finish = (): void => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: ApiBody | undefined;
          if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
            try {
              json = JSON.parse(text) as ApiBody;
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, json, text, body: bytes });
        };
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', finish);
        // The server closed the connection under an upload it refused: what arrived is its answer.
        res.on('error', finish);
        res.on('aborted', finish);
      },
    );
    // A request sent without its body (see `callApi`) waits only briefly for an early answer.
    const probeTimer = declaredBytes !== undefined && body === undefined ? setTimeout(() => req.destroy(new Error('no early answer')), PROBE_MS) : undefined;
    req.on('error', (err) => {
      clearTimeout(probeTimer);
      if (answered) return;
      reject(new UnreachableError(`could not reach the API at ${call.apiUrl} (${(err as Error).message})`, uploading));
    });
    if (!body) {
      if (declaredBytes === undefined) req.end();
      else req.flushHeaders();
      return;
    }
    uploading = true;
    const pieces = Buffer.isBuffer(body) ? [body] : body;
    const total = length!;
    let sent = 0;
    let piece = 0;
    let offset = 0;
    const writeNext = (): void => {
      while (piece < pieces.length) {
        // Answered already (a refusal): the rest of the body is not wanted.
        if (answered) return;
        const current = pieces[piece]!;
        const chunk = current.subarray(offset, offset + CHUNK_BYTES);
        offset += chunk.byteLength;
        if (offset >= current.byteLength) {
          piece++;
          offset = 0;
        }
        sent += chunk.byteLength;
        const upTo = sent;
        const more = req.write(chunk, () => call.onUpload?.(upTo, total));
        if (!more) return void req.once('drain', writeNext);
      }
      req.end();
    };
    writeNext();
  });
}
