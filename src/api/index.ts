/** The REST API on the API host (SPEC 4). */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Operations } from '../sites/index.js';
import type { Store } from '../store/index.js';
import type { BodyMemory, HttpRequest, HttpResponse, UploadPacer } from '../http/index.js';
import { createDeployHandler } from './deploy.js';
import { domainEndpoints } from './domain-endpoints.js';
import { siteEndpoints } from './endpoints.js';
import { endpoint, type Endpoint, type EndpointDeps } from './handler.js';
import { createDispatch, type Route, type RouteHandler, type RouteSpec } from './router.js';

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
}

export interface Api {
  handle(res: HttpResponse, req: HttpRequest): void;
}

/** Every route of the REST API (SPEC 4): the router serves exactly these, and the docs describe them. */
export const API_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: '/v1/deploy' },
  { method: 'POST', path: '/v1/deploy/manifest' },
  { method: 'GET', path: '/v1/deploy/manifest/{id}' },
  { method: 'DELETE', path: '/v1/deploy/manifest/{id}' },
  { method: 'GET', path: '/v1/me' },
  { method: 'GET', path: '/v1/sites' },
  { method: 'GET', path: '/v1/sites/{name}' },
  { method: 'DELETE', path: '/v1/sites/{name}' },
  { method: 'POST', path: '/v1/sites/{name}/rename' },
  { method: 'GET', path: '/v1/sites/{name}/files' },
  { method: 'GET', path: '/v1/sites/{name}/files/{path...}' },
  { method: 'GET', path: '/v1/sites/{name}/revisions' },
  { method: 'DELETE', path: '/v1/sites/{name}/revisions/{id}' },
  { method: 'POST', path: '/v1/sites/{name}/rollback' },
  { method: 'POST', path: '/v1/sites/{name}/promote' },
  { method: 'GET', path: '/v1/sites/{name}/access' },
  { method: 'PUT', path: '/v1/sites/{name}/access' },
  { method: 'GET', path: '/v1/sites/{name}/members' },
  { method: 'POST', path: '/v1/sites/{name}/members' },
  { method: 'DELETE', path: '/v1/sites/{name}/members/{email}' },
  { method: 'GET', path: '/v1/approvals/{token}' },
  { method: 'GET', path: '/v1/sites/{name}/domains' },
  { method: 'POST', path: '/v1/sites/{name}/domains' },
  { method: 'DELETE', path: '/v1/sites/{name}/domains/{domain}' },
  { method: 'POST', path: '/v1/sites/{name}/domains/{domain}/verify' },
];

export function createApi(options: ApiOptions): Api {
  const deps: EndpointDeps = { ops: options.ops, config: options.config, log: options.log };
  const deploy = createDeployHandler(options);
  const e = siteEndpoints(deps);
  const d = domainEndpoints(deps);
  const json = (run: Endpoint): RouteHandler => endpoint(deps, run);
  const withBody = (run: Endpoint): RouteHandler => endpoint(deps, run, { body: true });

  const handlers: Record<string, RouteHandler> = {
    'POST /v1/deploy': deploy,
    // A manifest of the largest plan (5,000 files with long paths) fits in a few MB.
    'POST /v1/deploy/manifest': endpoint(deps, e.manifest, { body: true, maxBodyBytes: 8 * 1024 * 1024 }),
    'GET /v1/deploy/manifest/{id}': json(e.manifestStatus),
    'DELETE /v1/deploy/manifest/{id}': json(e.abandonManifest),
    'GET /v1/me': json(e.me),
    'GET /v1/sites': json(e.listSites),
    'GET /v1/sites/{name}': json(e.getSite),
    'DELETE /v1/sites/{name}': json(e.deleteSite),
    'POST /v1/sites/{name}/rename': withBody(e.rename),
    'GET /v1/sites/{name}/files': json(e.listFiles),
    'GET /v1/sites/{name}/files/{path...}': json(e.readFile),
    'GET /v1/sites/{name}/revisions': json(e.listRevisions),
    'DELETE /v1/sites/{name}/revisions/{id}': json(e.deleteRevision),
    'POST /v1/sites/{name}/rollback': withBody(e.rollback),
    'POST /v1/sites/{name}/promote': withBody(e.promote),
    'GET /v1/sites/{name}/access': json(e.getAccess),
    'PUT /v1/sites/{name}/access': withBody(e.setAccess),
    'GET /v1/sites/{name}/members': json(e.listMembers),
    'POST /v1/sites/{name}/members': withBody(e.invite),
    'DELETE /v1/sites/{name}/members/{email}': json(e.removeMember),
    'GET /v1/approvals/{token}': json(e.approval),
    'GET /v1/sites/{name}/domains': json(d.listDomains),
    'POST /v1/sites/{name}/domains': withBody(d.addDomain),
    'DELETE /v1/sites/{name}/domains/{domain}': json(d.removeDomain),
    'POST /v1/sites/{name}/domains/{domain}/verify': withBody(d.verifyDomain),
  };
  const routes: Route[] = API_ROUTES.map((spec) => {
    const handle = handlers[`${spec.method} ${spec.path}`];
    if (!handle) throw new Error(`no handler for ${spec.method} ${spec.path}`);
    return { ...spec, handle };
  });
  return { handle: createDispatch(routes, options.log, options.config.publicUrls.docs) };
}
