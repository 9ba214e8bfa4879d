// Deploys one archive back to back until stopped, printing each status and time (for the
// serving-during-deploy measurement of bench/deploy.mjs). Args: <port> <api token> <archive>.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [port, token, archive] = process.argv.slice(2);
const body = readFileSync(archive);
let stopping = false;
process.on('SIGTERM', () => (stopping = true));

while (!stopping) {
  const started = Date.now();
  const status = await new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: Number(port), method: 'POST', path: '/v1/deploy', agent: false,
        headers: { host: 'api.localhost', authorization: `Bearer ${token}`, 'content-length': body.byteLength } },
      (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); },
    );
    req.on('error', reject);
    req.end(body);
  });
  process.stdout.write(`${status} ${Date.now() - started} ms\n`);
}
