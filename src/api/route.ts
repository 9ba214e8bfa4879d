import type { ErrorCode } from '../errors.js';
import type { Config } from '../config.js';
import type { BodyMemory, HttpRequest, HttpResponse, UploadPacer } from '../http/index.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import { compileBodyCheck, schema, SHAPES, type BodyCheck, type Schema } from '../contract/index.js';
import type { Operations } from '../sites/index.js';
import type { EndpointContext, EndpointDeps, JsonReply } from './handler.js';
import type { RouteMethod } from './router.js';

export interface ApiOptions {
  ops: Operations;
  /** Read-only use: identifying the bearer of a deploy before its body is read. */
  store: Store;
  /** Paces uploads while the thread is busy serving. */
  pacer?: UploadPacer;
  /** This thread's budget for deploy bodies received into memory rather than spooled. */
  memory?: BodyMemory;
  config: Readonly<Config>;
  log: Logger;
  /** The routes to serve: `API_ROUTES` unless a test adds one. */
  routes?: readonly ApiRoute[];
}

/** Who may call a route: no credential, a site token `st_…`, an account's API token `pl_…`. */
export type Credential = 'none' | 'site' | 'api';

/** The OpenAPI tags, in the order the document lists them. */
export type ApiTag = 'Deploy' | 'Sites' | 'Files' | 'Revisions' | 'Analytics' | 'Access' | 'Members' | 'Domains' | 'Events' | 'Account';

/** What a JSON route runs: the request with its caller and parsed body, and the API's operations. */
export type RouteHandle = (context: EndpointContext & EndpointDeps) => Promise<JsonReply | undefined>;

/** A route that reads its own request body (the deploy's archive): handed the API's options once, at start-up. */
export interface RawEndpoint {
  raw(options: ApiOptions): (res: HttpResponse, req: HttpRequest, params: string[]) => void;
}

/**
 * One REST route, declared once (see fastify's route `schema`): the dispatcher serves it and the
 * OpenAPI document describes it. `errors` are the codes the operation itself may answer; the edge
 * adds those it answers on every route (see `routeErrors`).
 */
export interface ApiRoute {
  method: RouteMethod;
  /** A router template: `{name}` is one segment, `{path...}` the rest of the path. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: ApiTag;
  auth: readonly Credential[];
  /** Path, query and header parameters, as OpenAPI parameter objects. */
  parameters?: readonly Schema[];
  /**
   * A JSON body, read before the operation runs (at most `maxBytes`, by default the small-body cap).
   * `schema` is what the document shows and, written inline (a shape of `BODIES`), what the edge
   * checks the body against before the operation runs, as the MCP tool of the same operation does;
   * a component by reference (`shape(…)`) is checked by its operation, which says more about it. A
   * route that reads a body it does not describe leaves `schema` out. `content` replaces the JSON
   * body for a route that reads its own (`handle` is then raw).
   */
  body?: { schema?: Schema; maxBytes?: number; content?: Record<string, Schema> };
  /** The success answers by status, as OpenAPI response objects (see `answer`). */
  responses: Readonly<Record<number, Schema>>;
  errors: readonly ErrorCode[];
  handle: RouteHandle | RawEndpoint;
}

export const isRawEndpoint = (handle: RouteHandle | RawEndpoint): handle is RawEndpoint => typeof handle !== 'function';

// Every route may answer these: the caller's credential and rate are checked before the
// operation (401, 429), a fault on our side is a 500, and a failure of what lies under the
// operation (a full disk, a cluster's records database or bucket out of reach) a 503 with
// Retry-After (errors.ts toErrorBody).
const EDGE_ERRORS: readonly ErrorCode[] = ['unauthorized', 'limit', 'internal', 'unavailable'];
// A route that reads a body refuses one that is not JSON (400) or over its cap (413).
const BODY_ERRORS: readonly ErrorCode[] = ['bad_request', 'too_large'];

/** Every error code a route may answer: its operation's, and those of the edge in front of it. */
export function routeErrors(route: Pick<ApiRoute, 'errors' | 'body'>): ErrorCode[] {
  return [...new Set([...route.errors, ...EDGE_ERRORS, ...(route.body ? BODY_ERRORS : [])])];
}

/** The check of a route's inline body shape (see `ApiRoute.body`), with the advice for a body that breaks it. */
export function bodyShapeOf(route: ApiRoute, docsUrl: string): { check: BodyCheck; advice: string } | undefined {
  const shown = route.body?.schema;
  if (shown === undefined || '$ref' in shown) return undefined;
  return {
    check: compileBodyCheck(shown),
    advice: `Send ${route.method} ${route.path} the JSON object that ${docsUrl}/openapi.json describes for ${route.operationId}, with Content-Type: application/json.`,
  };
}

/** A component schema of contract/shapes.ts, by reference. */
export const shape = (name: keyof typeof SHAPES): Schema => ({ $ref: `#/components/schemas/${name}` });

/** A JSON answer of `body` (a shape or a schema) with its description. */
export const answer = (body: keyof typeof SHAPES | Schema, description: string): Schema => ({
  description,
  content: { 'application/json': { schema: typeof body === 'string' ? shape(body) : body } },
});

const { str } = schema;

/** The path parameter of a route template, with its description and schema. */
export const pathParam = (name: string, description: string, value: Schema = str()): Schema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: value,
});
