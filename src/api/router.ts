import { ServiceError } from '../errors.js';
import { sendError } from '../http/index.js';
import type { Logger } from '../log.js';
import type { HttpRequest, HttpResponse } from '../http/index.js';
import { compileTemplate } from '../http/index.js';

export { compileTemplate, openApiPath } from '../http/index.js';

export type RouteHandler = (res: HttpResponse, req: HttpRequest, params: string[]) => void;

export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/** A method and path template: `{name}` is one segment; `{path...}` (last only) the rest of the path. */
export interface RouteSpec {
  method: RouteMethod;
  path: string;
}

export interface Route extends RouteSpec {
  handle: RouteHandler;
}

/**
 * Matches method and path. A path that exists under another method gets 405 with `Allow`; an
 * unknown path gets 404 — both in SPEC 7's error shape.
 */
export function createRouter(routes: readonly Route[], log: Logger): (res: HttpResponse, req: HttpRequest) => void {
  const compiled = routes.map((route) => ({ route, pattern: compileTemplate(route.path) }));
  return (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const allowed: string[] = [];
    for (const { route, pattern } of compiled) {
      const match = pattern.exec(path);
      if (!match) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      let params: string[];
      try {
        params = match.slice(1).map((part) => decodeURIComponent(part ?? ''));
      } catch {
        return sendError(res, new ServiceError('bad_request', 'The path has invalid percent-encoding.'), log);
      }
      return route.handle(res, req, params);
    }
    const head = method === 'HEAD';
    if (allowed.length > 0) {
      return sendError(res, new ServiceError('method_not_allowed', `${method} is not supported on ${path}.`, { headers: { Allow: allowed.join(', ') } }), log, { head });
    }
    return sendError(res, new ServiceError('not_found', `No endpoint ${method} ${path}.`, { agentMessage: 'The API lives under /v1; see the docs host for its endpoints.' }), log, { head });
  };
}
