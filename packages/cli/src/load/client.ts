import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent } from 'undici';

/**
 * The HTTP side shared by the generator threads, prepare and the deploys: one undici Agent with
 * keep-alive connections, which resolves `*.localhost` to loopback as browsers and curl do (Node's
 * resolver does not), and the addresses `--connect` and `--compare` take.
 */
type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function localhostLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const name = hostname.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  lookup(hostname, options, callback as (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family: number) => void);
}

export function createAgent(connections: number, timeoutMs = 30_000): Agent {
  return new Agent({
    connections,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // Servers close idle connections (Plinth after 10 s, docs/operating.md "Slow and hostile
    // clients"); a request sent on one as it closes fails. Let them go well before that.
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 4_000,
    connect: { lookup: localhostLookup as never },
  });
}

export interface Address {
  host: string;
  port: number;
  /** `http://host:port`, what the requests are sent to. */
  origin: string;
  /** As given, e.g. `127.0.0.1:8080`: the target's name in reports. */
  label: string;
}

/** `HOST:PORT` (IPv6 in brackets: `[::1]:8080`), as curl's --connect-to takes it. */
export function parseAddress(value: string): Address {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/]+):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535) throw new Error(`"${value}" is not HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080)`);
  return { host: match[1]!, port, origin: `http://${match[1]}:${port}`, label: value.trim() };
}

/** The bytes of an answer as the file holds them, undoing its Content-Encoding. */
export function decodeBody(body: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return body;
    case 'br':
      return brotliDecompressSync(body);
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    default:
      throw new Error(`unknown Content-Encoding ${encoding}`);
  }
}

export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
