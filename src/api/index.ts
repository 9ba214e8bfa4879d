/** The REST API on the API host (SPEC 4). */
import type { Config } from '../config.js';
import type { IngestPool } from '../ingest/index.js';
import type { Logger } from '../log.js';
import type { UploadPacer } from '../upload-pacer.js';
import type { Store } from '../store/index.js';
import type { HttpRequest, HttpResponse } from '../uws.js';
import { approvalEndpoint } from './approvals.js';
import { createDeployHandler } from './deploy.js';
import { fileEndpoints } from './files.js';
import { endpoint, type EndpointDeps } from './handler.js';
import { createMailer } from './mailer.js';
import { meEndpoint } from './me.js';
import { memberEndpoints } from './members.js';
import { revisionEndpoints } from './revisions.js';
import { createRouter, type Route, type RouteHandler, type RouteSpec } from './router.js';
import { siteEndpoints } from './sites.js';

export interface ApiOptions {
  store: Store;
  ingest: IngestPool;
  /** Paces uploads while the thread is busy serving. */
  pacer?: UploadPacer;
  config: Readonly<Config>;
  log: Logger;
  now?: () => number;
}

export interface Api {
  handle(res: HttpResponse, req: HttpRequest): void;
}

/** Every route of the REST API (SPEC 4): the router serves exactly these, and the docs describe them. */
export const API_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: '/v1/deploy' },
  { method: 'GET', path: '/v1/me' },
  { method: 'GET', path: '/v1/sites' },
  { method: 'GET', path: '/v1/sites/{name}' },
  { method: 'DELETE', path: '/v1/sites/{name}' },
  { method: 'POST', path: '/v1/sites/{name}/rename' },
  { method: 'GET', path: '/v1/sites/{name}/files' },
  { method: 'GET', path: '/v1/sites/{name}/files/{path...}' },
  { method: 'GET', path: '/v1/sites/{name}/revisions' },
  { method: 'POST', path: '/v1/sites/{name}/rollback' },
  { method: 'GET', path: '/v1/sites/{name}/members' },
  { method: 'POST', path: '/v1/sites/{name}/members' },
  { method: 'DELETE', path: '/v1/sites/{name}/members/{email}' },
  { method: 'GET', path: '/v1/approvals/{token}' },
];

export { openApiPath } from './router.js';

export function createApi(options: ApiOptions): Api {
  const now = options.now ?? Date.now;
  const deploy = createDeployHandler({ ...options, now });
  const deps: EndpointDeps = { store: options.store, config: options.config, log: options.log, now };
  const mailer = createMailer({ config: options.config.mail, dataDir: options.config.dataDir, log: options.log, now });
  const sites = siteEndpoints(deps);
  const files = fileEndpoints(deps);
  const revisions = revisionEndpoints(deps);
  const members = memberEndpoints({ ...deps, mailer });

  const handlers: Record<string, RouteHandler> = {
    'POST /v1/deploy': deploy,
    'GET /v1/me': endpoint(deps, meEndpoint(deps)),
    'GET /v1/sites': endpoint(deps, sites.list),
    'GET /v1/sites/{name}': endpoint(deps, sites.get),
    'DELETE /v1/sites/{name}': endpoint(deps, sites.remove),
    'POST /v1/sites/{name}/rename': endpoint(deps, sites.rename, { body: true }),
    'GET /v1/sites/{name}/files': endpoint(deps, files.list),
    'GET /v1/sites/{name}/files/{path...}': endpoint(deps, files.read),
    'GET /v1/sites/{name}/revisions': endpoint(deps, revisions.list),
    'POST /v1/sites/{name}/rollback': endpoint(deps, revisions.rollback, { body: true }),
    'GET /v1/sites/{name}/members': endpoint(deps, members.list),
    'POST /v1/sites/{name}/members': endpoint(deps, members.invite, { body: true }),
    'DELETE /v1/sites/{name}/members/{email}': endpoint(deps, members.remove),
    'GET /v1/approvals/{token}': endpoint(deps, approvalEndpoint(deps)),
  };
  const routes: Route[] = API_ROUTES.map((spec) => {
    const handle = handlers[`${spec.method} ${spec.path}`];
    if (!handle) throw new Error(`no handler for ${spec.method} ${spec.path}`);
    return { ...spec, handle };
  });
  return { handle: createRouter(routes, options.log) };
}
