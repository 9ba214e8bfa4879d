import type { Config } from '../config.js';
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { isCodeChallenge, isCodeVerifier, isLoopbackRedirect, matchResource, redirectUriMatches, redirectUriProblem, s256 } from '../rules/index.js';
import { hashToken, newId, type AccountRecord, type OAuthClientRecord, type OAuthGrantRecord } from '../store/index.js';
import { requireAccount } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';
import { cleanName, clientFor, invalidClient, OAUTH_PATHS, OAUTH_SCOPE, oauthError } from './oauth-shared.js';
import { DEVICE_GRANT_TYPE, exchangeDeviceCode, type DeviceTokenResponse } from './device.js';
import { accountActor, recordEvent } from './events.js';
import { iso } from './views.js';

export { OAUTH_PATHS, OAUTH_SCOPE } from './oauth-shared.js';

/** SPEC 5 and 8: OAuth access tokens are valid one hour. */
export const ACCESS_TOKEN_LIFETIME_MS = 3600_000;
/** Authorization codes are single-use and live this long. */
export const AUTHORIZATION_CODE_LIFETIME_MS = 60_000;
/** A refresh token lives this long unused; every use rotates it and starts a new period. */
export const REFRESH_TOKEN_LIFETIME_MS = 90 * 24 * 3600_000;

