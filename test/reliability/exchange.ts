import { request as httpRequest } from 'node:http';

/** One HTTP exchange whose progress the harness can watch: still uploading, waiting, or done. */
export interface Exchange {
  phase: 'uploading' | 'waiting' | 'done';
  bytesSent: number;
  readonly totalBytes: number;
  outcome: Promise<ExchangeOutcome>;
}

export type ExchangeOutcome = { status: number; body: Buffer; json?: any; headers: Record<string, unknown> } | { error: string };

export interface ExchangeOptions {
  port: number;
  host: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Send the body in 256 KB pieces this many ms apart (a slower client; uploads last longer). */
  pieceGapMs?: number;
}

const PIECE_BYTES = 256 * 1024;

export function exchange(options: ExchangeOptions): Exchange {
  const body = options.body ?? Buffer.alloc(0);
  const state: Exchange = { phase: 'uploading', bytesSent: 0, totalBytes: body.byteLength, outcome: Promise.resolve({ error: 'not started' }) };
  state.outcome = new Promise<ExchangeOutcome>((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { host: options.host, connection: 'close', 'content-length': String(body.byteLength), ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          state.phase = 'done';
          const bytes = Buffer.concat(chunks);
          let json: unknown;
          if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
            try {
              json = JSON.parse(bytes.toString('utf8'));
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, body: bytes, json, headers: res.headers });
        });
        res.on('error', (err) => {
          state.phase = 'done';
          resolve({ error: err.message });
        });
      },
    );
    req.on('error', (err) => {
      state.phase = 'done';
      resolve({ error: err.message });
    });
    const gap = options.pieceGapMs ?? 0;
    const sendFrom = (offset: number): void => {
      if (state.phase === 'done') return;
      if (offset >= body.byteLength) {
        req.end(() => {
          if (state.phase === 'uploading') state.phase = 'waiting';
        });
        return;
      }
      const piece = body.subarray(offset, offset + PIECE_BYTES);
      req.write(piece, () => {
        state.bytesSent = offset + piece.byteLength;
        if (gap > 0) setTimeout(() => sendFrom(offset + piece.byteLength), gap);
        else sendFrom(offset + piece.byteLength);
      });
    };
    sendFrom(0);
  });
  return state;
}
