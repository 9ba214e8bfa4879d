import type { Config } from '../config.js';
import { problemDetails, type BodyCheck } from '../contract/index.js';
import { ServiceError } from '../errors.js';
import {
  clientNetwork,
  declaredLength,
  isAborted,
  loggedPath,
  receiveBody,
  sendError,
  sendJson,
  trackAbort,
  type Headers,
  type HttpResponse,
} from '../http/index.js';
import type { Logger } from '../log.js';
import { smallBodyLimit, type BodyLimit, type Caller, type Operations } from '../sites/index.js';
import { readRequest, type ApiRequest } from './request.js';
import type { RouteHandler } from './router.js';

/** What every endpoint module gets. */
export interface EndpointDeps {
  ops: Operations;
  config: Readonly<Config>;
  log: Logger;
}

export interface EndpointContext {
  request: ApiRequest;
  caller: Caller;
  /** The parsed JSON body, for routes declared with `body: true`. */
  body: unknown;
  /** That body's bytes as they arrived (an idempotency key is bound to them). */
  bodyBytes?: Buffer;
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

/** Marks an answer given again to a retry of an idempotent request (Stripe's header). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The network a request counts against (IPv4 /24, IPv6 /64; the proxy's hop when trusted). */
export function requestNetwork(request: ApiRequest, config: Readonly<Config>): string {
  return clientNetwork(request, config.deploy.trustProxy);
}

/** How an endpoint reads its JSON body: at most `maxBodyBytes`, and checked against its shape when it has one. */
export interface BodyOptions {
  body?: boolean;
  maxBodyBytes?: number;
  /** The check of the route's body shape, and what to tell a caller whose body breaks it. */
  shape?: { check: BodyCheck; advice: string };
}

/**
 * Wraps an endpoint: copies the request out of uWS, starts reading a JSON body when asked (it must
 * be attached before the handler returns), then admits the caller (identity and rate limits),
 * checks the body against its shape and runs the endpoint, mapping anything thrown to SPEC 7's
 * error body.
 */
export function endpoint(deps: EndpointDeps, run: Endpoint, options: BodyOptions = {}): RouteHandler {
  const { log, ops, config } = deps;
  const limit: BodyLimit = smallBodyLimit(config, options.maxBodyBytes);
  return (res, req, params) => {
    const request = readRequest(res, req, params);
    trackAbort(res);
    const body = options.body ? receiveBody(res, { limit, declaredBytes: declaredLength(request.headers) }) : undefined;
    void (async () => {
      try {
        if (body?.refused) throw body.refused;
        const caller = await ops.admission.admit({ authorization: request.headers.authorization, network: requestNetwork(request, config), surface: 'rest' });
        const bodyBytes = body ? (await body.done).data! : undefined;
        const parsed = bodyBytes ? parseJson(bodyBytes) : undefined;
        if (options.shape) checkBody(parsed, options.shape);
        const reply = await run({ request, caller, body: parsed, ...(bodyBytes ? { bodyBytes } : {}), res });
        if (reply) sendJson(res, reply.status, reply.body, reply.headers, { head: request.method === 'HEAD' });
      } catch (err) {
        if (isAborted(res)) return;
        const finished = body === undefined || (await body.drain());
        sendError(res, err, log, { head: request.method === 'HEAD', closeConnection: !finished, context: { path: loggedPath(request.path) } });
      } finally {
        body?.discard();
      }
    })();
  };
}

/** A small JSON body (`undefined` when empty), or `bad_request`. */
function parseJson(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ServiceError('bad_request', 'The request body is not valid JSON.', { agentMessage: 'Send a JSON object with Content-Type: application/json.' });
  }
}

/** A body that breaks its route's shape is refused before the operation sees it, as MCP refuses such arguments. */
function checkBody(body: unknown, shape: { check: BodyCheck; advice: string }): void {
  const problem = shape.check(body);
  if (problem !== undefined) throw new ServiceError('bad_request', problem.message, { agentMessage: shape.advice, details: problemDetails(problem) });
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
