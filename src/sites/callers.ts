import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { hashToken, type AccountRecord, type SiteRecord, type Store } from '../store/index.js';

/**
 * Who is calling (SPEC 5), whatever the surface. Tokens are looked up by their sha256 only: site
 * tokens (`st_`), API tokens (`pl_`), OAuth access tokens (`pla_`, MCP only); a signed-in person
 * in the app arrives with the account their session belongs to.
 */
export type Caller =
  | { kind: 'anonymous' }
  /** `token` is kept in memory only: the claim poll opens the account token sealed with it. */
  | { kind: 'site_token'; tokenHash: string; siteId: string; token: string }
  | { kind: 'account'; account: AccountRecord; tokenHash: string; credential: AccountCredential };

export type AccountCredential = 'api_token' | 'oauth' | 'session';

/** Where a bearer token was presented: OAuth access tokens work only on the MCP host. */
export type Surface = 'rest' | 'mcp';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function unauthorized(message: string, agentMessage?: string): ServiceError {
  return new ServiceError('unauthorized', message, { agentMessage, headers: { 'WWW-Authenticate': 'Bearer' } });
}

/**
 * The caller behind an `Authorization` header value (absent: anonymous). Throws `unauthorized`
 * for a malformed header or a token that is unknown, revoked, expired or not for this surface.
 * `resolveOAuth` recognises `pla_` tokens (the MCP edge passes the one bound to its resource).
 */
export function identifyBearer(
  authorization: string | undefined,
  store: Store,
  surface: Surface,
  resolveOAuth?: (token: string) => AccountRecord | undefined,
): Caller {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'anonymous' };
  const match = BEARER.exec(authorization);
  if (!match) throw unauthorized('The Authorization header must be "Bearer <token>".');
  const token = match[1]!;
  if (token.startsWith('pla_')) {
    if (surface !== 'mcp') {
      throw unauthorized(
        'OAuth access tokens work only with the MCP server.',
        'This token is for the MCP server. Use an API token (pl_…) from the account settings for REST calls.',
      );
    }
    const account = resolveOAuth?.(token);
    if (account) return { kind: 'account', account, tokenHash: hashToken(token), credential: 'oauth' };
    throw unauthorized(
      'This access token is not valid or has expired.',
      'The OAuth access token expired or was revoked. Refresh it, or connect the app again.',
    );
  }
  if (token.startsWith('st_')) {
    const tokenHash = hashToken(token);
    const record = store.findToken(tokenHash);
    if (record?.kind === 'site') return { kind: 'site_token', tokenHash, siteId: record.siteId, token };
    throw unauthorized(
      'This site token is not valid.',
      'The site token was not recognised. Check .service.json for the token returned by the deploy that created the site.',
    );
  }
  if (token.startsWith('pl_')) {
    const tokenHash = hashToken(token);
    const record = store.findToken(tokenHash);
    const account = record?.kind === 'api' ? store.getAccount(record.accountId) : undefined;
    if (account) return { kind: 'account', account, tokenHash, credential: 'api_token' };
  }
  throw unauthorized(
    'This token is not valid.',
    'The token was not recognised. Create an API token in the account settings and send it as "Authorization: Bearer pl_…".',
  );
}

/** A signed-in person of the account app; `sessionHash` identifies the session for rate limits. */
export function personCaller(account: AccountRecord, sessionHash: string): Caller {
  return { kind: 'account', account, tokenHash: sessionHash, credential: 'session' };
}

/** Constant-time check that a site token belongs to the site (defence in depth over the index). */
export function siteTokenMatches(site: SiteRecord, tokenHash: string): boolean {
  if (!site.siteTokenHash) return false;
  const expected = Buffer.from(site.siteTokenHash, 'hex');
  const given = Buffer.from(tokenHash, 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
