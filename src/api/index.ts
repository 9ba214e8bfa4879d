/** The REST API on the API host (SPEC 4). */
import type { HttpRequest, HttpResponse } from '../http/index.js';
import { endpoint, type EndpointDeps } from './handler.js';
import { isRawEndpoint, type ApiOptions, type ApiRoute } from './route.js';
import { createDispatch, type Route } from './router.js';
import { API_ROUTES } from './routes/index.js';

export { API_ROUTES } from './routes/index.js';
export { openApiDocument, openApiPaths } from './openapi.js';
export { routeErrors, type ApiOptions, type ApiRoute } from './route.js';

export interface Api {
  handle(res: HttpResponse, req: HttpRequest): void;
}

/** The dispatcher's routes: each declaration of the table with its handler made ready for this thread. */
export function dispatchRoutes(options: ApiOptions, table: readonly ApiRoute[] = options.routes ?? API_ROUTES): Route[] {
  const deps: EndpointDeps = { ops: options.ops, config: options.config, log: options.log };
  return table.map((route) => {
    const { handle } = route;
    if (isRawEndpoint(handle)) return { method: route.method, path: route.path, handle: handle.raw(options) };
    const run = (context: Parameters<Parameters<typeof endpoint>[1]>[0]) => handle({ ...context, ...deps });
    return { method: route.method, path: route.path, handle: endpoint(deps, run, { body: route.body !== undefined, maxBodyBytes: route.body?.maxBytes }) };
  });
}

export function createApi(options: ApiOptions): Api {
  return { handle: createDispatch(dispatchRoutes(options), options.log, options.config.publicUrls.docs) };
}
