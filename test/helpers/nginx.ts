import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

/**
 * Debian's nginx as a test's load balancer: a child process in the foreground (`daemon off`) with
 * a prefix and logs of its own in `dir`, running a main configuration written here around the
 * `http`-context file under test, the way Debian's /etc/nginx/nginx.conf includes conf.d/*.conf.
 * Its access log records which upstream served each request.
 */
export interface TestNginx {
  readonly child: ChildProcess;
  /** The access log so far: one `<upstream address(es)> <status> <host> <request>` line per request. */
  accessLog(): string[];
  output(): string;
  stop(): Promise<void>;
}

export function hasNginx(): boolean {
  return spawnSync('nginx', ['-v']).status === 0;
}

export async function startNginx(options: { dir: string; httpConf: string; ports: number[] }): Promise<TestNginx> {
  const { dir } = options;
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  writeFileSync(join(dir, 'plinth.conf'), options.httpConf);
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'master_process on;',
      // As root nginx would hand its workers to `nobody`, who cannot write the test's folders.
      ...(asRoot ? ['user root;'] : []),
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      "  log_format upstreams '$upstream_addr $status $host $request';",
      `  access_log ${join(dir, 'access.log')} upstreams;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(dir, 'tmp', kind)};`),
      '  include plinth.conf;',
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const read = (name: string): string => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  const nginx: TestNginx = {
    child,
    accessLog: () => read('access.log').split('\n').filter(Boolean),
    output: () => `${out}${read('error.log')}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited:\n${nginx.output()}`);
    if ((await Promise.all(options.ports.map(canConnect))).every(Boolean)) return nginx;
    if (Date.now() > deadline) {
      await nginx.stop();
      throw new Error(`nginx did not listen in time:\n${nginx.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const canConnect = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
