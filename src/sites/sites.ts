import { randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { renameProblem } from '../rules/index.js';
import { hashToken, type Confirmation, type Role, type SiteRecord } from '../store/index.js';
import { checkAlive, notFound, permissionsOf, requireAccount, resolveSite, visibleSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { decodeCursor, encodeCursor, pageLimit, type PageRequest } from './paging.js';
import { unsealAccountToken } from './sealed-token.js';
import type { ApprovalView, ClaimPollView, DeletionView, RenameView, SiteListView, SiteView } from '../contract/index.js';
import { iso, siteView } from './views.js';
import { historyAfterClaim } from './history-words.js';

/** Deletion approvals wait this long for the person to confirm. */
export const APPROVAL_LIFETIME_MS = 24 * 3600_000;

export type SiteList = SiteListView;

export type ClaimPoll = ClaimPollView;

export type RenameResult = RenameView;

export type DeletionRequest = DeletionView;

type DeleteApproval = Extract<Confirmation, { kind: 'delete_site' }>;

export interface SiteOperations {
  list(caller: Caller, page?: PageRequest): SiteList;
  /** The site as the caller sees it; for a claimed site's token, the claim poll. */
  get(caller: Caller, name: string): Promise<SiteView | ClaimPoll>;
  rename(caller: Caller, name: string, newName: unknown): Promise<RenameResult>;
  /** Starts a deletion a person must approve on the app (SPEC 4.3); deletes nothing. */
  requestDeletion(caller: Caller, name: string): Promise<DeletionRequest>;
  /** Whether a requested deletion happened; the token is the secret. */
  getApproval(token: string): ApprovalView;
  /** The approval and its site, for the approval page (404 for an unknown token). */
  findApproval(token: string): { approval: DeleteApproval; site: SiteRecord | undefined; status: ApprovalView['status'] };
  /** A signed-in owner of the site confirms by typing its address: the site is deleted. */
  approveDeletion(caller: Caller, token: string, typedAddress: string): Promise<ApprovalView>;
}

export function siteOperations(deps: OperationsDeps): SiteOperations {
  const { store, config, log } = deps;
  const view = (caller: Caller, site: SiteRecord, role: Role): SiteView =>
    siteView(site, role, permissionsOf(caller, site, role), site.liveRevision ? store.getRevision(site.liveRevision) : undefined, config.publicUrls);
  const approveUrl = (token: string): string => `${config.publicUrls.app}/approve/${token}`;

  function approvalStatus(approval: DeleteApproval): ApprovalView['status'] {
    return approval.status === 'approved' ? 'approved' : approval.expiresAt <= deps.now() ? 'expired' : 'pending';
  }

  function findApproval(token: string): { approval: DeleteApproval; site: SiteRecord | undefined; status: ApprovalView['status'] } {
    const approval = store.getConfirmation(hashToken(token));
    if (approval?.kind !== 'delete_site') {
      throw new ServiceError('not_found', 'There is no deletion approval with this token.', {
        agentMessage: 'Use the approval token from the answer to DELETE /v1/sites/<name>, unchanged.',
      });
    }
    return { approval, site: store.getSiteById(approval.siteId), status: approvalStatus(approval) };
  }

  function approvalView(token: string, approval: DeleteApproval, site: SiteRecord | undefined): ApprovalView {
    const status = approvalStatus(approval);
    const result: ApprovalView = {
      status,
      site: site ? { name: site.name, url: siteUrl(config.publicUrls, site.name) } : null,
      expires_at: iso(approval.expiresAt),
    };
    if (status === 'approved' && approval.decidedAt !== undefined) result.deleted_at = iso(approval.decidedAt);
    if (status === 'pending') result.approve_url = approveUrl(token);
    return result;
  }

  return {
    list(caller, page = {}) {
      const account = requireAccount(caller, 'listing sites');
      const after = decodeCursor(page.cursor, (id) => /^site_[a-z2-7]+$/.test(id));
      const found = store.listSitesOf(account.id, { after, limit: pageLimit(page.limit) });
      return {
        sites: found.sites.map(({ site, role }) => view(caller, site, role)),
        next_cursor: found.nextAfter === undefined ? null : encodeCursor(found.nextAfter),
      };
    },

    async get(caller, name) {
      const { site, role } = visibleSite(store, caller, name);
      checkAlive(site, deps.now());
      // The claim poll (SPEC 2, 5): once claimed, the site token learns that and nothing more,
      // except, once, the account token the person chose to give the agent.
      if (caller.kind === 'site_token' && site.claimed) {
        const sealed = await store.takeSealedAccountToken(caller.tokenHash);
        const token = sealed === undefined ? undefined : unsealAccountToken(sealed, caller.token);
        const url = siteUrl(config.publicUrls, site.name);
        const next =
          token === undefined
            ? `To keep updating it, ask your user for an API token (pl_…) of that account, made on the API tokens page of ${config.publicUrls.app}/tokens ; keep it in .service.json as "api_token" in place of "site_token", and send it as the Bearer token.`
            : `account_token in this answer is an API token of that account for you, shown only this once: keep it in .service.json as "api_token" in place of "site_token", and send it as the Bearer token from now on.`;
        const agentMessage = `${url} has been claimed: it belongs to an account now, and this site token no longer works. ${next}${historyAfterClaim(site.name, site.plan)}`;
        const poll: ClaimPoll =
          token === undefined ? { claimed: true, agent_message: agentMessage } : { claimed: true, account_token: token, agent_message: agentMessage };
        return poll;
      }
      return view(caller, site, role);
    },

    async rename(caller, name, wanted) {
      const { site, role } = resolveSite(store, caller, name, 'rename', deps.now());
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
      await recordEvent(deps, actorOf(caller), { kind: 'site.renamed', site: result.site, details: { from: site.name, to: result.site.name } });
      const url = siteUrl(config.publicUrls, wanted);
      return {
        site: view(caller, result.site, role),
        previous_name: site.name,
        agent_message: `The site is now at ${url} . The old address ${siteUrl(config.publicUrls, site.name)} redirects there. Update "site" and "url" in .service.json.`,
      };
    },

    async requestDeletion(caller, name) {
      const { site } = resolveSite(store, caller, name, 'delete', deps.now());
      const account = requireAccount(caller, 'deleting a site');
      const token = `ap_${randomBytes(24).toString('base64url')}`;
      const expiresAt = deps.now() + APPROVAL_LIFETIME_MS;
      await store.putConfirmation(hashToken(token), { kind: 'delete_site', siteId: site.id, requestedBy: account.id, expiresAt, status: 'pending' });
      log.info({ site: site.name }, 'site.delete_requested');
      await recordEvent(deps, actorOf(caller), { kind: 'site.deletion_requested', site, details: { expires_at: iso(expiresAt) } });
      return {
        approve_url: approveUrl(token),
        approval: { token, status: 'pending', expires_at: iso(expiresAt) },
        agent_message:
          `Nothing is deleted yet. To delete ${siteUrl(config.publicUrls, site.name)} permanently, open ${approveUrl(token)} , type the site address and confirm, before ${iso(expiresAt)}. ` +
          `That page shows whether it was deleted (so does GET /v1/approvals/${token}).`,
      };
    },

    getApproval(token) {
      const { approval, site } = findApproval(token);
      return approvalView(token, approval, site);
    },

    findApproval,

    async approveDeletion(caller, token, typedAddress) {
      const account = requireAccount(caller, 'approving a deletion');
      const { approval, site } = findApproval(token);
      // Only an owner of the site may approve, whoever asked for the deletion.
      if (!site || store.getRole(site.id, account.id) !== 'owner') {
        throw new ServiceError('forbidden', 'Only an owner of this site can approve its deletion.', {
          agentMessage: 'Sign in as an owner of the site to approve the deletion.',
        });
      }
      const outcome = await store.approveDeletion(hashToken(token), typedAddress);
      if (!outcome.ok) {
        switch (outcome.reason) {
          case 'wrong_address':
            throw new ServiceError('bad_request', `That is not the address of ${site.name}; nothing was deleted.`, {
              details: { field: 'address', reason: 'wrong_address' },
            });
          case 'expired':
            throw new ServiceError('gone', 'This deletion request has expired; nothing was deleted.', { details: { reason: 'expired' } });
          case 'already_decided':
            throw new ServiceError('bad_request', 'This deletion was already approved.', { details: { reason: 'already_decided' } });
          default:
            throw new ServiceError('not_found', 'There is no deletion approval with this token.');
        }
      }
      log.info({ site: site.name }, 'site.deleted');
      await recordEvent(deps, actorOf(caller), { kind: 'site.deleted', site });
      return approvalView(token, outcome.approval, store.getSiteById(approval.siteId));
    },
  };
}
