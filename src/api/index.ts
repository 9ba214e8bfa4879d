/** The REST API on the API host (SPEC 4). */
import type { HttpRequest, HttpResponse } from '../http/index.js';
import { endpoint, type EndpointContext, type EndpointDeps } from './handler.js';
import { bodyShapeOf, isRawEndpoint, type ApiOptions, type ApiRoute } from './route.js';
import { createDispatch, type Route } from './router.js';
import { API_ROUTES } from './routes/index.js';

export { API_ROUTES } from './routes/index.js';
export { openApiDocument } from './openapi.js';
export { routeErrors, type ApiOptions, type ApiRoute } from './route.js';

export interface Api {
  handle(res: HttpResponse, req: HttpRequest): void;
}

export function createApi(options: ApiOptions): Api {
  return { handle: createDispatch(dispatchRoutes(options, options.routes ?? API_ROUTES), options.log, options.config.publicUrls.docs) };
}

/** The dispatcher's routes: each declaration of the table with its handler made ready for this thread. */
function dispatchRoutes(options: ApiOptions, table: readonly ApiRoute[]): Route[] {
  const deps: EndpointDeps = { ops: options.ops, config: options.config, log: options.log };
  return table.map((route) => {
    const { handle } = route;
    if (isRawEndpoint(handle)) return { method: route.method, path: route.path, handle: handle.raw(options) };
    const run = (context: EndpointContext) => handle({ ...context, ...deps });
    const body = { body: route.body !== undefined, maxBodyBytes: route.body?.maxBytes, shape: bodyShapeOf(route, options.config.publicUrls.docs) };
    return { method: route.method, path: route.path, handle: endpoint(deps, run, body) };
  });
}
