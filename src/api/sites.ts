import { randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { hashToken, type Role, type SiteRecord } from '../store/index.js';
import { checkAlive, notFound, requireAccount, resolveSite, visibleSite } from './access.js';
import { objectBody, type Endpoint, type EndpointDeps } from './handler.js';
import { decodeCursor, encodeCursor, pageLimit } from './paging.js';
import { renameProblem } from './site-names.js';
import { iso, siteView, type SiteView } from './views.js';

/** Deletion approvals wait this long for the person to confirm. */
export const APPROVAL_LIFETIME_MS = 24 * 3600_000;

export interface SiteEndpoints {
  list: Endpoint;
  get: Endpoint;
  rename: Endpoint;
  remove: Endpoint;
}

/** `GET /v1/sites`, `GET|DELETE /v1/sites/:name`, `POST /v1/sites/:name/rename` (SPEC 4.3). */
export function siteEndpoints(deps: EndpointDeps): SiteEndpoints {
  const { store, config, log } = deps;
  const view = (site: SiteRecord, role: Role): SiteView =>
    siteView(site, role, site.liveRevision ? store.getRevision(site.liveRevision) : undefined, config.publicUrls);

  return {
    async list({ caller, request }) {
      const account = requireAccount(caller, 'listing sites');
      const after = decodeCursor(request.query, (id) => /^site_[a-z2-7]+$/.test(id));
      const page = store.listSitesOf(account.id, { after, limit: pageLimit(request.query) });
      return {
        status: 200,
        body: {
          sites: page.sites.map(({ site, role }) => view(site, role)),
          next_cursor: page.nextAfter === undefined ? null : encodeCursor(page.nextAfter),
        },
      };
    },

    async get({ caller, request }) {
      const name = request.params[0]!;
      const { site, role } = visibleSite(store, caller, name);
      checkAlive(site, deps.now());
      // The claim poll (SPEC 2, 5): once claimed, the site token learns that and nothing more.
      if (caller.kind === 'site_token' && site.claimed) {
        return { status: 200, body: { claimed: true } };
      }
      return { status: 200, body: view(site, role) };
    },

    async rename({ caller, request, body }) {
      const name = request.params[0]!;
      const { site, role } = resolveSite(store, caller, name, 'deploy', deps.now(), { accountOnly: true, mustBeActive: true });
      const wanted = objectBody(body, '{"name": "my-site"}').name;
      if (typeof wanted !== 'string') throw new ServiceError('bad_request', 'The body needs "name", the new site name.');
      const problem = renameProblem(wanted);
      if (problem) {
        throw new ServiceError('bad_request', `Cannot rename ${site.name} to "${wanted}": ${problem}`, {
          agentMessage: `${problem} Choose another name: 4-63 characters of a-z, 0-9 and "-", not starting or ending with "-".`,
          details: { reason: 'invalid_name' },
        });
      }
      const result = await store.renameSite(site.name, wanted);
      if (!result.ok) {
        if (result.reason === 'not_found') throw notFound(name);
        throw new ServiceError('bad_request', `The name ${wanted} is taken or was used before; names are never reused.`, {
          agentMessage: `${wanted} is not available. Ask the user for another name.`,
          details: { reason: 'name_taken' },
        });
      }
      log.info({ site: wanted, previous: site.name }, 'site.renamed');
      const url = siteUrl(config.publicUrls, wanted);
      return {
        status: 200,
        body: {
          site: view(result.site, role),
          previous_name: site.name,
          agent_message: `The site is now at ${url} . The old address ${siteUrl(config.publicUrls, site.name)} redirects there. Update "site" and "url" in .service.json.`,
        },
      };
    },

    async remove({ caller, request }) {
      const name = request.params[0]!;
      const { site } = resolveSite(store, caller, name, 'admin', deps.now(), { accountOnly: true });
      const account = requireAccount(caller, 'deleting a site');
      const token = `ap_${randomBytes(24).toString('base64url')}`;
      const expiresAt = deps.now() + APPROVAL_LIFETIME_MS;
      await store.putConfirmation(hashToken(token), { kind: 'delete_site', siteId: site.id, requestedBy: account.id, expiresAt, status: 'pending' });
      const approveUrl = `${config.publicUrls.app}/approve/${token}`;
      log.info({ site: site.name }, 'site.delete_requested');
      return {
        status: 202,
        body: {
          approve_url: approveUrl,
          approval: { token, status: 'pending', expires_at: iso(expiresAt) },
          agent_message:
            `Nothing is deleted yet. To delete ${siteUrl(config.publicUrls, site.name)} permanently, open ${approveUrl} , type the site address and confirm, before ${iso(expiresAt)}. ` +
            `Check the result with GET /v1/approvals/${token}.`,
        },
      };
    },
  };
}
