import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'undici';

/**
 * Calls to a Plinth's public REST API, as any outside client makes them: JSON bodies, the API
 * token as a bearer credential, and patience with `429`/`503` (it waits as `Retry-After` says,
 * a few times) so a large prepare is not undone by a rate limit.
 */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** `http://api.localhost:8080` or `…/v1`, as the user gives it → the `/v1` base. */
export function apiBase(api: string): URL {
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new Error(`--api "${api}" is not a URL (e.g. http://api.localhost:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--api "${api}" is not an http(s) URL`);
  url.pathname = `${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`;
  return url;
}

export async function callApi(
  agent: Agent,
  api: string,
  call: { method: 'GET' | 'POST' | 'DELETE'; path: string; token?: string; json?: unknown },
  tries = 6,
): Promise<ApiAnswer> {
  const base = apiBase(api);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'plinth-load' };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  const body = call.json === undefined ? undefined : JSON.stringify(call.json);
  if (body !== undefined) headers['content-type'] = 'application/json';
  for (let attempt = 1; ; attempt++) {
    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const res = await agent.request({ origin: base.origin, path: `${base.pathname}${call.path}`, method: call.method, headers, body });
      status = res.statusCode;
      text = await res.body.text();
      const header = res.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
    } catch (err) {
      throw new Error(`cannot reach the API at ${base.origin}: ${(err as Error).message}`);
    }
    if ((status === 429 || status === 503) && attempt < tries) {
      const seconds = Number(retryAfter);
      await sleep(Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 500 * attempt);
      continue;
    }
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = { text };
    }
    return { status, body: parsed };
  }
}

/** The API's own words for a refusal: `code: message`. */
export function refusal(answer: ApiAnswer): string {
  const error = answer.body.error as { code?: string; message?: string } | undefined;
  return error ? `${answer.status} ${error.code}: ${error.message}` : `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
}
