import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { isAborted, sendError, sendJson, trackAbort, type Headers } from '../http.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import type { HttpResponse } from '../uws.js';
import { clientAddress, networkOf } from './client-network.js';
import { identifyCaller, type Caller } from './credentials.js';
import { readRequest, type ApiRequest } from './request.js';
import type { RouteHandler } from './router.js';

/** What every endpoint module gets. */
export interface EndpointDeps {
  store: Store;
  config: Readonly<Config>;
  log: Logger;
  now: () => number;
}

export interface EndpointContext {
  request: ApiRequest;
  caller: Caller;
  /** The parsed JSON body, for routes declared with `body: true`. */
  body: unknown;
  /** For endpoints that write their own response (raw file bytes); everything else returns a reply. */
  res: HttpResponse;
}

export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Headers;
}

/** `undefined` means the endpoint has answered itself. */
export type Endpoint = (context: EndpointContext) => Promise<JsonReply | undefined>;

const MAX_JSON_BODY_BYTES = 64 * 1024;
const MINUTE_MS = 60_000;

/**
 * Wraps an endpoint: copies the request out of uWS, starts reading a JSON body when asked (it must
 * be attached before the handler returns), then identifies the caller, takes rate-limit tokens and
 * runs the endpoint, mapping anything thrown to SPEC 7's error body.
 */
export function endpoint(deps: EndpointDeps, run: Endpoint, options: { body?: boolean } = {}): RouteHandler {
  const { log } = deps;
  return (res, req, params) => {
    const request = readRequest(res, req, params);
    trackAbort(res);
    const body = options.body ? readJsonBody(res) : undefined;
    void (async () => {
      try {
        const caller = await admit(deps, request);
        const parsed = body ? await body.done : undefined;
        const reply = await run({ request, caller, body: parsed, res });
        if (reply) sendJson(res, reply.status, reply.body, reply.headers);
      } catch (err) {
        if (isAborted(res)) return;
        sendError(res, err, log, { closeConnection: body !== undefined && !body.finished(), context: { path: request.path } });
      }
    })();
  };
}

/**
 * Who is calling, after counting the request against the per-network and per-credential limits.
 * A request with a bad token still counts against its network, so guessing is capped too.
 */
async function admit(deps: EndpointDeps, request: ApiRequest): Promise<Caller> {
  const { api, deploy } = deps.config;
  let caller: Caller | undefined;
  let refused: unknown;
  try {
    caller = identifyCaller(request.headers.authorization, deps.store);
  } catch (err) {
    refused = err;
  }
  const checks = [];
  if (api.ratePerNetworkPerMinute > 0) {
    const network = networkOf(clientAddress(request.remoteAddress, request.headers['x-forwarded-for'] ?? '', deploy.trustProxy));
    checks.push({ scope: `api-network:${network}`, limit: api.ratePerNetworkPerMinute, windowMs: MINUTE_MS });
  }
  if (caller && caller.kind !== 'anonymous' && api.ratePerCredentialPerMinute > 0) {
    checks.push({ scope: `api-credential:${caller.tokenHash}`, limit: api.ratePerCredentialPerMinute, windowMs: MINUTE_MS });
  }
  if (checks.length > 0) {
    const result = await deps.store.takeRateTokens(checks);
    if (!result.allowed) {
      const seconds = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
      throw new ServiceError('limit', 'Too many API requests; slow down.', {
        agentMessage: `The API rate limit was reached. Wait ${seconds} seconds (the Retry-After header) before the next request.`,
        headers: { 'Retry-After': String(seconds) },
      });
    }
  }
  if (refused !== undefined) throw refused;
  return caller!;
}

interface BodyReader {
  /** Resolves with the parsed JSON (`undefined` for an empty body). */
  done: Promise<unknown>;
  /** True once the whole body was read (the connection can be kept). */
  finished(): boolean;
}

/** Collects a small JSON body; `too_large` past the cap, `bad_request` for invalid JSON. */
function readJsonBody(res: HttpResponse): BodyReader {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  let failed = false;
  const done = new Promise<unknown>((resolve, reject) => {
    res.onData((chunk, isLast) => {
      if (failed) return;
      received += chunk.byteLength;
      if (received > MAX_JSON_BODY_BYTES) {
        failed = true;
        reject(new ServiceError('too_large', `A request body here can be at most ${MAX_JSON_BODY_BYTES / 1024} KB.`));
        return;
      }
      // uWS neuters the chunk after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      finished = true;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new ServiceError('bad_request', 'The request body is not valid JSON.', { agentMessage: 'Send a JSON object with Content-Type: application/json.' }));
      }
    });
  });
  // The endpoint may fail before awaiting the body; never an unhandled rejection.
  done.catch(() => undefined);
  return { done, finished: () => finished };
}

/** The JSON body as an object, or a 400 naming what was expected. */
export function objectBody(body: unknown, example: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ServiceError('bad_request', `The body must be a JSON object like ${example}.`, {
      agentMessage: `Send the JSON object ${example} with Content-Type: application/json.`,
    });
  }
  return body as Record<string, unknown>;
}
