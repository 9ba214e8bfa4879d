import { isExpired, SITE_TOKEN_CREATOR } from '../rules/index.js';
import { newId } from './ids.js';
import { countOwned } from './memberships.js';
import { compact, prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { ApprovalOutcome, ClaimOptions, ClaimResult, Confirmation, SiteRecord, WebhookRecord } from './types.js';

/** Site changes outside deploys: claim, rename, approved deletion and confirmations. */
export interface LifecycleRecords {
  /**
   * Moves an unclaimed, unexpired anonymous site into the account: owner, plan Free, no expiry;
   * the claim token is used up and the site token keeps only the right to read the claim.
   * A used-up (or unknown, or non-claim) token and a deleted site give `not_found`;
   * `expired` from `expiresAt <= now` on.
   */
  claimSite(claimTokenHash: string, accountId: string, options?: ClaimOptions): Promise<ClaimResult>;
  /**
   * Replaces an unclaimed site's claim link: the old claim token stops working in the same
   * transaction. Only for the holder of the site's token (`siteTokenHash`); a deleted, claimed or
   * expired site, or another site's token, changes nothing.
   */
  renewClaimToken(siteId: string, siteTokenHash: string, claimTokenHash: string): Promise<RenewClaimResult>;
  /**
   * The sealed account token a claim left for the site token's holder, removed as it is read
   * (the claim poll hands it out once).
   */
  takeSealedAccountToken(siteTokenHash: string): Promise<string | undefined>;
  /**
   * Gives a site a new name; the old one keeps resolving to it (serving redirects) and is never
   * reused. `name` must be the current name of a site that is not deleted (else `not_found`);
   * `newName` must never have been used by any site (else `name_taken`). The caller validates its form.
   */
  renameSite(name: string, newName: string): Promise<{ ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' | 'name_taken' }>;
  /** Stores a short-lived confirmation (member removal, deletion approval) by token hash. */
  putConfirmation(tokenHash: string, record: Confirmation): Promise<void>;
  /** The record as stored, also past its `expiresAt`: callers judge expiry (approvals report `expired`). */
  getConfirmation(tokenHash: string): Confirmation | undefined;
  /**
   * Deletes the site if `typedAddress` names it, the approval is pending and not expired. Accepted:
   * the current name, or `name.<domain…>` with an optional `http(s)://` and trailing `/`,
   * case-insensitive (the domain is not checked). Checks in order: unknown token or not a
   * deletion → `not_found`; already approved → `already_decided`; `expiresAt <= now` →
   * `expired`; address → `wrong_address`. Returns the approval as it ends up.
   */
  approveDeletion(approvalTokenHash: string, typedAddress: string): Promise<ApprovalOutcome>;
}
type RenameResult = Awaited<ReturnType<LifecycleRecords['renameSite']>>;
export type RenewClaimResult = { ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' | 'claimed' | 'expired' };
type DeleteApproval = Extract<Confirmation, { kind: 'delete_site' }>;

/**
 * Site record changes outside deploys: claim, rename, approved deletion. Each is one write
 * transaction whose checks read inside it, so two racing callers cannot both succeed; every
 * change is announced so per-thread site caches drop the record.
 */
export function lifecycleOps(dbs: MetadataDbs, now: () => number, announce: (site: SiteRecord) => void): LifecycleRecords {
  return {
    async claimSite(claimTokenHash, accountId, options = {}) {
      const result = await dbs.transact((): ClaimResult => {
        const token = dbs.tokens.get(claimTokenHash);
        const site = token?.kind === 'claim' ? dbs.sites.get(token.siteId) : undefined;
        if (!site || site.state === 'deleted') return { ok: false, reason: 'not_found' };
        if (site.claimed) return { ok: false, reason: 'already_claimed' };
        const at = now();
        if (isExpired(site, at)) return { ok: false, reason: 'expired' };
        const account = dbs.accounts.get(accountId);
        if (!account) return { ok: false, reason: 'not_found' };
        // Counted inside the write transaction, so two claims at the limit cannot both pass.
        if (options.maxOwnedSites !== undefined && countOwned(dbs, accountId) >= options.maxOwnedSites) return { ok: false, reason: 'over_limit' };
        // The site takes the account's plan; the site token record stays, so the API lets it
        // read the claim (and collect a sealed account token) and nothing else once `claimed`.
        const claimed: SiteRecord = compact({
          ...site,
          claimed: true,
          accountId,
          plan: account.plan,
          expiresAt: undefined,
          claimTokenHash: undefined,
          claimKey: undefined,
        });
        void dbs.sites.put(site.id, claimed);
        void dbs.tokens.remove(claimTokenHash);
        void dbs.members.put([site.id, accountId], { siteId: site.id, accountId, role: 'owner', addedAt: at });
        void dbs.memberSites.put([accountId, site.id], 'owner');
        let tokenId: string | undefined;
        const agentToken = options.accountToken;
        const siteToken = site.siteTokenHash ? dbs.tokens.get(site.siteTokenHash) : undefined;
        if (agentToken && site.siteTokenHash && siteToken?.kind === 'site') {
          tokenId = newId('tok_');
          void dbs.tokens.put(agentToken.tokenHash, { kind: 'api', accountId, name: agentToken.name, createdAt: at, id: tokenId });
          void dbs.accountTokens.put([accountId, tokenId], { tokenHash: agentToken.tokenHash, name: agentToken.name, createdAt: at });
          void dbs.tokens.put(site.siteTokenHash, { ...siteToken, sealedAccountToken: agentToken.sealed });
        }
        // The site token reaches nothing but the claim's report from now on, so its webhooks end
        // too, unless the claimer gave the agent an account token (it keeps watching by consent).
        const endedWebhooks: WebhookRecord[] = [];
        if (tokenId === undefined) {
          const range = prefixRange(site.id);
          for (const { value: hook } of range ? dbs.webhooks.getRange(range) : []) {
            if (hook.createdBy !== SITE_TOKEN_CREATOR || hook.disabledAt !== undefined) continue;
            const ended: WebhookRecord = { ...hook, disabledAt: at, disabledFor: 'claim' };
            void dbs.webhooks.put([site.id, hook.id], ended);
            endedWebhooks.push(ended);
          }
        }
        return tokenId === undefined ? { ok: true, site: claimed, endedWebhooks } : { ok: true, site: claimed, tokenId, endedWebhooks };
      });
      if (result.ok) announce(result.site);
      return result;
    },

    async renewClaimToken(siteId, siteTokenHash, claimTokenHash) {
      const result = await dbs.transact((): RenewClaimResult => {
        const site = dbs.sites.get(siteId);
        if (!site || site.state === 'deleted' || site.siteTokenHash !== siteTokenHash) return { ok: false, reason: 'not_found' };
        if (site.claimed) return { ok: false, reason: 'claimed' };
        if (isExpired(site, now())) return { ok: false, reason: 'expired' };
        if (site.claimTokenHash !== undefined && dbs.tokens.get(site.claimTokenHash)?.kind === 'claim') void dbs.tokens.remove(site.claimTokenHash);
        const renewed: SiteRecord = { ...site, claimTokenHash };
        void dbs.tokens.put(claimTokenHash, { kind: 'claim', siteId: site.id });
        void dbs.sites.put(site.id, renewed);
        return { ok: true, site: renewed };
      });
      if (result.ok) announce(result.site);
      return result;
    },

    takeSealedAccountToken(siteTokenHash) {
      return dbs.transact((): string | undefined => {
        const record = dbs.tokens.get(siteTokenHash);
        if (record?.kind !== 'site' || record.sealedAccountToken === undefined) return undefined;
        void dbs.tokens.put(siteTokenHash, { kind: 'site', siteId: record.siteId });
        return record.sealedAccountToken;
      });
    },

    async renameSite(name, newName) {
      const result = await dbs.transact((): RenameResult => {
        const id = dbs.names.get(name);
        const site = id === undefined ? undefined : dbs.sites.get(id);
        // Only the current name renames; a former name merely redirects.
        if (!site || site.name !== name || site.state === 'deleted') return { ok: false, reason: 'not_found' };
        // `names` holds every name ever used, former names included, so none is ever handed out twice.
        if (dbs.names.get(newName) !== undefined) return { ok: false, reason: 'name_taken' };
        const renamed: SiteRecord = { ...site, name: newName };
        void dbs.names.put(newName, site.id);
        void dbs.sites.put(site.id, renamed);
        return { ok: true, site: renamed };
      });
      // One change by site id: serving caches drop every name cached for it, the old one included.
      if (result.ok) announce(result.site);
      return result;
    },

    async putConfirmation(tokenHash, record) {
      await dbs.transact(() => void dbs.confirmations.put(tokenHash, record));
    },
    // Expired records are returned as they are: the approvals endpoint reports them as `expired`.
    getConfirmation: (tokenHash) => dbs.confirmations.get(tokenHash),

    async approveDeletion(approvalTokenHash, typedAddress) {
      const changed: { site?: SiteRecord } = {};
      const outcome = await dbs.transact((): ApprovalOutcome => {
        const approval = dbs.confirmations.get(approvalTokenHash);
        if (approval?.kind !== 'delete_site') return { ok: false, reason: 'not_found' };
        // Decided before expired: an approved deletion stays approved after its link lapses.
        if (approval.status !== 'pending') return { ok: false, reason: 'already_decided' };
        const at = now();
        if (approval.expiresAt <= at) return { ok: false, reason: 'expired' };
        const site = dbs.sites.get(approval.siteId);
        if (!site) return { ok: false, reason: 'not_found' };
        if (site.state === 'deleted') return { ok: false, reason: 'already_decided' };
        if (!namesSite(typedAddress, site.name)) return { ok: false, reason: 'wrong_address' };
        const deleted: SiteRecord = { ...site, state: 'deleted', stateChangedAt: at };
        changed.site = deleted;
        const approved: DeleteApproval = { ...approval, status: 'approved', decidedAt: at };
        void dbs.sites.put(site.id, deleted);
        void dbs.confirmations.put(approvalTokenHash, approved);
        return { ok: true, approval: approved };
      });
      if (changed.site) announce(changed.site);
      return outcome;
    },
  };
}

/** Inside a transaction: sites the account owns that are not deleted. */
/**
 * What a person may type to confirm a deletion: the site's current name, or its address with any
 * domain after it (`name.example.com`, `https://name.example.com/`), case-insensitive. The store
 * does not know the site domain, so the domain part is not checked: the name is what identifies
 * the site, and typing it is the deliberate act the confirmation asks for.
 */
export function namesSite(typed: string, name: string): boolean {
  const match = /^(?:https?:\/\/)?([^./:\s]+)(?:\.[^/\s]+)?\/?$/i.exec(typed.trim());
  return match !== null && match[1]!.toLowerCase() === name;
}
