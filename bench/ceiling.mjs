// The ceiling: a bare uWS app on ONE thread answering fixed bodies from memory, the most one Node
// thread can serve. It sends the same headers Plinth sends for the same file, so only the work
// Plinth does per request (routing, lookups, the If-None-Match check) separates the two.
//
// Every path not named below gets CEILING_BODY (2 KB by default) as HTML, so the ceiling also
// bounds rotations over many pages or hosts. CEILING_ROUTES (JSON) adds exact paths, each matched
// by uWS's own router, so a route costs the ceiling no JavaScript lookup:
//   [{ "path": "/app.js", "file": "…/app.js", "headers": [["Content-Type", "…"], …] },
//    { "path": "/not-modified", "status": "304 Not Modified", "file": "…/index.html", "headers": […] }]
// The ETag is the file's sha256, as Plinth's. A route with a status other than 200 sends no body:
// "304 Not Modified" for every request, without reading If-None-Match.
// CEILING_PAGES_DIR makes it the ceiling of a rotation over distinct pages: every `.html` file under
// that folder is served as HTML at its own path (other files are left out: bench:serve points it at
// its main site, which also holds media and `.gz` files), each with its own bytes and header block, found by one
// Map lookup of the URL (what any server must do to tell 1,000 pages apart); other paths still
// get CEILING_BODY. Without it, every path gets the same bytes from one buffer, which bounds a
// rotation from above but skips the lookup and shares one body in the CPU's caches.
// CEILING_READS=1 makes every answer first read what a Plinth answer depends on and a bare server
// does not: the Host header, the URL, Accept-Encoding, If-None-Match and User-Agent (names as
// bytes, as Plinth asks), so the distance to Plinth is its own work beyond those reads.
// CEILING_ARRAY_BUFFERS=1 hands uWS every name, header block and body as an ArrayBuffer of exactly
// its bytes, as Plinth does since its tenth pass at the ceiling (src/http/header-names.ts): uWS reads
// that with fewer V8 calls than a Buffer, and a string it converts to UTF-8 on every call.
// Usage: CEILING_PORT=9000 [CEILING_BODY=path/to/index.html] [CEILING_ROUTES=[…]] [CEILING_PAGES_DIR=…] node bench/ceiling.mjs
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';

const require = createRequire(import.meta.url);
const uws = require('uWebSockets.js');
// The package silently falls back to a slow pure-JS server; a ceiling measured on that is meaningless.
const pkgDir = dirname(require.resolve('uWebSockets.js/package.json'));
if (!Object.keys(require.cache).some((f) => f.startsWith(pkgDir + sep) && f.endsWith('.node'))) {
  console.error('ceiling: uWebSockets.js native binary not loaded');
  process.exit(1);
}

const port = Number(process.env.CEILING_PORT ?? 9000);
const body = process.env.CEILING_BODY ? readFileSync(process.env.CEILING_BODY) : Buffer.alloc(2048, 'x');
const etagOf = (bytes) => `"${createHash('sha256').update(bytes).digest('hex')}"`;
const htmlHeaders = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Cache-Control', 'public, max-age=60'],
  ['ETag', etagOf(body)],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'strict-origin-when-cross-origin'],
  ['Vary', 'Accept-Encoding'],
];

// Past this size a body goes out as Plinth sends it (src/http.ts endFromMemory): tryEnd, and
// the rest from the socket's writable event, so uWS never copies the unsent part into its own
// buffer. Up to it, one end(), as Plinth does.
const END_COPY_MAX_BYTES = 64 * 1024;

/** Sends `body` without uWS copying what the socket did not take at once. */
function sendWithoutCopy(res, body) {
  const total = body.byteLength;
  const start = res.getWriteOffset();
  let done = false;
  const from = (sent) => {
    const [ok, finished] = res.tryEnd(body.subarray(sent), total);
    done = finished;
    return ok;
  };
  from(0);
  if (done) return;
  res.onAborted(() => {
    done = true;
  });
  res.onWritable((offset) => (done ? true : from(offset - start)));
}

/**
 * A handler for fixed bytes (no cork needed: it answers inside the handler, which uWS corks).
 * All headers go out in one native call, as one latin1 block after the first header's name: the
 * way Plinth writes its prepared headers (src/serve/site-server.ts), so the ceiling is never
 * slower than Plinth's own fast path at the one thing both must do.
 */
const arrayBuffers = process.env.CEILING_ARRAY_BUFFERS === '1';
/** An argument for uWS: the bytes as they are, or as an ArrayBuffer of exactly them (CEILING_ARRAY_BUFFERS). */
const arg = (bytes) => (arrayBuffers ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) : bytes);

function fixed(status, headers, body) {
  const [[name, value], ...rest] = headers;
  const first = arrayBuffers ? arg(Buffer.from(name)) : name;
  const block = arg(Buffer.from([value, ...rest.map(([n, v]) => `${n}: ${v}`)].join('\r\n'), 'latin1'));
  const bytes = body && body.byteLength <= END_COPY_MAX_BYTES ? arg(body) : body;
  const ok = status === '200 OK';
  return (res) => {
    if (!ok) res.writeStatus(status);
    res.writeHeader(first, block);
    if (!bytes) res.endWithoutBody();
    else if (bytes.byteLength <= END_COPY_MAX_BYTES) res.end(bytes);
    else sendWithoutCopy(res, bytes);
  };
}

const app = uws.App();
for (const route of JSON.parse(process.env.CEILING_ROUTES ?? '[]')) {
  const bytes = route.file ? readFileSync(route.file) : null;
  const status = route.status ?? '200 OK';
  const headers = bytes ? [...route.headers, ['ETag', etagOf(bytes)]] : route.headers;
  app.get(route.path, fixed(status, headers, status === '200 OK' ? bytes : null));
}
const fallback = fixed('200 OK', htmlHeaders, body);
const pages = new Map();
if (process.env.CEILING_PAGES_DIR) {
  const root = process.env.CEILING_PAGES_DIR;
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.html')) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const bytes = readFileSync(file);
    const headers = htmlHeaders.map(([name, value]) => [name, name === 'ETag' ? etagOf(bytes) : value]);
    pages.set(
      `/${file
        .slice(root.length + 1)
        .split(sep)
        .join('/')}`,
      fixed('200 OK', headers, bytes),
    );
  }
}
const names = ['host', 'accept-encoding', 'if-none-match', 'user-agent'].map((name) => arg(Buffer.from(name)));
let read = 0;
const reading = (res, req) => {
  read += req.getHeader(names[0]).length + req.getUrl().length + req.getHeader(names[1]).length;
  read += req.getHeader(names[2]).length + req.getHeader(names[3]).length;
  fallback(res);
};
const handler = pages.size > 0 ? (res, req) => (pages.get(req.getUrl()) ?? fallback)(res) : process.env.CEILING_READS === '1' ? reading : fallback;
app.any('/*', handler).listen('127.0.0.1', port, (token) => {
  if (!token) {
    console.error(`ceiling: cannot listen on 127.0.0.1:${port}`);
    process.exit(1);
  }
  console.log(`ceiling: ${body.length} bytes${pages.size ? ` and ${pages.size} pages` : ''} on http://127.0.0.1:${port}`);
});

process.on('SIGTERM', () => process.exit(read < 0 ? 1 : 0));
