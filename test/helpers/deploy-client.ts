import { callApi, type ApiResponse } from './http.js';

/** `POST /v1/deploy` on a server at `port` (in-process or a spawned `dist/main.js`). */
export interface DeployCall {
  body: Buffer | string;
  /** Defaults to an archive body (no Content-Type); `application/json` for inline files. */
  contentType?: string;
  token?: string;
  site?: string;
  base?: string;
  headers?: Record<string, string>;
}

export type DeployAnswer = ApiResponse;

export function deployTo(port: number, call: DeployCall): Promise<DeployAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.base) headers['x-base-revision'] = call.base;
  if (call.contentType) headers['content-type'] = call.contentType;
  const path = call.site ? `/v1/deploy?site=${encodeURIComponent(call.site)}` : '/v1/deploy';
  return callApi(port, { method: 'POST', path, token: call.token, headers, raw: call.body });
}

/** A JSON deploy body for `files` (utf8 text, or base64 for bytes). */
export function jsonDeployBody(files: ReadonlyArray<readonly [string, string | Uint8Array]>, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    ...fields,
    files: files.map(([path, content]) =>
      typeof content === 'string' ? { path, content } : { path, content: Buffer.from(content).toString('base64'), encoding: 'base64' },
    ),
  });
}

/** Files by path: text is sent as utf8, bytes as base64. */
export type DeployFiles = Record<string, string | Uint8Array>;

export interface DeployOptions {
  token?: string;
  /** Body fields beside the files: `site`, `base_revision`, `publish`… */
  fields?: Record<string, unknown>;
}

/** A JSON deploy of `files` to the server at `port`. */
export function deployFiles(port: number, files: DeployFiles, options: DeployOptions = {}): Promise<DeployAnswer> {
  return deployTo(port, { body: jsonDeployBody(Object.entries(files), options.fields), contentType: 'application/json', token: options.token });
}
