import { ServiceError } from '../errors.js';
import type { AccountRecord, Role, SiteRecord, Store } from '../store/index.js';
import { siteTokenMatches, unauthorized, type Caller } from './callers.js';
import { iso, isExpired } from './views.js';

/**
 * Who may do what to a site (SPEC 3, 4.3, 5), in one place. The order of the checks is the
 * contract: no credential → 401; a site the caller cannot see → 404 (never revealing that it
 * exists); deleted or expired → 410; a claimed site's token, a site token where account
 * credentials are needed, or too small a role → 403.
 */

/** `read`: view the site and its history; `deploy`: also roll back; `admin`: invite, rename, delete. */
export type Need = 'read' | 'deploy' | 'admin';

export interface SiteAccess {
  site: SiteRecord;
  /** The caller's role; a site token counts as owner of its unclaimed site. */
  role: Role;
  /** What revisions record as their author. */
  actor: string;
}

export interface ResolveOptions {
  /** Site tokens are refused (403) even before the claim. */
  accountOnly?: boolean;
  /** Refuse (403) when the site was taken down for abuse: its content and name are frozen. */
  mustBeActive?: boolean;
}

const RANK: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };
const NEED_ROLE: Record<Need, Role> = { read: 'viewer', deploy: 'editor', admin: 'owner' };
const NEED_WORDS: Record<Need, string> = { read: 'view', deploy: 'change', admin: 'manage' };

/** For endpoints about the account itself: an API token (`pl_…`) is required. */
export function requireAccount(caller: Caller, what: string): AccountRecord {
  if (caller.kind === 'account') return caller.account;
  if (caller.kind === 'anonymous') {
    throw unauthorized(`${what} needs an API token.`, 'Send an API token from the account settings as "Authorization: Bearer pl_…".');
  }
  throw new ServiceError('forbidden', `A site token cannot be used for ${what}.`, {
    agentMessage: 'Site tokens (st_…) only reach their own site. Use an API token (pl_…) from the account settings.',
  });
}

export function notFound(name: string): ServiceError {
  return new ServiceError('not_found', `There is no site named ${name} that this token can see.`, {
    agentMessage: `Check the site name. GET /v1/sites lists the sites your API token can reach.`,
  });
}

/**
 * The site and the caller's role, or the error SPEC 5 prescribes. A site token that has been
 * claimed is refused here: its one remaining call, `GET /v1/sites/:name`, checks `visibleSite`.
 */
export function resolveSite(store: Store, caller: Caller, name: string, need: Need, now: number, options: ResolveOptions = {}): SiteAccess {
  const { site, role } = visibleSite(store, caller, name);
  checkAlive(site, now);
  if (caller.kind === 'site_token') {
    if (site.claimed) {
      throw new ServiceError('forbidden', `${site.name} has been claimed; its site token can now only report that.`, {
        agentMessage: 'The site now belongs to an account. Use an API token (pl_…) of a member of the site instead of the site token.',
      });
    }
    if (options.accountOnly) {
      throw new ServiceError('forbidden', 'This needs account credentials; a site token cannot do it.', {
        agentMessage: 'Claim the site with the claim link first, then use an API token (pl_…) from the account settings.',
      });
    }
  }
  if (RANK[role] < RANK[NEED_ROLE[need]]) {
    const needed = NEED_ROLE[need] === 'owner' ? 'an owner' : 'an editor or owner';
    throw new ServiceError('forbidden', `Your role on ${site.name} is ${role}; only ${needed} can ${NEED_WORDS[need]} it this way.`, {
      agentMessage: `Your role on ${site.name} is ${role}. Ask an owner of the site to do this, or to make you ${needed === 'an owner' ? 'an owner' : 'an editor'}.`,
    });
  }
  if (options.mustBeActive && site.state === 'taken_down') {
    throw new ServiceError('forbidden', `${site.name} was taken down for abuse and cannot be changed.`);
  }
  const actor = caller.kind === 'account' ? caller.account.email : 'site_token';
  return { site, role, actor };
}

/** The site if the caller may see it at all (404 otherwise), with the caller's role. */
export function visibleSite(store: Store, caller: Caller, name: string): { site: SiteRecord; role: Role } {
  if (caller.kind === 'anonymous') {
    throw unauthorized(`Reading or changing ${name} needs its site token or an API token.`, `Send the site_token of ${name} (see .service.json) or an API token as "Authorization: Bearer <token>".`);
  }
  const site = store.getSite(name);
  if (site === undefined) throw notFound(name);
  if (caller.kind === 'site_token') {
    if (caller.siteId !== site.id || !siteTokenMatches(site, caller.tokenHash)) throw notFound(name);
    return { site, role: 'owner' };
  }
  const role = store.getRole(site.id, caller.account.id);
  if (role === undefined) throw notFound(name);
  return { site, role };
}

/** 410 for a deleted site and for an unclaimed one past its expiry. */
export function checkAlive(site: SiteRecord, now: number): void {
  if (site.state === 'deleted') {
    throw new ServiceError('gone', `The site ${site.name} was deleted.`, {
      agentMessage: `${site.name} was deleted and cannot be used any more. Deploy again without "site" to publish a new site.`,
    });
  }
  if (isExpired(site, now)) {
    throw new ServiceError('gone', `The site ${site.name} expired on ${iso(site.expiresAt!)}.`, {
      agentMessage: 'Unclaimed sites expire after 72 hours. Deploy again without "site" to publish a new one.',
    });
  }
}
