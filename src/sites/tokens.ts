import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { hashToken, type AccountRecord, type ApiTokenInfo } from '../store/index.js';
import { requireAccount } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { iso } from './views.js';

const TOKEN_BYTES = 32;
const MAX_NAME_LENGTH = 80;
/** Last-use times are written at most this often per token and thread (each is a write). */
const TOUCH_EVERY_MS = 60_000;

export interface TokenView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface TokenOperations {
  /** A new API token (`pl_…`); the token is in the result only, never stored. */
  create(caller: Caller, name: unknown): Promise<{ token: string; info: TokenView }>;
  list(caller: Caller): TokenView[];
  /** Revoked tokens get 401 on their next request. */
  revoke(caller: Caller, tokenId: string): Promise<void>;
  /** Notes that an API token was used (throttled; never blocks the request). */
  noteUse(caller: Caller): void;
}

/** A fresh API token, as the app and the admin CLI make them. */
export function newApiToken(): string {
  return `pl_${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

/** A token name as people type it: trimmed, one line, not empty. */
export function parseTokenName(value: unknown): string {
  const name = typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  if (name === '' || name.length > MAX_NAME_LENGTH) {
    throw new ServiceError('bad_request', `A token needs a name of 1 to ${MAX_NAME_LENGTH} characters, such as "laptop" or "CI".`, {
      details: { field: 'name' },
    });
  }
  return name;
}

export function tokenView(info: ApiTokenInfo): TokenView {
  return { id: info.id, name: info.name, created_at: iso(info.createdAt), last_used_at: info.lastUsedAt === undefined ? null : iso(info.lastUsedAt) };
}

/** API tokens of an account (SPEC 5): made and revoked by a signed-in person. */
export function tokenOperations(deps: OperationsDeps): TokenOperations {
  const { store, log } = deps;
  const lastTouch = new Map<string, number>();

  const person = (caller: Caller, what: string): AccountRecord => {
    const account = requireAccount(caller, what);
    if (caller.kind === 'account' && caller.credential !== 'session') {
      throw new ServiceError('forbidden', 'API tokens are managed by a signed-in person in the account app.');
    }
    return account;
  };

  return {
    async create(caller, rawName) {
      const account = person(caller, 'creating API tokens');
      const name = parseTokenName(rawName);
      const token = newApiToken();
      const info = await store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name });
      log.info({ account: account.id, token: info.id }, 'token.created');
      await recordEvent(deps, actorOf(caller), { kind: 'token.created', accountId: account.id, details: { token: info.id, name } });
      return { token, info: tokenView(info) };
    },
    list(caller) {
      const account = person(caller, 'listing API tokens');
      return store.listApiTokens(account.id).map(tokenView);
    },
    async revoke(caller, tokenId) {
      const account = person(caller, 'revoking API tokens');
      if (!(await store.revokeApiToken(account.id, tokenId))) {
        throw new ServiceError('not_found', 'This account has no such API token (it may be revoked already).');
      }
      log.info({ account: account.id, token: tokenId }, 'token.revoked');
      await recordEvent(deps, actorOf(caller), { kind: 'token.revoked', accountId: account.id, details: { token: tokenId } });
    },
    noteUse(caller) {
      if (caller.kind !== 'account' || caller.credential !== 'api_token') return;
      const now = deps.now();
      const last = lastTouch.get(caller.tokenHash);
      if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
      if (lastTouch.size > 10_000) lastTouch.clear();
      lastTouch.set(caller.tokenHash, now);
      deps.followUps.track(store.touchApiToken(caller.tokenHash, now).catch((err: unknown) => log.warn({ err }, 'token.touch_failed')));
    },
  };
}
