import { request as httpRequest } from 'node:http';

/**
 * A `fetch` for clients under test that reach our `*.localhost` hosts: Node does not resolve those
 * names (browsers and curl do), so the connection goes to 127.0.0.1 with the URL's host as the
 * Host header. Everything else (method, headers, body, status) passes through as it is.
 */
export const loopbackFetch: typeof fetch = async (input, init) => {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : String(input));
  if (url.protocol !== 'http:') throw new TypeError(`loopbackFetch only speaks http (asked for ${url.href})`);
  const headers = new Headers(init?.headers ?? request?.headers);
  let body: Buffer | undefined;
  const raw = init?.body ?? (request ? await request.arrayBuffer() : undefined);
  if (typeof raw === 'string') body = Buffer.from(raw);
  else if (raw instanceof URLSearchParams) {
    body = Buffer.from(raw.toString());
    if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
  } else if (raw instanceof ArrayBuffer) body = Buffer.from(raw);
  else if (ArrayBuffer.isView(raw)) body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  else if (raw !== undefined && raw !== null) throw new TypeError('loopbackFetch: unsupported body type');

  const outgoing: Record<string, string> = { host: url.host, connection: 'close' };
  headers.forEach((value, name) => {
    outgoing[name] = value;
  });
  if (body) outgoing['content-length'] = String(body.byteLength);
  return new Promise<Response>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(url.port || 80),
        method: init?.method ?? request?.method ?? 'GET',
        path: `${url.pathname}${url.search}`,
        headers: outgoing,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one);
          }
          const status = res.statusCode ?? 0;
          const payload = status === 204 || status === 304 || status === 101 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: responseHeaders }));
        });
        res.on('error', reject);
      },
    );
    const signal = init?.signal ?? undefined;
    const abort = (): void => {
      req.destroy(new Error('aborted'));
    };
    signal?.addEventListener('abort', abort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', abort));
    req.on('error', reject);
    req.end(body);
  });
};
