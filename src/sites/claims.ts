import { randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import type { ClaimLinkView } from '../contract/index.js';
import { ServiceError } from '../errors.js';
import { isExpired, webhookUrlShown } from '../rules/index.js';
import { hashToken, type SiteRecord } from '../store/index.js';
import { requireAccount, resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { sitesLimitError, sitesLimitOf } from './limits.js';
import { sealAccountToken } from './sealed-token.js';
import { newApiToken } from './tokens.js';
import { iso } from './views.js';

/** What the claim page shows before the person claims. */
export interface ClaimPreview {
  site: { name: string; url: string; files: number; bytes: number; expires_at: string | null };
  /** False when the site predates sealed account tokens and cannot offer one to its agent. */
  can_give_agent_token: boolean;
}

export interface ClaimResultView {
  site: { name: string; url: string };
  /** Set when the person let the agent keep updating the site. */
  agent_token?: { id: string; name: string };
}

export interface ClaimOperations {
  /** The site behind a claim link; 404 for a used or unknown link, 410 for an expired site. */
  preview(token: string): ClaimPreview;
  /**
   * Moves the unclaimed site into the signed-in person's account (owner, the account's plan, no
   * expiry). With `giveAgentToken`, a named API token is made for the publishing agent and
   * handed to its next claim poll, once.
   */
  claim(caller: Caller, token: string, options?: { giveAgentToken?: boolean }): Promise<ClaimResultView>;
  /**
   * A new claim link for an unclaimed site, asked by its site token's holder (`POST
   * /v1/sites/:name/claim-link`): the old link stops working at once. The only way back to a
   * lost link, since a link is stored as a hash and never shown twice.
   */
  renewLink(caller: Caller, name: string): Promise<ClaimLinkView>;
}

/** Claiming an anonymous site (SPEC 3). */
export function claimOperations(deps: OperationsDeps): ClaimOperations {
  const { store, config, log } = deps;

  const usedOrUnknown = (): ServiceError =>
    new ServiceError('not_found', 'This claim link is not valid: it was already used, or it never existed.', {
      agentMessage: 'Each claim link works once. If the site was already claimed, it is in the account that claimed it.',
      details: { reason: 'not_found' },
    });
  const expired = (site: SiteRecord): ServiceError =>
    new ServiceError('gone', `The site ${site.name} expired on ${iso(site.expiresAt!)} before anyone claimed it.`, {
      agentMessage: 'Unclaimed sites expire after 72 hours. Publish the site again and claim the new one in time.',
      details: { reason: 'expired' },
    });

  function unclaimedSite(token: string): SiteRecord {
    const record = typeof token === 'string' && token.startsWith('ct_') ? store.findToken(hashToken(token)) : undefined;
    const site = record?.kind === 'claim' ? store.getSiteById(record.siteId) : undefined;
    if (!site || site.state === 'deleted' || site.claimed) throw usedOrUnknown();
    if (isExpired(site, deps.now())) throw expired(site);
    return site;
  }

  return {
    async renewLink(caller, name) {
      // The same checks as reading the site: 401, 404, 410, and 403 for a claimed site's token.
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      if (caller.kind !== 'site_token') {
        throw new ServiceError(
          'forbidden',
          site.claimed
            ? `${site.name} is claimed; a claimed site has no claim link.`
            : 'Only the site token of an unclaimed site can ask for a new claim link.',
          {
            agentMessage: site.claimed
              ? `${site.name} already belongs to an account; add people to it with POST /v1/sites/${site.name}/members instead.`
              : `Send the site_token of ${site.name} (from .service.json) as "Authorization: Bearer st_…".`,
          },
        );
      }
      const claimToken = `ct_${randomBytes(24).toString('base64url')}`;
      const result = await store.renewClaimToken(site.id, caller.tokenHash, hashToken(claimToken));
      if (!result.ok) {
        if (result.reason === 'expired') throw expired(site);
        if (result.reason === 'claimed') throw new ServiceError('forbidden', `${site.name} has been claimed; its site token can now only report that.`);
        throw new ServiceError('not_found', `There is no site named ${name} that this token can see.`);
      }
      log.info({ site: site.name }, 'site.claim_link_renewed');
      await recordEvent(deps, actorOf(caller), { kind: 'site.claim_link_renewed', site: result.site });
      const claimUrl = `${config.publicUrls.app}/claim/${claimToken}`;
      const expiresAt = iso(result.site.expiresAt!);
      return {
        claim_url: claimUrl,
        expires_at: expiresAt,
        agent_message:
          `Here is a new claim link for ${siteUrl(config.publicUrls, site.name)} : ${claimUrl} . The previous link no longer works. ` +
          `Give it to the user: they open it and sign in to keep the site, before ${expiresAt}, when the unclaimed site expires. Save it as claim_url in .service.json, replacing the old one.`,
      };
    },

    preview(token) {
      const site = unclaimedSite(token);
      const revision = site.liveRevision ? store.getRevision(site.liveRevision) : undefined;
      return {
        site: {
          name: site.name,
          url: siteUrl(config.publicUrls, site.name),
          files: revision?.files ?? 0,
          bytes: revision?.bytes ?? 0,
          expires_at: site.expiresAt === undefined ? null : iso(site.expiresAt),
        },
        can_give_agent_token: site.claimKey !== undefined,
      };
    },

    async claim(caller, token, options = {}) {
      const account = requireAccount(caller, 'claiming a site');
      const site = unclaimedSite(token);
      let accountToken: { tokenHash: string; name: string; sealed: string } | undefined;
      if (options.giveAgentToken && site.claimKey !== undefined) {
        const agentToken = newApiToken();
        accountToken = { tokenHash: hashToken(agentToken), name: `Agent that published ${site.name}`, sealed: sealAccountToken(agentToken, site.claimKey) };
      }
      const result = await store.claimSite(hashToken(token), account.id, { maxOwnedSites: sitesLimitOf(config, account), accountToken });
      if (!result.ok) {
        switch (result.reason) {
          case 'over_limit':
            throw sitesLimitError(config, account, store.countOwnedSites(account.id), 'claim');
          case 'expired':
            throw expired(site);
          default:
            throw usedOrUnknown();
        }
      }
      log.info({ site: site.name, agentToken: accountToken !== undefined }, 'site.claimed');
      await recordEvent(deps, actorOf(caller), {
        kind: 'site.claimed',
        site: result.site,
        details: { plan: result.site.plan, ...(result.tokenId !== undefined ? { agent_token: result.tokenId } : {}) },
      });
      for (const hook of result.endedWebhooks) {
        await recordEvent(
          deps,
          { kind: 'system' },
          { kind: 'webhook.disabled', site: result.site, details: { webhook: hook.id, url: webhookUrlShown(hook.url), reason: 'claim' } },
        );
      }
      // The token for the publishing agent is a token of the account like any other (docs/audit-log.md).
      if (result.tokenId !== undefined && accountToken) {
        await recordEvent(deps, actorOf(caller), { kind: 'token.created', accountId: account.id, details: { token: result.tokenId, name: accountToken.name } });
      }
      const view: ClaimResultView = { site: { name: result.site.name, url: siteUrl(config.publicUrls, result.site.name) } };
      if (result.tokenId !== undefined && accountToken) view.agent_token = { id: result.tokenId, name: accountToken.name };
      return view;
    },
  };
}
