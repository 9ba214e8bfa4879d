import { toErrorBody } from '../errors.js';
import { OAUTH_PATHS } from '../sites/index.js';
import type { AppDeps, PageRoute } from './context.js';
import { formOf, jsonOf } from './request.js';
import { jsonResponse, type AppResponse } from './response.js';

/**
 * The authorization server's endpoints for programs (RFC 8414 metadata, RFC 7591 registration,
 * RFC 8628 device authorization, the token endpoint, RFC 7009 revocation). They take no cookies and no form tokens, and answer
 * any origin: browser-based MCP clients call them across origins, and nothing here acts on a
 * session.
 */
const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'authorization, content-type, mcp-protocol-version',
  'Access-Control-Max-Age': '600',
};
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const METADATA_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

/** An OAuth error body (`{error, error_description}`) from a refusal of the operations. */
function oauthErrorResponse(err: unknown): AppResponse {
  const { status, body, headers, internal } = toErrorBody(err);
  if (internal) throw err;
  const details = body.error.details as { oauth_error?: string } | undefined;
  const error = details?.oauth_error ?? (status === 429 ? 'slow_down' : 'invalid_request');
  return jsonResponse({ error, error_description: body.error.message }, error === 'invalid_client' ? 401 : status === 429 ? 429 : 400, {
    ...CORS,
    ...NO_STORE,
    ...headers,
  });
}

export function oauthEndpointRoutes(deps: AppDeps): PageRoute[] {
  const { ops } = deps;
  const preflight = (path: string): PageRoute => ({
    method: 'OPTIONS',
    path,
    form: false,
    handle: async () => ({ status: 204, headers: CORS, cookies: [], body: '' }),
  });

  const routes: PageRoute[] = [
    ...METADATA_PATHS.flatMap((path): PageRoute[] => [
      { method: 'GET', path, form: false, handle: async () => jsonResponse(ops.oauth.metadata(), 200, { ...CORS, 'Cache-Control': 'public, max-age=300' }) },
      preflight(path),
    ]),
    {
      method: 'POST',
      path: OAUTH_PATHS.register,
      form: false,
      async handle(context) {
        try {
          const client = await ops.oauth.register(jsonOf(context.request), context.network);
          return jsonResponse(client, 201, { ...CORS, ...NO_STORE });
        } catch (err) {
          const { details } = err as { details?: { oauth_error?: string } };
          if ((err as { code?: string }).code === 'bad_request' && !details?.oauth_error) {
            return jsonResponse({ error: 'invalid_client_metadata', error_description: (err as Error).message }, 400, { ...CORS, ...NO_STORE });
          }
          return oauthErrorResponse(err);
        }
      },
    },
    {
      method: 'POST',
      path: OAUTH_PATHS.deviceAuthorization,
      form: false,
      async handle(context) {
        try {
          return jsonResponse(await ops.device.authorize(formOf(context.request), context.network), 200, { ...CORS, ...NO_STORE });
        } catch (err) {
          return oauthErrorResponse(err);
        }
      },
    },
    {
      method: 'POST',
      path: OAUTH_PATHS.token,
      form: false,
      async handle(context) {
        try {
          return jsonResponse(await ops.oauth.token(formOf(context.request)), 200, { ...CORS, ...NO_STORE });
        } catch (err) {
          return oauthErrorResponse(err);
        }
      },
    },
    {
      method: 'POST',
      path: OAUTH_PATHS.revoke,
      form: false,
      async handle(context) {
        await ops.oauth.revoke(formOf(context.request));
        return { status: 200, headers: { ...CORS, ...NO_STORE }, cookies: [], body: '' };
      },
    },
    preflight(OAUTH_PATHS.register),
    preflight(OAUTH_PATHS.deviceAuthorization),
    preflight(OAUTH_PATHS.token),
    preflight(OAUTH_PATHS.revoke),
  ];
  return routes;
}
