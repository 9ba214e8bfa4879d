// Deploys one archive back to back until stopped (or `count` times), printing each status and
// time, for the serving-during-deploy measurement of bench/deploy.mjs.
// Args: <port> <api token or "none"> <archive> [count].
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [port, token, archive, count] = process.argv.slice(2);
let left = count === undefined ? Infinity : Number(count);
const body = readFileSync(archive);
let stopping = false;
process.on('SIGTERM', () => (stopping = true));

while (!stopping && left-- > 0) {
  const started = Date.now();
  const status = await new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/v1/deploy',
        agent: false,
        headers: { host: 'api.localhost', ...(token === 'none' ? {} : { authorization: `Bearer ${token}` }), 'content-length': body.byteLength },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  process.stdout.write(`${status} ${Date.now() - started} ms\n`);
}
