import { ServiceError } from '../errors.js';
import type { Plan, SiteRecord } from '../store/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { checkSitesLimit, sitesLimitOf } from './limits.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';

/** What a deploy will do, decided from the caller, the site and the base revision. */
export type Decision =
  | { mode: 'create'; plan: Plan; accountId?: string; maxOwnedSites?: number; createdBy: string }
  | { mode: 'update'; site: SiteRecord; base: string; createdBy: string };

/*
 * The rules that decide a deploy before its bytes matter: shared by whole and digest deploys.
 */

/** Who may do what (SPEC 4.1 table, SPEC 5): throws the matching error. */
export function decideDeploy(
  deps: Pick<OperationsDeps, 'store' | 'config' | 'now'>,
  caller: Caller,
  siteName: string | undefined,
  base: string | undefined,
): Decision {
  const { store, config } = deps;
  if (siteName === undefined || siteName === '') {
    if (caller.kind === 'site_token') {
      // SPEC 5: a credential that lacks the right is 403, whatever the request would have done.
      throw new ServiceError('forbidden', 'A site token cannot create a site; it only updates its own site, named with ?site=<name>.', {
        agentMessage:
          'To update the site, send ?site=<name> (JSON: "site") and the live revision as X-Base-Revision (JSON: "base_revision"). To create a new site, send no token (anonymous) or an API token.',
      });
    }
    if (base !== undefined && base !== '') {
      // A base names what an update replaces; without a site it would be dropped and a new site made.
      throw new ServiceError('bad_request', 'A base revision was sent without a site: an update names its site.', {
        agentMessage:
          'Nothing was published. To update a site, name it with ?site=<name> (JSON: "site") and send its live revision as X-Base-Revision (JSON: "base_revision"). ' +
          'To create a new site, send no base revision.',
      });
    }
    if (caller.kind === 'account') {
      // Checked now, before the upload is read, and again inside the commit (racing creates).
      checkSitesLimit(store, config, caller.account);
      return {
        mode: 'create',
        plan: caller.account.plan,
        accountId: caller.account.id,
        maxOwnedSites: sitesLimitOf(config, caller.account),
        createdBy: caller.account.email,
      };
    }
    return { mode: 'create', plan: 'anonymous', createdBy: 'anonymous' };
  }
  // The same access rules as every other site operation: 401, 404, 410, then 403.
  const { site, actor } = resolveSite(store, caller, siteName, 'deploy', deps.now());
  if (base === undefined || base === '') {
    // Not "fetch the live revision and retry": sent blindly, that base overwrites whatever is live.
    throw new ServiceError('bad_request', 'An update needs the revision it is based on.', {
      agentMessage:
        `Nothing was published. An update names the revision it replaces: whatever is live at that revision is replaced by what you send, including changes someone else published. ` +
        `Look first: GET /v1/sites/${site.name} shows the live revision (live_revision.id, who published it and when), GET /v1/sites/${site.name}/files lists its files and GET /v1/sites/${site.name}/files/<path> returns each one. ` +
        `Once your files include what should stay, send that revision id as the X-Base-Revision header (archives) or "base_revision" (JSON).`,
    });
  }
  if (base !== site.liveRevision) throw deployConflict(site);
  return { mode: 'update', site, base, createdBy: actor };
}

/** Counts an anonymous deploy (and the site it creates) against its network's hourly caps. */
export async function takeAnonymousTokens(
  deps: Pick<OperationsDeps, 'store' | 'config'>,
  caller: Caller,
  network: string,
  count: { deploy: boolean; site: boolean },
): Promise<void> {
  const { store, config } = deps;
  if (caller.kind !== 'anonymous' && caller.kind !== 'site_token') return;
  await takeOrRefuse(
    store,
    [
      count.deploy ? cap(`anon-deploys:${network}`, config.deploy.anonDeploysPerHour, HOUR_MS) : undefined,
      count.site ? cap(`anon-sites:${network}`, config.deploy.anonSitesPerHour, HOUR_MS) : undefined,
    ],
    (seconds) => ({
      message: 'Too many anonymous deploys from your network this hour.',
      agentMessage: `Anonymous publishing is capped per network. Try again in ${Math.ceil(seconds / 60)} minutes, or sign in and deploy with an API token.`,
    }),
  );
}

/** The 409 of a deploy whose base is no longer the live revision: nothing was published. */
export function deployConflict(site: SiteRecord): ServiceError {
  return new ServiceError('conflict', `The site ${site.name} changed since the base revision you sent; nothing was published.`, {
    // GET /v1/sites/<name> has no file contents: the files calls do.
    agentMessage:
      `Someone published ${site.name} after your base revision, so nothing was published. Do not resend as it is: that would undo their work. ` +
      `Fetch what is live: GET /v1/sites/${site.name}/files lists its files and GET /v1/sites/${site.name}/files/<path> returns each file's content. ` +
      `Merge your changes into those files and deploy again with details.live_revision as the base revision.`,
    details: site.liveRevision ? { live_revision: site.liveRevision } : undefined,
  });
}
