import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { hashToken, type AccountRecord, type SiteRecord, type Store } from '../store/index.js';

/**
 * Who is calling, from `Authorization: Bearer <token>` (SPEC 5). Tokens are looked up by their
 * sha256 only: site tokens (`st_`) and account API tokens (`pl_`); OAuth tokens (`pla_`) are for
 * the MCP server and get 401 here.
 */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'site_token'; tokenHash: string; siteId: string }
  | { kind: 'account'; account: AccountRecord; tokenHash: string };

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const invalid = (message: string, agentMessage?: string): ServiceError =>
  new ServiceError('unauthorized', message, { agentMessage, headers: { 'WWW-Authenticate': 'Bearer' } });

export function identifyCaller(authorization: string | undefined, store: Store): Caller {
  if (authorization === undefined || authorization.trim() === '') return { kind: 'anonymous' };
  const match = BEARER.exec(authorization);
  if (!match) throw invalid('The Authorization header must be "Bearer <token>".');
  const token = match[1]!;
  if (token.startsWith('pla_')) {
    throw invalid(
      'OAuth access tokens work only with the MCP server.',
      'This token is for the MCP server. Use an API token (pl_…) from the account settings for REST calls.',
    );
  }
  if (token.startsWith('st_')) {
    const record = store.findToken(hashToken(token));
    if (record?.kind === 'site') return { kind: 'site_token', tokenHash: hashToken(token), siteId: record.siteId };
    throw invalid('This site token is not valid.', 'The site token was not recognised. Check .service.json for the token returned by the deploy that created the site.');
  }
  if (token.startsWith('pl_')) {
    const tokenHash = hashToken(token);
    const record = store.findToken(tokenHash);
    const account = record?.kind === 'api' ? store.getAccount(record.accountId) : undefined;
    if (account) return { kind: 'account', account, tokenHash };
  }
  throw invalid('This token is not valid.', 'The token was not recognised. Create an API token in the account settings and send it as "Authorization: Bearer pl_…".');
}

/** Constant-time check that a site token belongs to the site (defence in depth over the index). */
export function siteTokenMatches(site: SiteRecord, tokenHash: string): boolean {
  if (!site.siteTokenHash) return false;
  const expected = Buffer.from(site.siteTokenHash, 'hex');
  const given = Buffer.from(tokenHash, 'hex');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
