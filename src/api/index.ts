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
import { createRouter, type Route } from './router.js';
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

export function createApi(options: ApiOptions): Api {
  const now = options.now ?? Date.now;
  const deploy = createDeployHandler({ ...options, now });
  const deps: EndpointDeps = { store: options.store, config: options.config, log: options.log, now };
  const mailer = createMailer({ config: options.config.mail, dataDir: options.config.dataDir, log: options.log, now });
  const sites = siteEndpoints(deps);
  const files = fileEndpoints(deps);
  const revisions = revisionEndpoints(deps);
  const members = memberEndpoints({ ...deps, mailer });

  const site = '/v1/sites/([^/]+)';
  const at = (path: string): RegExp => new RegExp(`^${path}/?$`);
  const routes: Route[] = [
    { method: 'POST', pattern: at('/v1/deploy'), handle: deploy },
    { method: 'GET', pattern: at('/v1/me'), handle: endpoint(deps, meEndpoint(deps)) },
    { method: 'GET', pattern: at('/v1/sites'), handle: endpoint(deps, sites.list) },
    { method: 'GET', pattern: at(site), handle: endpoint(deps, sites.get) },
    { method: 'DELETE', pattern: at(site), handle: endpoint(deps, sites.remove) },
    { method: 'POST', pattern: at(`${site}/rename`), handle: endpoint(deps, sites.rename, { body: true }) },
    { method: 'GET', pattern: at(`${site}/files`), handle: endpoint(deps, files.list) },
    { method: 'GET', pattern: new RegExp(`^${site}/files/(.+)$`), handle: endpoint(deps, files.read) },
    { method: 'GET', pattern: at(`${site}/revisions`), handle: endpoint(deps, revisions.list) },
    { method: 'POST', pattern: at(`${site}/rollback`), handle: endpoint(deps, revisions.rollback, { body: true }) },
    { method: 'GET', pattern: at(`${site}/members`), handle: endpoint(deps, members.list) },
    { method: 'POST', pattern: at(`${site}/members`), handle: endpoint(deps, members.invite, { body: true }) },
    { method: 'DELETE', pattern: at(`${site}/members/([^/]+)`), handle: endpoint(deps, members.remove) },
    { method: 'GET', pattern: at('/v1/approvals/([^/]+)'), handle: endpoint(deps, approvalEndpoint(deps)) },
  ];
  return { handle: createRouter(routes, options.log) };
}
