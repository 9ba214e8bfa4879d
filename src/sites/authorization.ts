import { ServiceError } from '../errors.js';
import { hasRole, isExpired, SITE_ACTIONS, type SiteAction } from '../rules/index.js';
import type { AccountRecord, Role, SiteRecord, Store } from '../store/index.js';
import { siteTokenMatches, unauthorized, type Caller } from './callers.js';
import { iso } from './views.js';

/**
 * Who may do what to a site (SPEC 3, 4.3, 5), in one place. The order of the checks is the
 * contract: no credential → 401; a site the caller cannot see → 404 (never revealing that it
 * exists); deleted or expired → 410; a claimed site's token, a site token where account
 * credentials are needed, or too small a role → 403.
 */

export interface AuthorizedSite {
  site: SiteRecord;
  /** The caller's role; a site token counts as owner of its unclaimed site. */
  role: Role;
  /** What revisions record as their author. */
  actor: string;
}

/**
 * Each thing a caller may do to a site, with what it takes (SPEC 4.3 roles, SPEC 5 credentials):
 * the least role, whether a site token is refused even before the claim, and whether a site
 * taken down for abuse (content and name frozen) refuses it.
 */
const ACTIONS: Readonly<Record<SiteAction, ActionRule>> = {
  read: { role: 'viewer' },
  list_members: { role: 'viewer', accountOnly: true },
  deploy: { role: 'editor', mustBeActive: true },
  rollback: { role: 'editor', mustBeActive: true },
  rename: { role: 'editor', accountOnly: true, mustBeActive: true },
  delete: { role: 'owner', accountOnly: true },
  manage_members: { role: 'owner', accountOnly: true },
  promote: { role: 'editor', mustBeActive: true },
  set_access: { role: 'owner', accountOnly: true, mustBeActive: true },
  // A site token is its unclaimed site's only owner, so it may delete a draft published by mistake.
  delete_revision: { role: 'owner', mustBeActive: true },
};

type ActionRule = { role: Role; accountOnly?: boolean; mustBeActive?: boolean };
const ACTION_WORDS: Record<Role, string> = { viewer: 'view', editor: 'change', owner: 'manage' };

/**
 * What the caller may do to this site right now, in `SITE_ACTIONS` order: the same rules
 * `resolveSite` enforces, for pages and agents that show or plan actions.
 */
export function permissionsOf(caller: Caller, site: SiteRecord, role: Role): SiteAction[] {
  return SITE_ACTIONS.filter((action) => refusal(caller, site, role, action) === undefined);
}

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

export function notFound(name: string, caller?: Caller): ServiceError {
  // A person in the app has no token: the page speaks of their sites.
  const seer = caller?.kind === 'account' && caller.credential === 'session' ? 'you can see' : 'this token can see';
  return new ServiceError('not_found', `There is no site named ${name} that ${seer}.`, {
    agentMessage: `Check the site name. GET /v1/sites lists the sites your API token can reach.`,
  });
}

/**
 * The site and the caller's role, or the error SPEC 5 prescribes for `action`. A site token that
 * has been claimed is refused here: its one remaining call, `GET /v1/sites/:name`, checks
 * `visibleSite`.
 */
export function resolveSite(store: Store, caller: Caller, name: string, action: SiteAction, now: number): AuthorizedSite {
  const { site, role } = visibleSite(store, caller, name);
  checkAlive(site, now);
  const refused = refusal(caller, site, role, action);
  if (refused) throw refused;
  const actor = caller.kind === 'account' ? caller.account.email : 'site_token';
  return { site, role, actor };
}

/** Why a caller who can see a live site may not do `action` to it (403), or undefined. */
function refusal(caller: Caller, site: SiteRecord, role: Role, action: SiteAction): ServiceError | undefined {
  const rule = ACTIONS[action];
  if (caller.kind === 'site_token') {
    if (site.claimed) {
      return new ServiceError('forbidden', `${site.name} has been claimed; its site token can now only report that.`, {
        agentMessage:
          `The site now belongs to an account. Call GET /v1/sites/${site.name} with this site token: if the person who claimed it chose to give you access, ` +
          `that answer carries account_token, an API token of the account, handed over only once; keep it in .service.json as "api_token" and send it from then on. ` +
          `Otherwise ask your user for an API token (pl_…) of a member of the site.`,
      });
    }
    if (rule.accountOnly) {
      return new ServiceError('forbidden', 'This needs account credentials; a site token cannot do it.', {
        agentMessage: 'Claim the site with the claim link first, then use an API token (pl_…) from the account settings.',
      });
    }
  }
  if (!hasRole(role, rule.role)) {
    const needed = rule.role === 'owner' ? 'an owner' : 'an editor or owner';
    return new ServiceError('forbidden', `Your role on ${site.name} is ${role}; only ${needed} can ${ACTION_WORDS[rule.role]} it this way.`, {
      agentMessage: `Your role on ${site.name} is ${role}. Ask an owner of the site to do this, or to make you ${needed === 'an owner' ? 'an owner' : 'an editor'}.`,
    });
  }
  if (action === 'set_access' && !site.claimed) {
    return new ServiceError('forbidden', `${site.name} is an unclaimed anonymous site; those stay public.`, {
      agentMessage: `Claim ${site.name} first with the claim link from the deploy answer (claim_url), then set its access with an API token.`,
    });
  }
  if (rule.mustBeActive && site.state === 'taken_down') {
    return new ServiceError('forbidden', `${site.name} was taken down for abuse and cannot be changed.`);
  }
  return undefined;
}

/** The site if the caller may see it at all (404 otherwise), with the caller's role. */
export function visibleSite(store: Store, caller: Caller, name: string): { site: SiteRecord; role: Role } {
  if (caller.kind === 'anonymous') {
    throw unauthorized(
      `Reading or changing ${name} needs its site token or an API token.`,
      `Send the site_token of ${name} (see .service.json) or an API token as "Authorization: Bearer <token>".`,
    );
  }
  const site = store.getSite(name);
  if (site === undefined) throw notFound(name, caller);
  if (caller.kind === 'site_token') {
    if (caller.siteId !== site.id || !siteTokenMatches(site, caller.tokenHash)) throw notFound(name);
    return { site, role: 'owner' };
  }
  const role = store.getRole(site.id, caller.account.id);
  if (role === undefined) throw notFound(name, caller);
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
