// The ceiling: a bare uWS app on ONE thread answering a fixed body from memory, the most one Node
// thread can serve. It sends the same headers Plinth sends for an HTML file, so only the work
// Plinth does per request (routing, lookups) separates the two.
// Usage: CEILING_PORT=9000 [CEILING_BODY=path/to/index.html] node bench/ceiling.mjs
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, sep } from 'node:path';

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
const etag = `"${createHash('sha256').update(body).digest('hex')}"`;

uws
  .App()
  .any('/*', (res) => {
    // Synchronous answer: no cork needed, uWS corks inside the handler itself.
    res
      .writeStatus('200 OK')
      .writeHeader('Content-Type', 'text/html; charset=utf-8')
      .writeHeader('Cache-Control', 'public, max-age=60')
      .writeHeader('ETag', etag)
      .writeHeader('X-Content-Type-Options', 'nosniff')
      .writeHeader('Referrer-Policy', 'strict-origin-when-cross-origin')
      .writeHeader('Vary', 'Accept-Encoding')
      .end(body);
  })
  .listen('127.0.0.1', port, (token) => {
    if (!token) {
      console.error(`ceiling: cannot listen on 127.0.0.1:${port}`);
      process.exit(1);
    }
    console.log(`ceiling: ${body.length} bytes on http://127.0.0.1:${port}`);
  });

process.on('SIGTERM', () => process.exit(0));
