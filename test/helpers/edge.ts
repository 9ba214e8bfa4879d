import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';

/**
 * The certificate side of custom domains, all on loopback: Pebble (Let's Encrypt's test ACME
 * server, Debian's `pebble`) as the CA, Caddy (Debian's `caddy`) in front of Plinth with on-demand
 * TLS asking Plinth's ask listener, and an HTTPS client that trusts Pebble's root. Pebble
 * resolves names with the test's own DNS server and validates http-01 on Caddy's HTTP port.
 */

export interface EdgeProcess {
  readonly child: ChildProcess;
  /** Everything it wrote so far. */
  output(): string;
  /** Ends it (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface Pebble extends EdgeProcess {
  /** ACME directory URL. */
  readonly directory: string;
  /** Certificate of Pebble's own HTTPS listener (Caddy must trust it to talk ACME). */
  readonly listenerCertPath: string;
  /** The root that signs the certificates Pebble issues (PEM), from its management API. */
  root(): Promise<string>;
}

export interface Caddy extends EdgeProcess {
  readonly httpPort: number;
  readonly httpsPort: number;
}

/**
 * A port free now, for a process started a moment later. It is taken below the kernel's
 * ephemeral range (ip_local_port_range), at random: a port from that range, found free and let go,
 * can meanwhile become the local end of any outgoing connection (a node's to PostgreSQL or the
 * bucket), and the process then refuses to start with "port already in use".
 */
export async function freePort(): Promise<number> {
  const lowestEphemeral = ephemeralRangeStart();
  if (lowestEphemeral > LOWEST_CHOSEN_PORT + 1000) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const port = LOWEST_CHOSEN_PORT + Math.floor(Math.random() * (lowestEphemeral - LOWEST_CHOSEN_PORT));
      if (await canListen(port)) return port;
    }
  }
  return kernelChosenPort();
}

/** Ports below this are left alone: well-known services and the ranges other tools default to. */
const LOWEST_CHOSEN_PORT = 20_000;

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

function kernelChosenPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function run(command: string, args: string[], env: Record<string, string>): EdgeProcess {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls `ready` until it resolves true, or fails with the process's output after `timeoutMs`. */
async function waitFor(what: string, proc: EdgeProcess, ready: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${what} exited:\n${proc.output()}`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} not ready in ${timeoutMs} ms:\n${proc.output()}`);
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

/** GET over HTTPS to 127.0.0.1 with SNI and Host `servername`; resolves with the status and body, or rejects. */
export function httpsGet(options: {
  port: number;
  servername: string;
  ca?: string;
  path?: string;
  rejectUnauthorized?: boolean;
}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path ?? '/',
        servername: options.servername,
        headers: { host: options.servername, connection: 'close' },
        ca: options.ca,
        rejectUnauthorized: options.rejectUnauthorized ?? true,
        agent: false,
        timeout: 20_000,
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Pebble on loopback: its listener certificate is made here with openssl; `httpPort` and
 * `tlsPort` are where it sends http-01 and tls-alpn-01 validations (Caddy's ports), and names
 * are resolved by the DNS server at `dns` (`127.0.0.1:<port>`).
 */
export async function startPebble(options: { dir: string; dns: string; httpPort: number; tlsPort: number }): Promise<Pebble> {
  mkdirSync(options.dir, { recursive: true });
  const key = join(options.dir, 'pebble-key.pem');
  const cert = join(options.dir, 'pebble-cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const [acmePort, managementPort] = [await freePort(), await freePort()];
  const config = join(options.dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: cert,
        privateKey: key,
        httpPort: options.httpPort,
        tlsPort: options.tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  // No random validation delays, and no nonce rejections: a test needs the first try to work.
  const proc = run('pebble', ['-config', config, '-dnsserver', options.dns], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' });
  const root = async (): Promise<string> => {
    const answer = await httpsGet({ port: managementPort, servername: 'localhost', path: '/roots/0', rejectUnauthorized: false });
    if (answer.status !== 200) throw new Error(`pebble root: ${answer.status}`);
    return answer.text;
  };
  await waitFor('pebble', proc, () =>
    root().then(
      () => true,
      () => false,
    ),
  );
  return { ...proc, directory: `https://127.0.0.1:${acmePort}/dir`, listenerCertPath: cert, root };
}

/**
 * Caddy with on-demand TLS in front of `upstream`, asking `ask` before each new certificate, with
 * Pebble as its CA. Its admin API is off and its storage, home and config live in `dir`.
 */
export function startCaddy(options: { dir: string; pebble: Pebble; upstream: string; ask: string; httpPort: number; httpsPort: number }): Promise<Caddy> {
  const caddyfile = [
    '{',
    '\ton_demand_tls {',
    `\t\task ${options.ask}`,
    '\t}',
    '}',
    'https:// {',
    '\ttls {',
    '\t\ton_demand',
    '\t}',
    `\treverse_proxy ${options.upstream}`,
    '}',
    '',
  ].join('\n');
  return startCaddyfile({ ...options, caddyfile });
}

/**
 * Caddy running `caddyfile`, with the test's own global options added to its global block (ports,
 * Pebble as the CA, storage in `dir`, admin API off): everything else as written.
 */
export async function startCaddyfile(options: { dir: string; pebble: Pebble; caddyfile: string; httpPort: number; httpsPort: number }): Promise<Caddy> {
  mkdirSync(options.dir, { recursive: true });
  const testOptions = [
    '\tadmin off',
    `\thttp_port ${options.httpPort}`,
    `\thttps_port ${options.httpsPort}`,
    `\tacme_ca ${options.pebble.directory}`,
    `\tacme_ca_root ${options.pebble.listenerCertPath}`,
    `\tstorage file_system ${join(options.dir, 'data')}`,
    '\tskip_install_trust',
  ];
  // The global options block is the first block, after any comments.
  const lines = options.caddyfile.split('\n');
  const opening = lines.findIndex((line) => !line.startsWith('#') && line.trim() !== '');
  if (lines[opening] !== '{') throw new Error('the Caddyfile must open with its global options block');
  lines.splice(opening + 1, 0, ...testOptions);
  const caddyfile = join(options.dir, 'Caddyfile');
  writeFileSync(caddyfile, lines.join('\n'));
  const proc = run('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
    HOME: options.dir,
    XDG_DATA_HOME: options.dir,
    XDG_CONFIG_HOME: options.dir,
  });
  await waitFor('caddy', proc, () => canConnect(options.httpsPort));
  return { ...proc, httpPort: options.httpPort, httpsPort: options.httpsPort };
}
