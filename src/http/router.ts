/**
 * The one router of every host that has routes (API, app): a small `add`/`match` over path
 * templates, as hono's pattern router does. `{name}` is one segment; `{path...}` (last only) the
 * rest of the path. A trailing slash is allowed. HEAD matches what GET matches.
 */

export type RouteMatch<H> =
  | { kind: 'found'; handler: H; params: string[] }
  /** The path exists under other methods. */
  | { kind: 'method_not_allowed'; allowed: string[] }
  /** A parameter is not valid percent-encoding. */
  | { kind: 'bad_encoding' }
  | { kind: 'not_found' };

export interface Router<H> {
  add(method: string, template: string, handler: H): void;
  match(method: string, path: string): RouteMatch<H>;
}

export function createRouter<H>(): Router<H> {
  const routes: Array<{ method: string; pattern: RegExp; handler: H }> = [];
  return {
    add(method, template, handler) {
      routes.push({ method: method.toUpperCase(), pattern: compileTemplate(template), handler });
    },
    match(method, path) {
      const wanted = method === 'HEAD' ? 'GET' : method;
      const allowed: string[] = [];
      for (const route of routes) {
        const found = route.pattern.exec(path);
        if (!found) continue;
        if (route.method !== wanted) {
          if (!allowed.includes(route.method)) allowed.push(route.method);
          continue;
        }
        try {
          return { kind: 'found', handler: route.handler, params: found.slice(1).map((part) => decodeURIComponent(part ?? '')) };
        } catch {
          return { kind: 'bad_encoding' };
        }
      }
      return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' };
    },
  };
}

/** Anchored pattern for a template; a trailing slash is allowed. Parameters become capture groups. */
export function compileTemplate(template: string): RegExp {
  const source = template
    .split(/(\{\w+(?:\.\.\.)?\})/)
    .map((part) => {
      if (/^\{\w+\.\.\.\}$/.test(part)) return '(.+)';
      if (/^\{\w+\}$/.test(part)) return '([^/]+)';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return template.includes('...}') ? new RegExp(`^${source}$`) : new RegExp(`^${source}/?$`);
}

/** The template as OpenAPI writes it (`{path...}` → `{path}`). */
export function openApiPath(template: string): string {
  return template.replace(/\{(\w+)\.\.\.\}/g, '{$1}');
}
