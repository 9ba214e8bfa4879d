// Plinth processes for the benches that drive several of them over HTTP: start `node dist/main.js`
// on a free loopback port, make a Builder account with an API token, and a keep-alive client that
// times each request.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, LOOPBACK, startChild } from './proc.mjs';

export const API_HOST = 'api.localhost';
export const SITE_DOMAIN = 'sites.localhost';

/**
 * Starts `node dist/main.js` with `env` (beside the port, listen address and data directory) and
 * resolves once its API answers; `nodeArgs` go before the script (e.g. `--cpu-prof`, which
 * NODE_OPTIONS does not take). Resolves { port, child, dataDir, logPath }; stop it with proc.mjs
 * `stopChild(node.child)`.
 */
export async function startPlinthNode({ root, dataDir, env = {}, logPath, nodeArgs = [], timeoutMs = 60_000 }) {
  const port = await freePort();
  const child = startChild(process.execPath, [...nodeArgs, join(root, 'dist/main.js')], {
    env: { PLINTH_PORT: String(port), PLINTH_LISTEN_HOST: LOOPBACK, PLINTH_DATA_DIR: dataDir, ...env },
    cwd: root,
    logPath,
  });
  const client = createClient(port);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (child.exitInfo) throw new Error(`Plinth exited before it was ready (${JSON.stringify(child.exitInfo)}); see ${logPath}`);
      // GET on the deploy endpoint answers 405 once the API is up.
      const res = await client.request({ host: API_HOST, path: '/v1/deploy' }).catch(() => undefined);
      if (res?.status === 405) break;
      if (Date.now() > deadline) throw new Error(`Plinth did not start within ${timeoutMs} ms; see ${logPath}`);
      await sleep(100);
    }
  } finally {
    client.close();
  }
  return { port, child, dataDir, logPath };
}

/**
 * A Builder account and an API token for it, made with `plinth admin` against the data directory
 * of a server that is running (the way an operator does it); returns the token.
 */
export function adminBuilderToken(root, dataDir, email = 'bench@example.com') {
  const plinth = join(root, 'dist', 'cli', 'plinth.js');
  const env = { ...process.env, PLINTH_DATA_DIR: dataDir };
  execFileSync(process.execPath, [plinth, 'admin', 'account', 'create', '--email', email, '--plan', 'builder'], { env, stdio: 'ignore' });
  return execFileSync(process.execPath, [plinth, 'admin', 'token', 'create', '--email', email], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
}

/** A Builder account with an API token, made through a store the caller holds open; resolves the token. */
export async function addBuilderToken(root, store, email = 'bench@example.com') {
  const { hashToken } = await import(pathToFileURL(join(root, 'dist/store/index.js')).href);
  const account = await store.createAccount({ email, plan: 'builder' });
  const token = `pl_${randomBytes(24).toString('base64url')}`;
  await store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name: 'bench' });
  return token;
}

/**
 * Requests to one port over keep-alive connections, with an explicit Host header (Node does not
 * resolve *.localhost). `request` resolves { status, headers, body, ms, at }: `ms` from the call
 * to the last byte of the body, `at` the performance.now() at which the status line arrived.
 */
export function createClient(port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  return {
    port,
    request({ method = 'GET', host, path = '/', headers = {}, body }, retries = 0) {
      return new Promise((resolve, reject) => {
        const started = performance.now();
        const req = http.request(
          {
            host: LOOPBACK,
            port,
            method,
            path,
            agent,
            headers: { host, ...(body !== undefined ? { 'content-length': body.byteLength } : {}), ...headers },
          },
          (res) => {
            answered = true;
            const at = performance.now();
            const chunks = [];
            res.on('data', (chunk) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started, at }));
            res.on('error', reject);
          },
        );
        req.setTimeout(120_000, () => req.destroy(new Error('request timed out')));
        // A server that refuses a body answers before it has read it all and closes: the write
        // then fails (EPIPE, ECONNRESET), and the answer is what matters.
        let answered = false;
        req.on('error', (err) => {
          if (answered) return;
          // A kept-alive connection the server closed while this process was busy (building an
          // archive) fails on its first write: the request never reached the server, so send it
          // again on a new connection, as Node's documentation advises.
          if (req.reusedSocket && retries < 8) return resolve(this.request({ method, host, path, headers, body }, retries + 1));
          setTimeout(() => answered || reject(err), 200);
        });
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** `POST /v1/deploy` with a JSON or archive body and an API token; throws unless 201. */
export async function deploy(client, token, body, { json = false, query = '', headers = {} } = {}) {
  const res = await client.request({
    method: 'POST',
    host: API_HOST,
    path: `/v1/deploy${query}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': json ? 'application/json' : 'application/gzip', ...headers },
    body: json ? Buffer.from(JSON.stringify(body)) : body,
  });
  if (res.status !== 201) throw new Error(`deploy on port ${client.port} answered ${res.status}: ${res.body.toString().slice(0, 500)}`);
  const answer = JSON.parse(res.body.toString());
  return { ...res, site: answer.site.name, revision: answer.revision.id };
}

/** GET a path of a site, as a visitor (no Accept-Encoding, so identity bytes). */
export function visit(client, site, path = '/') {
  return client.request({ host: `${site}.${SITE_DOMAIN}`, path });
}
