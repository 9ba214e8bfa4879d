import { randomBytes } from 'node:crypto';
import { domainUrl, siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { ACCESS_PATHS, ACCESS_TICKET_LIFETIME_MS, hasRole, safeReturnPath } from '../rules/index.js';
import { hashPassword, hashToken, type AccessChange, type SiteRecord } from '../store/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import type { SiteAccessView } from '../contract/index.js';

export type AccessMode = 'public' | 'password' | 'members';
export const ACCESS_MODES: readonly AccessMode[] = ['public', 'password', 'members'];
/** Who may see the previews of a public site. */
export type PreviewsMode = 'public' | 'members';
export const PREVIEWS_MODES: readonly PreviewsMode[] = ['public', 'members'];
export const PASSWORD_MIN_CHARS = 8;
export const PASSWORD_MAX_CHARS = 128;

export interface AccessTicket {
  /** Address on the site host that redeems the ticket and returns to `path`. */
  url: string;
}

export interface AccessOperations {
  /** `GET /v1/sites/:name/access` (members). */
  get(caller: Caller, name: string): SiteAccessView;
  /**
   * `PUT /v1/sites/:name/access` (owners, account credentials): `mode` (with `password`) and/or
   * `previews`; what is left out stays as it is.
   */
  set(caller: Caller, name: string, body: { mode?: unknown; password?: unknown; previews?: unknown }): Promise<SiteAccessView>;
  /**
   * The host of the members-only hop that a member of the site asked for: `<name>`,
   * `<number>--<name>`, or one of the site's active custom domains (`bad_request` for any other
   * domain, so the hop never leads to a host the site does not own).
   */
  hopHost(caller: Caller, name: string, host: HopHost): string;
  /**
   * The app's half of the members-only hop: a single-use ticket for a signed-in member, bound to
   * the site and to the host (`hopHost`) it was asked for, and the address on that host that
   * redeems it.
   */
  issueTicket(caller: Caller, name: string, host: HopHost, path: string): Promise<AccessTicket>;
}

/** Which address of a site the members-only hop returns to: a preview's, a custom domain, or its own. */
export interface HopHost {
  preview?: number;
  domain?: string;
}

export function modeOf(site: SiteRecord): AccessMode {
  return site.access?.mode ?? 'public';
}

/** The site's previews setting as the API spells it (it takes effect while the site is public). */
export function previewsOf(site: SiteRecord): PreviewsMode {
  return site.previews ? 'members' : 'public';
}

/** Who may see a site (issue 23): public, a shared password, or its members only. */
export function accessOperations(deps: OperationsDeps): AccessOperations {
  const { store, config, log } = deps;
  const view = (site: SiteRecord, agentMessage?: string): SiteAccessView => ({
    access: { mode: modeOf(site), previews: previewsOf(site) },
    ...(agentMessage ? { agent_message: agentMessage } : {}),
  });

  return {
    get(caller, name) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      return view(site);
    },

    async set(caller, name, body) {
      const now = deps.now();
      const { site } = resolveSite(store, caller, name, 'set_access', now);
      const { mode, previews } = body;
      const usage =
        'Send {"mode": "public"}, {"mode": "members"} or {"mode": "password", "password": "<8 to 128 characters>"}, and/or {"previews": "members"} (or "public") to keep the previews of a public site to its members and preview links.';
      if (mode === undefined && previews === undefined) {
        throw new ServiceError('bad_request', 'The body needs "mode", "previews" or both.', { agentMessage: usage });
      }
      if (mode !== undefined && (typeof mode !== 'string' || !(ACCESS_MODES as readonly string[]).includes(mode))) {
        throw new ServiceError('bad_request', '"mode" must be "public", "password" or "members".', { agentMessage: usage });
      }
      if (previews !== undefined && (typeof previews !== 'string' || !(PREVIEWS_MODES as readonly string[]).includes(previews))) {
        throw new ServiceError('bad_request', '"previews" must be "public" or "members".', { agentMessage: usage });
      }
      const change: AccessChange = {};
      if (mode === 'password') {
        const password = body.password;
        if (typeof password !== 'string' || [...password].length < PASSWORD_MIN_CHARS || [...password].length > PASSWORD_MAX_CHARS) {
          throw new ServiceError('bad_request', `"password" must be ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters.`, {
            agentMessage: `Ask the user for a password of ${PASSWORD_MIN_CHARS} to ${PASSWORD_MAX_CHARS} characters and send it as "password"; it is stored only as a hash.`,
          });
        }
        change.access = { mode, passwordHash: await hashPassword(password), since: now };
      } else if (body.password !== undefined) {
        throw new ServiceError('bad_request', '"password" is only used with "mode": "password".');
      } else if (mode === 'members') {
        change.access = { mode, since: now };
      } else if (mode === 'public') {
        change.access = null;
      }
      // Turning it on again starts anew (old preview links and cookies stop); asking for what is
      // already on changes nothing, so links handed out stay good.
      if (previews === 'public') change.previews = null;
      else if (previews === 'members' && site.previews === undefined) change.previews = { mode: 'members', since: now };
      const result = await store.changeSiteAccess(site.id, change);
      if (!result.ok) throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      log.info({ site: site.name, ...(mode !== undefined ? { mode } : {}), ...(previews !== undefined ? { previews } : {}) }, 'site.access_set');
      // The mode and previews only: never the password.
      await recordEvent(deps, actorOf(caller), {
        kind: 'access.changed',
        site: result.site,
        details: { ...(mode !== undefined ? { mode } : {}), ...(previews !== undefined ? { previews } : {}) },
      });
      const url = siteUrl(config.publicUrls, site.name);
      const said: string[] = [];
      if (mode !== undefined) {
        said.push(
          mode === 'public'
            ? `${url} is public again: anyone with the address can see it.`
            : mode === 'password'
              ? `${url} now asks visitors for the password (also accepted as HTTP Basic auth, any user name). Everyone signed in before must sign in again.`
              : `${url} is now visible only to members of the site, who sign in through the Plinth app; member API tokens also open it as "Authorization: Bearer pl_…".`,
        );
      }
      if (previews !== undefined) {
        const kept = result.site.previews !== undefined;
        said.push(
          kept
            ? `Previews of ${site.name} (<number>--${site.name} addresses) are kept to members of the site and to whoever holds a preview link: the preview_url of a draft's deploy answer and of GET /v1/sites/${site.name}/revisions.${result.site.access ? ' While the site itself is protected, its previews follow its own access.' : ` The live address ${url} stays public.`}`
            : `Previews of ${site.name} follow the site's own access again${result.site.access ? '' : ': anyone with a preview address can see it'}; preview links handed out before no longer count.`,
        );
      }
      return view(result.site, said.join(' '));
    },

    hopHost(caller, name, host) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      return hopLabel(site, host);
    },

    async issueTicket(caller, name, host, path) {
      const now = deps.now();
      const { site, role } = resolveSite(store, caller, name, 'read', now);
      if (caller.kind !== 'account' || !hasRole(role, 'viewer')) throw new ServiceError('forbidden', `Only members of ${site.name} can open it.`);
      const ticket = `tk_${randomBytes(24).toString('base64url')}`;
      const label = hopLabel(site, host);
      await store.createAccessTicket(hashToken(ticket), {
        siteId: site.id,
        accountId: caller.account.id,
        host: label,
        expiresAt: now + ACCESS_TICKET_LIFETIME_MS,
      });
      const query = new URLSearchParams({ ticket, return: safeReturnPath(path) });
      const origin = host.domain !== undefined ? domainUrl(config.publicUrls, label) : siteUrl(config.publicUrls, label);
      return { url: `${origin}${ACCESS_PATHS.ticket}?${query.toString()}` };
    },
  };

  /** The host label of a hop: a custom domain only if it is one of this site's, and active. */
  function hopLabel(site: SiteRecord, host: HopHost): string {
    if (host.domain !== undefined) {
      const record = host.preview === undefined ? store.getDomain(host.domain) : undefined;
      if (record === undefined || record.siteId !== site.id || record.status !== 'active') {
        throw new ServiceError('bad_request', `${host.domain} is not an address of ${site.name}.`);
      }
      return record.domain;
    }
    return host.preview === undefined ? site.name : `${host.preview}--${site.name}`;
  }
}
