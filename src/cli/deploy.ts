import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { request as requestTls } from 'node:https';
import { join, resolve } from 'node:path';
import { packFolder } from './pack.js';

/** What an agent keeps between sessions (SPEC 2 "Project state file"). */
interface ServiceState {
  site: string;
  url: string;
  revision: string;
  site_token?: string;
}

export interface DeployCommandOptions {
  dir: string;
  apiUrl: string;
  token?: string;
  out: (line: string) => void;
}

const STATE_FILE = '.service.json';

/**
 * `plinth deploy [dir]`: packs the folder, publishes it, and keeps `.service.json` (kept out of
 * git) so the next run updates the same site on top of the revision it last published.
 */
export async function deployCommand(options: DeployCommandOptions): Promise<number> {
  const dir = resolve(options.dir);
  const statePath = join(dir, STATE_FILE);
  const state = existsSync(statePath) ? (JSON.parse(await readFile(statePath, 'utf8')) as ServiceState) : undefined;
  const body = await packFolder(dir);

  const headers: Record<string, string> = { 'Content-Type': 'application/gzip' };
  const token = options.token ?? state?.site_token;
  if (token) headers.Authorization = `Bearer ${token}`;
  let path = '/v1/deploy';
  if (state) {
    path += `?site=${encodeURIComponent(state.site)}`;
    headers['X-Base-Revision'] = state.revision;
  }
  const response = await post(new URL(path, options.apiUrl), headers, body);
  const json = JSON.parse(response.text) as Record<string, unknown> & {
    site?: { name: string; url: string };
    revision?: { id: string; number: number };
    site_token?: string;
    error?: { code: string; message: string };
    agent_message?: string;
  };
  if (response.status !== 201 || !json.site || !json.revision) {
    options.out(`Deploy failed (${response.status} ${json.error?.code ?? ''}): ${json.error?.message ?? response.text}`);
    if (json.agent_message) options.out(json.agent_message);
    return 1;
  }

  const next: ServiceState = { site: json.site.name, url: json.site.url, revision: json.revision.id };
  const siteToken = json.site_token ?? state?.site_token;
  if (siteToken) next.site_token = siteToken;
  await writeFile(statePath, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  await ignoreInGit(dir);
  options.out(`Published revision ${json.revision.number}: ${json.site.url}`);
  if (json.agent_message) options.out(json.agent_message);
  return 0;
}

async function ignoreInGit(dir: string): Promise<void> {
  const gitignore = join(dir, '.gitignore');
  const current = existsSync(gitignore) ? await readFile(gitignore, 'utf8') : '';
  if (current.split(/\r?\n/).some((line) => line.trim() === STATE_FILE || line.trim() === `/${STATE_FILE}`)) return;
  await appendFile(gitignore, `${current === '' || current.endsWith('\n') ? '' : '\n'}${STATE_FILE}\n`);
}

/**
 * POST with Node's own client. Browsers and curl send every `*.localhost` name to loopback
 * (RFC 6761) but Node's resolver does not, so those connect to 127.0.0.1 with the Host header.
 */
function post(url: URL, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  const send = url.protocol === 'https:' ? requestTls : request;
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  return new Promise((resolvePost, reject) => {
    const req = send(
      {
        protocol: url.protocol,
        host: local ? '127.0.0.1' : url.hostname,
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, Host: url.host, 'Content-Length': String(body.byteLength) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolvePost({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
