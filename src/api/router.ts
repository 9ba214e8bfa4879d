import { ServiceError } from '../errors.js';
import { createRouter, sendError, type HttpRequest, type HttpResponse } from '../http/index.js';
import type { Logger } from '../log.js';

export type RouteHandler = (res: HttpResponse, req: HttpRequest, params: string[]) => void;

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A method and path template (see http/router.ts). */
export interface RouteSpec {
  method: RouteMethod;
  path: string;
}

export interface Route extends RouteSpec {
  handle: RouteHandler;
}

/**
 * The API's dispatch over the shared router: a path that exists under another method gets 405
 * with `Allow`, an unknown path 404, a parameter that is not valid percent-encoding 400, all in
 * SPEC 7's error shape.
 */
export function createDispatch(routes: readonly Route[], log: Logger, docsUrl: string): (res: HttpResponse, req: HttpRequest) => void {
  // An address that is no endpoint (the bare host, a typo) points to where the endpoints are listed.
  const lost = `The API lives under /v1. Its endpoints, with method and path, are listed at ${docsUrl}/sites-api.md and in ${docsUrl}/openapi.json; agents start at ${docsUrl}/llms.txt. The docs for people are at ${docsUrl}/ .`;
  const router = createRouter<RouteHandler>();
  for (const route of routes) router.add(route.method, route.path, route.handle);
  return (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const found = router.match(method, path);
    const head = method === 'HEAD';
    switch (found.kind) {
      case 'found':
        return found.handler(res, req, found.params);
      case 'bad_encoding':
        return sendError(res, new ServiceError('bad_request', 'The path has invalid percent-encoding.'), log, { head });
      case 'method_not_allowed':
        return sendError(
          res,
          new ServiceError('method_not_allowed', `${method} is not supported on ${path}.`, { headers: { Allow: found.allowed.join(', ') } }),
          log,
          { head },
        );
      case 'not_found':
        return sendError(res, new ServiceError('not_found', `No endpoint ${method} ${path}.`, { agentMessage: lost }), log, { head });
    }
  };
}
