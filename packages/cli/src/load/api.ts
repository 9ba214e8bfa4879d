import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'undici';

/**
 * Calls to a Plinth's public REST API, as any outside client makes them: JSON bodies, the API
 * token as a bearer credential, and patience with `429`/`503` (it waits as `Retry-After` says,
 * a few times) so a large prepare is not undone by a rate limit. A call with an idempotency key
 * (a deploy) is also sent again when its answer is lost — the connection reset, or no answer in
 * time from a busy deployment — since the server then answers the first deploy's result instead
 * of publishing twice (docs/sites-api.md, "Retries: Idempotency-Key").
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

/** How long a resent deploy waits for the first one with its key to finish. */
const KEY_WAIT_MS = 10 * 60_000;

export async function callApi(
  agent: Agent,
  api: string,
  call: { method: 'GET' | 'POST' | 'DELETE'; path: string; token?: string; json?: unknown; idempotencyKey?: string },
  tries = 6,
): Promise<ApiAnswer> {
  const started = Date.now();
  let resent = false;
  const base = apiBase(api);
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'plinth-load' };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (call.idempotencyKey) headers['idempotency-key'] = call.idempotencyKey;
  const body = call.json === undefined ? undefined : JSON.stringify(call.json);
  if (body !== undefined) headers['content-type'] = 'application/json';
  for (let attempt = 1; ;) {
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
      if (call.idempotencyKey && attempt < tries) {
        await sleep(1000 * attempt++);
        resent = true;
        continue;
      }
      throw new Error(`cannot reach the API at ${base.origin}: ${(err as Error).message}`);
    }
    if ((status === 429 || status === 503) && attempt < tries) {
      const seconds = Number(retryAfter);
      await sleep(Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 500 * attempt++);
      continue;
    }
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = { text };
    }
    // A resent call whose first is still running is refused with 409 and the key named: ask
    // again until that one has finished (a busy deployment may take minutes over a deploy).
    if (status === 409 && resent && isKeyConflict(parsed) && Date.now() - started < KEY_WAIT_MS) {
      await sleep(2000);
      continue;
    }
    return { status, body: parsed };
  }
}

function isKeyConflict(body: Record<string, unknown>): boolean {
  const details = (body.error as { details?: Record<string, unknown> } | undefined)?.details;
  return details !== undefined && 'idempotency_key' in details;
}

/** The API's own words for a refusal: `code: message`. */
export function refusal(answer: ApiAnswer): string {
  const error = answer.body.error as { code?: string; message?: string } | undefined;
  return error ? `${answer.status} ${error.code}: ${error.message}` : `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
}
