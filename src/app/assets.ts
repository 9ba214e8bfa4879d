import type { PageAssets } from '../web/index.js';
import type { PageRoute } from './context.js';

/** The shared stylesheet, script and icon on the app host, from the page kit. */
export function assetRoutes(assets: PageAssets): PageRoute[] {
  const serve: PageRoute['handle'] = async (context) => {
    const found = assets.respond(context.request.path, context.request.headers['if-none-match'], context.request.headers['accept-encoding']);
    if (!found) return { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, cookies: [], body: 'Not found' };
    return { status: found.status, headers: found.headers, cookies: [], body: found.body };
  };
  return ['/assets/{name}', '/favicon.svg', '/favicon.ico'].map((path) => ({ method: 'GET' as const, path, handle: serve }));
}
