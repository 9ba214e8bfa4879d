import { ServiceError } from '../errors.js';
import { isClientMetadataUrl, redirectUriProblem } from '../rules/index.js';
import type { OAuthClientRecord } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';

/**
 * What the authorization server's flows share (the MCP apps' authorization code flow in
 * oauth.ts, the device sign-in in device.ts): its paths, its one scope, the OAuth error shape,
 * and who a `client_id` is.
 */

/** A fetched client metadata document is trusted this long before it is fetched again. */
const CLIENT_METADATA_TTL_MS = 10 * 60_000;

/** What a token allows: everything the account can do (OAuth access tokens: on the MCP server only). */
export const OAUTH_SCOPE = 'sites';

/** The authorization server's endpoints on the app host, and the page where people approve devices. */
export const OAUTH_PATHS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  deviceAuthorization: '/oauth/device_authorization',
  device: '/device',
} as const;

/** An OAuth refusal: the edge answers `{error, error_description}` with `error` from `details.oauth_error`. */
export const oauthError = (error: string, description: string, redirect = false): ServiceError =>
  new ServiceError('bad_request', description, { details: { oauth_error: error, ...(redirect ? { redirect: true } : {}) } });

export const invalidClient = (description: string): ServiceError =>
  new ServiceError('unauthorized', description, { details: { oauth_error: 'invalid_client' } });

/** The client behind a `client_id`: registered, or fetched from its metadata document URL. */
export async function clientFor(deps: OperationsDeps, clientId: string, network: string): Promise<OAuthClientRecord | undefined> {
  const { store, config } = deps;
  if (!isClientMetadataUrl(clientId)) {
    const client = store.getOAuthClient(clientId);
    // Cleaned again as it is read: a name registered before the rule tightened is shown cleaned too.
    return client?.kind === 'registered' ? { ...client, name: cleanName(client.name) ?? client.id } : undefined;
  }
  const cached = store.getOAuthClient(clientId);
  if (cached?.kind === 'metadata_document' && cached.fetchedAt !== undefined && cached.fetchedAt > deps.now() - CLIENT_METADATA_TTL_MS) return cached;
  // Anyone may make the server fetch a URL of theirs, before signing in: capped per network so
  // the server cannot be used to send a flood of requests elsewhere.
  await takeOrRefuse(store, [cap(`oauth-metadata-fetch:${network}`, config.mcp.metadataFetchesPerHour, HOUR_MS)], (seconds) => ({
    message: `Too many app descriptions were fetched for this network; try again in ${Math.ceil(seconds / 60)} minutes.`,
    agentMessage: `Client metadata document fetches are capped per network. Try again in ${Math.ceil(seconds / 60)} minutes.`,
  }));
  const document = await deps.fetchClientMetadata(clientId);
  if (document.client_id !== clientId) throw oauthError('invalid_client', 'The client metadata document must name its own URL as client_id.');
  const redirectUris = document.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.some((uri) => redirectUriProblem(uri) !== undefined)) {
    throw oauthError('invalid_client', 'The client metadata document must list redirect_uris, each https or loopback http.');
  }
  const method = document.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') throw oauthError('invalid_client', 'Only public clients (token_endpoint_auth_method "none") are supported.');
  const client: OAuthClientRecord = {
    id: clientId,
    kind: 'metadata_document',
    name: cleanName(document.client_name) ?? new URL(clientId).hostname,
    redirectUris: redirectUris as string[],
    ...(typeof document.client_uri === 'string' && document.client_uri.startsWith('https://') ? { clientUri: document.client_uri } : {}),
    createdAt: cached?.createdAt ?? deps.now(),
    fetchedAt: deps.now(),
  };
  await store.putOAuthClient(client);
  return client;
}

/**
 * A client's self-chosen name, one line and short, or undefined. Control characters (C0, DEL, C1)
 * and format characters (bidi overrides and isolates, zero-width ones) are dropped, and line and
 * paragraph separators made spaces: on the consent page they could turn the rest of its line
 * around, the "name given by the app" tag with it, or hide part of the name (as the device page
 * refuses them in a device's name).
 */
export function cleanName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/[\s\p{Zl}\p{Zp}]+/gu, ' ')
    .trim();
  return name === '' ? undefined : name.slice(0, 80);
}
