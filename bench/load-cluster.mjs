// The worked example of docs/load.md, run for real: a private PostgreSQL, a bucket (s3rver), three
// Plinth nodes on their own loopback ports and nginx in front of them (as deploy/nginx-plinth.conf,
// without TLS), a Company account with an API token made with `plinth admin`, then the load suite
// as an operator runs it, from the CLI package's build: `plinth load prepare` through nginx, and
// `plinth load run --compare <node 1>,<nginx>` twice (closed loop, then open loop with deploys).
// Prints each run's summary; the JSON and HTML reports are kept in bench/.work/load-cluster/.
//
// Env: LOAD_SITES (200), LOAD_SCALE (0.1), LOAD_DURATION (60s), LOAD_CONNECTIONS (64),
//      LOAD_RATE (300), LOAD_DEPLOYS_PER_MINUTE (12). Needs Debian's postgresql and nginx.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_HOST, startPlinthNode } from './lib/plinth-node.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { freePort, startChild, stopChild } from './lib/proc.mjs';
import { startS3rver } from './lib/s3rver.mjs';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, '..');
const work = join(benchDir, '.work', 'load-cluster');
const plinthLoad = join(root, 'packages', 'cli', 'dist', 'plinth.js');
const plinthServer = join(root, 'dist', 'cli', 'plinth.js');
const env = process.env;
const cfg = {
  sites: env.LOAD_SITES ?? '200',
  scale: env.LOAD_SCALE ?? '0.1',
  duration: env.LOAD_DURATION ?? '60s',
  connections: env.LOAD_CONNECTIONS ?? '64',
  rate: env.LOAD_RATE ?? '300',
  deploysPerMinute: env.LOAD_DEPLOYS_PER_MINUTE ?? '12',
};

/** nginx in front of the nodes, as deploy/nginx-plinth.conf routes (plain HTTP on loopback). */
function writeNginxConfig(port, nodePorts) {
  const tmp = join(work, 'nginx-tmp');
  mkdirSync(tmp, { recursive: true });
  const conf = `daemon off;
master_process on;
user root;
worker_processes 1;
pid ${join(work, 'nginx.pid')};
error_log ${join(work, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  upstream plinth {
${nodePorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 100m;
    location / {
      proxy_pass http://plinth;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering off;
      proxy_buffering off;
      proxy_connect_timeout 2s;
      proxy_send_timeout 600s;
      proxy_read_timeout 600s;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
    }
  }
}
`;
  const path = join(work, 'nginx.conf');
  writeFileSync(path, conf);
  return path;
}

/** `plinth …` to its end, its output passed through; resolves the exit status. */
function plinth(script, args, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const children = [];
let pg;
let s3;
try {
  pg = await startPostgres();
  s3 = await startS3rver('plinth-load');
  const clusterEnv = { PLINTH_DATABASE_URL: pg.url, ...s3.env, PLINTH_TRUST_PROXY: '1', PLINTH_LOG_LEVEL: 'warn' };
  const nodes = [];
  // One at a time: the first builds the schema, the others bootstrap their replicas from it.
  for (let n = 1; n <= 3; n++) {
    const dataDir = join(work, `node-${n}`);
    mkdirSync(dataDir, { recursive: true });
    const node = await startPlinthNode({ root, dataDir, env: clusterEnv, logPath: join(work, `node-${n}.log`) });
    children.push(node.child);
    nodes.push(node);
  }
  const nginxPort = await freePort();
  const nginx = startChild(
    'nginx',
    [
      '-c',
      writeNginxConfig(
        nginxPort,
        nodes.map((n) => n.port),
      ),
      '-p',
      work,
      '-e',
      join(work, 'nginx-error.log'),
    ],
    {
      logPath: join(work, 'nginx.log'),
    },
  );
  children.push(nginx);
  await new Promise((resolve) => setTimeout(resolve, 500));

  const adminEnv = { ...env, ...clusterEnv, PLINTH_DATA_DIR: nodes[0].dataDir };
  execFileSync(process.execPath, [plinthServer, 'admin', 'account', 'create', '--email', 'load@example.com', '--plan', 'company'], {
    env: adminEnv,
    stdio: 'ignore',
  });
  const token = execFileSync(process.execPath, [plinthServer, 'admin', 'token', 'create', '--email', 'load@example.com'], {
    env: adminEnv,
    encoding: 'utf8',
  }).trim();

  console.log(`nodes on ${nodes.map((n) => `127.0.0.1:${n.port}`).join(', ')}; nginx on 127.0.0.1:${nginxPort}; ${os.availableParallelism()} cores`);
  const corpus = join(work, 'corpus.json');
  const started = Date.now();
  const prepared = await plinth(
    plinthLoad,
    ['load', 'prepare', '--api', `http://${API_HOST}:${nginxPort}`, '--sites', cfg.sites, '--scale', cfg.scale, '--corpus', corpus, '--seed', '34'],
    { PLINTH_TOKEN: token },
  );
  if (prepared !== 0) throw new Error(`prepare exited ${prepared}`);
  console.log(`prepare took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const compare = `127.0.0.1:${nodes[0].port},127.0.0.1:${nginxPort}`;
  const runs = [
    ['closed', ['--connections', cfg.connections]],
    ['open', ['--rate', cfg.rate, '--deploys-per-minute', cfg.deploysPerMinute]],
  ];
  for (const [name, args] of runs) {
    console.log(`\n# ${name} loop: plinth load run --compare ${compare} --duration ${cfg.duration} ${args.join(' ')}`);
    const code = await plinth(
      plinthLoad,
      [
        'load',
        'run',
        '--corpus',
        corpus,
        '--compare',
        compare,
        '--duration',
        cfg.duration,
        ...args,
        '--json',
        join(work, `${name}.json`),
        '--html',
        join(work, `${name}.html`),
      ],
      { PLINTH_TOKEN: token },
    );
    if (code !== 0) throw new Error(`run exited ${code}`);
    console.log(
      `load average: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  }
} finally {
  for (const child of children.reverse()) await stopChild(child);
  await s3?.stop();
  await pg?.stop();
}
