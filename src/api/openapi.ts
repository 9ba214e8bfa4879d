import type { Config } from '../config.js';
import { ERROR_MEANING, ERROR_STATUS, type ErrorCode } from '../errors.js';
import { openApiPath } from '../http/index.js';
import { SHAPES, type Schema } from '../contract/index.js';
import { REPLAYED_HEADER } from './handler.js';
import { routeErrors, shape, type ApiRoute, type ApiTag, type Credential } from './route.js';
import { API_ROUTES } from './routes/index.js';

/**
 * The OpenAPI 3.1 description of the REST API (`/openapi.json` on the docs host), built from the
 * route table: each route's path, parameters, body and answers as it declares them, its errors
 * from the catalogue in errors.ts, and the bodies and answers from sites/shapes.ts, where the
 * operations' JSON is defined once. test/docs/openapi.test.ts validates it as OpenAPI 3.1 and
 * checks live answers against its schemas. Response objects forbid properties they do not list,
 * so a field the API adds without documenting it fails those checks.
 */

const TAGS: ReadonlyArray<{ name: ApiTag; description?: string }> = [
  { name: 'Deploy', description: 'Publishing.' },
  { name: 'Sites' },
  { name: 'Files' },
  { name: 'Revisions' },
  { name: 'Analytics', description: 'What the server counted of a site’s visits: no script, no cookie.' },
  { name: 'Access', description: 'Who may see a site: public, password or members only.' },
  { name: 'Members' },
  { name: 'Domains' },
  { name: 'Events', description: 'The audit log, and webhooks that send events out.' },
  { name: 'Account' },
];

const SECURITY: Record<Credential, Schema> = { none: {}, site: { siteToken: [] }, api: { apiToken: [] } };

/** `bad_request` → `BadRequest`: the name of each code's response component. */
const responseName = (code: ErrorCode): string => code.replace(/(^|_)([a-z])/g, (_m, _sep: string, letter: string) => letter.toUpperCase());

// Headers the edge sets on some errors (docs/errors.md).
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } };
const ERROR_HEADERS: Partial<Record<ErrorCode, Schema>> = {
  unauthorized: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
  method_not_allowed: { Allow: { description: 'The methods the path has.', schema: { type: 'string' } } },
  limit: retryAfter,
  unavailable: retryAfter,
};

/** One response per error code the routes may answer, described as the catalogue describes it. */
function errorResponses(routes: readonly ApiRoute[]): Record<string, Schema> {
  const answered = new Set(routes.flatMap(routeErrors));
  return Object.fromEntries(
    (Object.keys(ERROR_STATUS) as ErrorCode[])
      .filter((code) => answered.has(code))
      .map((code) => {
        const headers = ERROR_HEADERS[code];
        const response: Schema = {
          description: `\`${code}\`: ${ERROR_MEANING[code]}.`,
          content: { 'application/json': { schema: shape('Error') } },
          ...(headers ? { headers } : {}),
        };
        return [responseName(code), response];
      }),
  );
}

/** The header name of the `Idempotency-Key` parameter (routes/params.ts). */
const IDEMPOTENCY_KEY = 'Idempotency-Key';

// What the edge adds to an answer given again to a retry (handler.ts, sent by every route that
// takes `Idempotency-Key`, and by a digest deploy's last part sent again).
const REPLAYED = {
  [REPLAYED_HEADER]: {
    description: `\`true\` when this is the first answer given again to a retry (the same \`${IDEMPOTENCY_KEY}\`, or a digest deploy's last part sent again); nothing was changed. Absent on a first answer.`,
    schema: { type: 'string', const: 'true' },
  },
};

/** A route's success answers; those of a route that takes `Idempotency-Key` list the replay header. */
function successResponses(route: ApiRoute): Record<number, Schema> {
  const keyed = route.parameters?.some((param) => param.in === 'header' && param.name === IDEMPOTENCY_KEY) ?? false;
  if (!keyed) return route.responses;
  return Object.fromEntries(
    Object.entries(route.responses).map(([status, response]) => [
      status,
      status.startsWith('2') ? { ...response, headers: { ...(response.headers as Schema | undefined), ...REPLAYED } } : response,
    ]),
  );
}

function operation(route: ApiRoute): Schema {
  const errors = Object.fromEntries(routeErrors(route).map((code) => [String(ERROR_STATUS[code]), { $ref: `#/components/responses/${responseName(code)}` }]));
  const body = route.body?.content ?? (route.body?.schema ? { 'application/json': { schema: route.body.schema } } : undefined);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: route.auth.map((credential) => SECURITY[credential]),
    ...(route.parameters ? { parameters: route.parameters } : {}),
    ...(body ? { requestBody: { required: true, content: body } } : {}),
    responses: { ...successResponses(route), ...errors },
  };
}

/** The `paths` of the document: every route of `routes` under its OpenAPI path and method. */
export function openApiPaths(routes: readonly ApiRoute[] = API_ROUTES): Record<string, Record<string, Schema>> {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    item[route.method.toLowerCase()] = operation(route);
  }
  return paths;
}

export function openApiDocument(config: Readonly<Config>, routes: readonly ApiRoute[] = API_ROUTES): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Plinth REST API',
      version: '1',
      summary: 'Publish a static website from a folder and manage it.',
      description:
        `Guides: ${config.publicUrls.docs}/llms.txt (Markdown for agents), ${config.publicUrls.docs}/sites-api . ` +
        'Every error has the body `{"error": {"code", "message", "details"?}, "agent_message"?}`.',
    },
    servers: [{ url: config.publicUrls.api }],
    tags: TAGS,
    security: [SECURITY.api],
    paths: openApiPaths(routes),
    components: {
      schemas: SHAPES,
      responses: errorResponses(routes),
      securitySchemes: {
        siteToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'st_…',
          description:
            'Site token, returned once by an anonymous deploy. Updates, reads and rolls back its one site until the site is claimed; afterwards it only answers the claim poll.',
        },
        apiToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'pl_…',
          description:
            "API token of an account. Everything the account may do, with the caller's role on each site. (OAuth tokens `pla_…` are for the MCP server; REST answers them 401.)",
        },
      },
    },
  };
}
