import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeFile, siteFiles, siteSeed, type Corpus } from '../../packages/cli/src/load/corpus.js';
import type { LoadReport } from '../../packages/cli/src/load/report.js';
import { pageUrl } from '../../packages/cli/src/load/traffic.js';

/** Helpers of the load suite's tests: the CLI package's built `plinth` command, a corpus made here, loopback servers. */

export const PLINTH = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node packages/cli/dist/plinth.js load …` (the CLI package's build) as an operator would, to its end. */
export function plinthLoad(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PLINTH, 'load', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A corpus of `sites` small sites, as prepare records them, under `*.sites.localhost` names. */
export function localCorpus(sites: number, seed = 34, scale = 0.01): Corpus {
  return {
    format: 'plinth-load-corpus',
    version: 1,
    created_at: new Date(0).toISOString(),
    api: 'http://api.localhost:1',
    seed,
    scale,
    sites: Array.from({ length: sites }, (_, index) => {
      const siteSeedValue = siteSeed(seed, index);
      const name = `load-${index}`;
      return {
        name,
        url: `http://${name}.sites.localhost:1`,
        host: `${name}.sites.localhost:1`,
        revision: 'rev_1',
        seed: siteSeedValue,
        has404: false,
        files: siteFiles(siteSeedValue, scale).map(describeFile),
      };
    }),
  };
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

export interface LoopbackServer {
  server: Server;
  port: number;
  address: string;
  /** Requests it has answered. */
  answered(): number;
  close(): Promise<void>;
}

export async function startLoopback(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<LoopbackServer> {
  let answered = 0;
  const server = createServer((req, res) => {
    res.on('finish', () => answered++);
    handler(req, res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    address: `127.0.0.1:${port}`,
    answered: () => answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A handler that serves the corpus's files as a correct server would (identity encoding, 404 for the rest). */
export function corpusHandler(corpus: Corpus): (req: IncomingMessage, res: ServerResponse) => void {
  const files = new Map<string, { bytes: Buffer; type: string }>();
  for (const site of corpus.sites) {
    const made = siteFiles(site.seed, corpus.scale);
    for (const record of site.files) {
      const file = made.find((f) => f.path === record.path)!;
      const url = record.kind === 'page' ? pageUrl(record.path) : `/${record.path}`;
      files.set(`${site.host.split(':')[0]}${url}`, { bytes: file.bytes, type: record.type });
    }
  }
  return (req, res) => {
    const file = files.get(`${(req.headers.host ?? '').split(':')[0]}${req.url}`);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Not found</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.bytes.length }).end(file.bytes);
  };
}

export const readReport = (text: string): LoadReport => JSON.parse(text) as LoadReport;