export interface AuthorizationRequest {
  client: { id: string; name: string; kind: OAuthClientRecord['kind']; clientUri?: string };
  redirectUri: string;
  redirectHost: string;
  state?: string;
  codeChallenge: string;
  resource: string;
  scope: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** A connected MCP app, as the tokens page lists it. */
export interface ConnectionView {
  id: string;
  client_name: string;
  client_id: string;
  redirect_host: string;
  connected_at: string;
  renewed_at: string | null;
}

export interface OAuthOperations {
  /** RFC 8414 authorization server metadata. */
  metadata(): Record<string, unknown>;
  /** RFC 7591 registration of a public client; capped per network. */
  register(body: unknown, network: string): Promise<Record<string, unknown>>;
  /**
   * Checks an authorization request. Refusals are `bad_request` with `details.oauth_error`; those
   * with `details.redirect` may be reported to the client's redirect URI, the others (unknown
   * client, unregistered redirect URI) only to the person.
   */
  checkAuthorization(params: URLSearchParams, network: string): Promise<AuthorizationRequest>;
  /** The person allowed the app: a code for it, as the URL to send the browser to. */
  approve(caller: Caller, request: AuthorizationRequest): Promise<string>;
  /** Where to send the browser with an error (RFC 6749 §4.1.2.1, with `iss` of RFC 9207). */
  errorRedirect(request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>, error: string, description: string): string;
  /** The token endpoint (authorization_code with PKCE, refresh_token with rotation, a device's code). */
  token(form: URLSearchParams): Promise<TokenResponse | DeviceTokenResponse>;
  /**
   * RFC 7009: revoking a refresh token disconnects the app; an access token stops alone; an API
   * token a device sign-in issued is revoked (when `client_id` is sent, only by that client).
   */
  revoke(form: URLSearchParams): Promise<void>;
  /** The account behind a `pla_` token, when it is unexpired, its grant stands and it is for one of `audiences`. */
  resolveAccessToken(token: string, audiences: readonly string[]): AccountRecord | undefined;
  connections(caller: Caller): ConnectionView[];
  /** Disconnects an app: its tokens stop at once. */
  disconnect(caller: Caller, grantId: string): Promise<void>;
}

export function oauthOperations(deps: OperationsDeps): OAuthOperations {
  return {
    metadata: () => authorizationServerMetadata(deps),
    register: (body, network) => registerClient(deps, body, network),
    checkAuthorization: (params, network) => checkAuthorization(deps, params, network),
    approve: (caller, request) => approveAuthorization(deps, caller, request),
    errorRedirect: (request, error, description) => errorRedirect(deps, request, error, description),
    token: (form) => issueTokens(deps, form),
    revoke: (form) => revokeToken(deps, form),
    resolveAccessToken: (token, audiences) => resolveAccessToken(deps, token, audiences),
    connections: (caller) => listConnections(deps, caller),
    disconnect: (caller, grantId) => disconnectApp(deps, caller, grantId),
  };
}

/** The MCP server's addresses that tokens may be for (RFC 8707 resources). */
const resourcesOf = (config: Pick<Config, 'publicUrls'>): string[] => [`${config.publicUrls.mcp}/`, `${config.publicUrls.mcp}/mcp`];

function newTokens(now: number): {
  access: string;
  refresh: string;
  issued: { accessHash: string; accessExpiresAt: number; refreshHash: string; refreshExpiresAt: number };
} {
  const access = `pla_${randomBytes(32).toString('base64url')}`;
  const refresh = `plr_${randomBytes(32).toString('base64url')}`;
  return {
    access,
    refresh,
    issued: {
      accessHash: hashToken(access),
      accessExpiresAt: now + ACCESS_TOKEN_LIFETIME_MS,
      refreshHash: hashToken(refresh),
      refreshExpiresAt: now + REFRESH_TOKEN_LIFETIME_MS,
    },
  };
}

const tokenResponse = (access: string, refresh: string, scope: string): TokenResponse => ({
  access_token: access,
  token_type: 'Bearer',
  expires_in: ACCESS_TOKEN_LIFETIME_MS / 1000,
  refresh_token: refresh,
  scope,
});

/** The resource a token request names, which must be the one the grant is bound to. */
function checkResource(requested: string | null, bound: string): void {
  if (requested === null || requested === '') return;
  if (matchResource(requested, [bound]) === undefined) throw oauthError('invalid_target', `These tokens are for ${bound}, not ${requested}.`);
}

const appendParams = (uri: string, params: Record<string, string | undefined>): string => {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
};

/** RFC 8414 authorization server metadata. */
export function authorizationServerMetadata({ config }: Pick<OperationsDeps, 'config'>): Record<string, unknown> {
  const issuer = config.publicUrls.app;
  return {
    issuer,
    authorization_endpoint: `${issuer}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
    registration_endpoint: `${issuer}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${issuer}${OAUTH_PATHS.revoke}`,
    device_authorization_endpoint: `${issuer}${OAUTH_PATHS.deviceAuthorization}`,
    scopes_supported: [OAUTH_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_GRANT_TYPE],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: config.publicUrls.docs,
  };
}

export async function registerClient(deps: OperationsDeps, body: unknown, network: string): Promise<Record<string, unknown>> {
  const { store, config, log } = deps;
  await takeOrRefuse(store, [cap(`oauth-register:${network}`, config.mcp.registrationsPerHour, HOUR_MS)], (seconds) => ({
    message: `Too many client registrations from this network; try again in ${Math.ceil(seconds / 60)} minutes.`,
    agentMessage: 'Reuse the client_id you registered before.',
  }));
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw oauthError('invalid_client_metadata', 'The body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  const uris = fields.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) {
    throw oauthError('invalid_redirect_uri', 'redirect_uris must list 1 to 10 redirect URIs.');
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw oauthError('invalid_redirect_uri', `The redirect URI ${JSON.stringify(uri)} ${problem}.`);
  }
  const grantTypes = fields.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grantTypes) || grantTypes.some((type) => type !== 'authorization_code' && type !== 'refresh_token')) {
    throw oauthError('invalid_client_metadata', 'grant_types may only hold "authorization_code" and "refresh_token".');
  }
  const responseTypes = fields.response_types ?? ['code'];
  if (!Array.isArray(responseTypes) || responseTypes.some((type) => type !== 'code')) {
    throw oauthError('invalid_client_metadata', 'response_types may only hold "code".');
  }
  const clientUri = typeof fields.client_uri === 'string' && fields.client_uri.startsWith('https://') ? fields.client_uri : undefined;
  const client: OAuthClientRecord = {
    id: `mcp_${randomBytes(18).toString('base64url')}`,
    kind: 'registered',
    name: cleanName(fields.client_name) ?? new URL(uris[0] as string).host,
    redirectUris: uris as string[],
    ...(clientUri ? { clientUri } : {}),
    createdAt: deps.now(),
  };
  await store.putOAuthClient(client);
  log.info({ client: client.id }, 'oauth.client_registered');
  // Public clients only: whatever method was asked for, the answer says "none" and no secret.
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(clientUri ? { client_uri: clientUri } : {}),
    scope: OAUTH_SCOPE,
  };
}

export async function checkAuthorization(deps: OperationsDeps, params: URLSearchParams, network: string): Promise<AuthorizationRequest> {
  const { config } = deps;
  const clientId = params.get('client_id') ?? '';
  const client = clientId === '' ? undefined : await clientFor(deps, clientId, network);
  if (!client) throw oauthError('invalid_client', 'The app that sent you here is not registered with Plinth.');
  const redirectUri = params.get('redirect_uri') ?? '';
  if (redirectUri === '' || !redirectUriMatches(redirectUri, client.redirectUris)) {
    throw oauthError('invalid_request', 'The app asked to send you back to an address it did not register, so Plinth will not send you there.');
  }
  const state = params.get('state') ?? undefined;
  const redirect = (error: string, description: string): ServiceError =>
    new ServiceError('bad_request', description, {
      details: { oauth_error: error, redirect: true, redirect_uri: redirectUri, ...(state !== undefined ? { state } : {}) },
    });
  if (params.get('response_type') !== 'code') throw redirect('unsupported_response_type', 'Only response_type=code is supported.');
  const challenge = params.get('code_challenge');
  if (params.get('code_challenge_method') !== 'S256' || !isCodeChallenge(challenge)) {
    throw redirect('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  }
  const requestedResources = params.getAll('resource');
  if (requestedResources.length > 1) throw redirect('invalid_target', 'Name one resource: the MCP server.');
  const resource = requestedResources.length === 0 ? resourcesOf(config)[0]! : matchResource(requestedResources[0]!, resourcesOf(config));
  if (resource === undefined) throw redirect('invalid_target', `Plinth issues tokens only for its MCP server (${resourcesOf(config)[0]}).`);
  const redirectUrl = new URL(redirectUri);
  return {
    client: { id: client.id, name: client.name, kind: client.kind, ...(client.clientUri ? { clientUri: client.clientUri } : {}) },
    redirectUri,
    redirectHost: isLoopbackRedirect(redirectUrl) ? `${redirectUrl.hostname} (this computer)` : redirectUrl.host,
    ...(state !== undefined ? { state } : {}),
    codeChallenge: challenge,
    resource,
    scope: OAUTH_SCOPE,
  };
}

export async function approveAuthorization(deps: OperationsDeps, caller: Caller, request: AuthorizationRequest): Promise<string> {
  const { store, config, log } = deps;
  const account = requireAccount(caller, 'connecting an app');
  const code = `plc_${randomBytes(32).toString('base64url')}`;
  await store.createAuthorizationCode(hashToken(code), {
    clientId: request.client.id,
    accountId: account.id,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    scope: request.scope,
    expiresAt: deps.now() + AUTHORIZATION_CODE_LIFETIME_MS,
  });
  log.info({ account: account.id, client: request.client.id }, 'oauth.approved');
  return appendParams(request.redirectUri, { code, state: request.state, iss: config.publicUrls.app });
}

export function errorRedirect(
  { config }: Pick<OperationsDeps, 'config'>,
  request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  error: string,
  description: string,
): string {
  return appendParams(request.redirectUri, { error, error_description: description, state: request.state, iss: config.publicUrls.app });
}

export async function issueTokens(deps: OperationsDeps, form: URLSearchParams): Promise<TokenResponse | DeviceTokenResponse> {
  const { store, log } = deps;
  const grantType = form.get('grant_type');
  const clientId = form.get('client_id') ?? '';
  if (clientId === '') throw invalidClient('client_id is required (public clients authenticate with it alone).');

  if (grantType === 'authorization_code') {
    const code = form.get('code') ?? '';
    const verifier = form.get('code_verifier');
    const redirectUri = form.get('redirect_uri') ?? '';
    if (code === '') throw oauthError('invalid_request', 'code is required.');
    if (!isCodeVerifier(verifier)) throw oauthError('invalid_request', 'code_verifier is required: 43-128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~".');
    const client = store.getOAuthClient(clientId);
    if (!client) throw invalidClient('Unknown client_id.');
    const tokens = newTokens(deps.now());
    let refusal: ServiceError | undefined;
    const outcome = await store.redeemAuthorizationCode(
      hashToken(code),
      (bound) => {
        if (bound.clientId !== clientId) refusal = oauthError('invalid_grant', 'This code was issued to another client.');
        else if (bound.redirectUri !== redirectUri) refusal = oauthError('invalid_grant', 'redirect_uri differs from the authorization request.');
        else if (s256(verifier) !== bound.codeChallenge) refusal = oauthError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE).');
        else {
          try {
            checkResource(form.get('resource'), bound.resource);
          } catch (err) {
            refusal = err as ServiceError;
          }
        }
        return refusal === undefined;
      },
      // The grant is made only when redirect_uri equals the code's, a URL checked at
      // authorization; until then it is the client's text and may be no URL at all.
      { id: newId('grant_'), clientName: cleanName(client.name) ?? client.id, redirectHost: URL.canParse(redirectUri) ? new URL(redirectUri).host : '' },
      tokens.issued,
    );
    if (!outcome.ok) {
      if (outcome.reason === 'mismatch' && refusal) throw refusal;
      if (outcome.reason === 'reused') log.warn({ client: clientId }, 'oauth.code_reused');
      throw oauthError(
        'invalid_grant',
        outcome.reason === 'expired' ? 'The code expired (codes live 60 seconds).' : 'The code is not valid (unknown or already used).',
      );
    }
    log.info({ grant: outcome.grant.id, client: clientId }, 'oauth.tokens_issued');
    return tokenResponse(tokens.access, tokens.refresh, outcome.grant.scope);
  }

  if (grantType === 'refresh_token') {
    const refresh = form.get('refresh_token') ?? '';
    if (refresh === '') throw oauthError('invalid_request', 'refresh_token is required.');
    const tokens = newTokens(deps.now());
    let refusal: ServiceError | undefined;
    const outcome = await store.rotateRefreshToken(
      hashToken(refresh),
      (grant) => {
        if (grant.clientId !== clientId) refusal = oauthError('invalid_grant', 'This refresh token was issued to another client.');
        else {
          try {
            checkResource(form.get('resource'), grant.resource);
          } catch (err) {
            refusal = err as ServiceError;
          }
        }
        return refusal === undefined;
      },
      tokens.issued,
    );
    if (!outcome.ok) {
      if (outcome.reason === 'mismatch' && refusal) throw refusal;
      if (outcome.reason === 'reused') log.warn({ client: clientId }, 'oauth.refresh_reused');
      const why: Record<string, string> = {
        reused: 'This refresh token was already used; the connection is revoked. Connect the app again.',
        revoked: 'The connection was revoked. Connect the app again.',
        expired: 'The refresh token expired. Connect the app again.',
      };
      throw oauthError('invalid_grant', why[outcome.reason] ?? 'The refresh token is not valid.');
    }
    return tokenResponse(tokens.access, tokens.refresh, outcome.grant.scope);
  }

  if (grantType === DEVICE_GRANT_TYPE) return exchangeDeviceCode(deps, form, clientId);

  throw oauthError('unsupported_grant_type', `grant_type must be authorization_code, refresh_token or ${DEVICE_GRANT_TYPE}.`);
}

export async function revokeToken(deps: OperationsDeps, form: URLSearchParams): Promise<void> {
  const { store } = deps;
  const token = form.get('token') ?? '';
  const clientId = form.get('client_id') ?? '';
  const record = token === '' ? undefined : store.findToken(hashToken(token));
  if (record?.kind === 'api') {
    // Only tokens a device sign-in issued: those made on the tokens page are the person's to revoke there.
    if (record.clientId === undefined || record.id === undefined || (clientId !== '' && clientId !== record.clientId)) return;
    if (await store.revokeApiToken(record.accountId, record.id)) {
      deps.log.info({ account: record.accountId, token: record.id }, 'oauth.device_token_revoked');
      // The device gave up its own token (plinth logout): the account's change, in its log.
      const account = store.getAccount(record.accountId);
      if (account) await recordEvent(deps, accountActor(account), { kind: 'token.revoked', accountId: account.id, details: { token: record.id } });
    }
    return;
  }
  if (record?.kind !== 'oauth_access' && record?.kind !== 'oauth_refresh') return;
  const grant = store.getOAuthGrant(record.grantId);
  // RFC 7009 §2.1: a client may revoke only its own tokens; anything else is silently ignored.
  if (!grant || grant.clientId !== clientId) return;
  if (record.kind === 'oauth_refresh') await store.revokeOAuthGrant(grant.id, 'revoked');
  else await store.removeOAuthToken(hashToken(token));
}

export function resolveAccessToken(deps: OperationsDeps, token: string, audiences: readonly string[]): AccountRecord | undefined {
  const { store } = deps;
  const record = store.findToken(hashToken(token));
  if (record?.kind !== 'oauth_access' || record.expiresAt <= deps.now()) return undefined;
  const grant = store.getOAuthGrant(record.grantId);
  if (!grant || grant.revokedAt !== undefined || matchResource(grant.resource, audiences) === undefined) return undefined;
  return store.getAccount(grant.accountId);
}

export function listConnections(deps: OperationsDeps, caller: Caller): ConnectionView[] {
  const { store } = deps;
  const account = requireAccount(caller, 'listing connected apps');
  return store.listOAuthGrants(account.id).map(connectionView);
}

export async function disconnectApp(deps: OperationsDeps, caller: Caller, grantId: string): Promise<void> {
  const { store, log } = deps;
  const account = requireAccount(caller, 'disconnecting apps');
  if (!(await store.revokeOAuthGrant(grantId, 'disconnected', account.id))) {
    throw new ServiceError('not_found', 'This account has no such connected app (it may be disconnected already).');
  }
  log.info({ account: account.id, grant: grantId }, 'oauth.disconnected');
}

function connectionView(grant: OAuthGrantRecord): ConnectionView {
  return {
    id: grant.id,
    client_name: grant.clientName,
    client_id: grant.clientId,
    redirect_host: grant.redirectHost,
    connected_at: iso(grant.createdAt),
    renewed_at: grant.lastRefreshedAt === undefined ? null : iso(grant.lastRefreshedAt),
  };
}
