// Control for the deploy bench: a bare uWS app, one thread per core, answering the 2 KB page and
// receiving uploads that it discards. It shows what receiving 90 MB costs a server that does
// nothing with it. Env: CONTROL_PORT.
import { createRequire } from 'node:module';
import { isMainThread, Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const uws = createRequire(import.meta.url)('uWebSockets.js');
const port = Number(process.env.CONTROL_PORT);
const page = Buffer.alloc(2048, 'x');

uws
  .App()
  .get('/*', (res) => {
    res.writeHeader('Content-Type', 'text/html; charset=utf-8').end(page);
  })
  .post('/*', (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, last) => {
      if (last) res.writeStatus('201 Created').end('{}');
    });
  })
  .listen('127.0.0.1', port, (socket) => {
    if (!socket) process.exit(1);
  });

if (isMainThread) {
  for (let i = 1; i < availableParallelism(); i++) new Worker(fileURLToPath(import.meta.url));
}
