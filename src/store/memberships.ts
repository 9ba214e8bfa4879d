import { strongerRole } from '../rules/index.js';
import { emailKey } from './accounts.js';
import { prefixRange, type MetadataDbs } from './metadata-dbs.js';
import type { InviteRecord, Membership, Role, SiteRecord } from './types.js';

/** Who belongs to which site, and pending invites. */
export interface MembershipRecords {
  /**
   * Sites the account is a member of (deleted ones left out), ordered by site id; `after` is the
   * last id of the previous page (exclusive). `limit` defaults to 50 and is clamped to 1-200.
   */
  listSitesOf(accountId: string, options?: { after?: string; limit?: number }): { sites: Array<{ site: SiteRecord; role: Role }>; nextAfter?: string };
  /** Sites the account owns, deleted ones left out (for the plan's site limit). */
  countOwnedSites(accountId: string): number;
  /** Members of a site with their account e-mail, in account id order. */
  listMembers(siteId: string): Array<Membership & { email: string }>;
  /** Removes a member (both indexes) unless they are the site's last owner. */
  removeMember(siteId: string, accountId: string): Promise<'removed' | 'last_owner' | 'not_member'>;
  /**
   * Records a pending, e-mailed invitation (e-mail trimmed and lower-cased); inviting the same
   * address to the same site again replaces the pending invite.
   */
  createInvite(input: Omit<InviteRecord, 'createdAt'>): Promise<InviteRecord>;
  /** A site's pending invites; those past `expiresAt` are left out. */
  listInvites(siteId: string): InviteRecord[];
  /** The pending, unexpired invite an accept link's token names. */
  getInviteByToken(tokenHash: string): InviteRecord | undefined;
  /**
   * Makes the account a member with the invited role and uses the invite up, in one transaction.
   * The account's e-mail must be the invited one (`wrong_account`); an expired or used invite,
   * or a deleted site, gives `not_found`. An existing member keeps the higher of the two roles.
   */
  acceptInvite(
    tokenHash: string,
    accountId: string,
  ): Promise<{ ok: true; invite: InviteRecord; role: Role } | { ok: false; reason: 'not_found' | 'wrong_account' }>;
  /** Drops the invite for that address (declined, revoked, or its person removed); false if none. */
  deleteInvite(siteId: string, email: string): Promise<boolean>;
}

const DEFAULT_SITES_PAGE = 50;
const MAX_SITES_PAGE = 200;

/**
 * Live (not deleted) sites the account owns. Called inside write transactions too (create,
 * claim), where the count is what makes two racing callers at a plan's limit unable to both pass.
 */
export function countOwned(dbs: MetadataDbs, accountId: string): number {
  const range = prefixRange(accountId);
  if (!range) return 0;
  let owned = 0;
  for (const { key, value: role } of dbs.memberSites.getRange(range)) {
    if (role === 'owner' && dbs.sites.get(key[1])?.state !== 'deleted') owned++;
  }
  return owned;
}

/** Who belongs to which site: both member indexes, and pending invites. */
export function membershipOps(dbs: MetadataDbs, now: () => number): MembershipRecords {
  /** `[accountId, siteId]` rows of live (not deleted) sites, in site id order, from after `after`. */
  function* sitesOf(accountId: string, after?: string): Generator<{ site: SiteRecord; role: Role }> {
    const range = prefixRange(accountId);
    if (!range) return;
    const start = after === undefined ? range.start : [accountId, after];
    // A deleted site keeps its member rows (history, approvals) but is nobody's site any more.
    for (const { key, value: role } of dbs.memberSites.getRange({ start, end: range.end, exclusiveStart: after !== undefined })) {
      const site = dbs.sites.get(key[1]);
      if (site && site.state !== 'deleted') yield { site, role };
    }
  }

  return {
    listSitesOf(accountId, options = {}) {
      const limit = Math.min(Math.max(1, Math.floor(options.limit ?? DEFAULT_SITES_PAGE)), MAX_SITES_PAGE);
      const sites: Array<{ site: SiteRecord; role: Role }> = [];
      // One row past the page tells whether another page exists.
      for (const entry of sitesOf(accountId, options.after)) {
        if (sites.length === limit) return { sites, nextAfter: sites[limit - 1]!.site.id };
        sites.push(entry);
      }
      return { sites };
    },
    countOwnedSites: (accountId) => countOwned(dbs, accountId),
    listMembers(siteId) {
      const range = prefixRange(siteId);
      if (!range) return [];
      const members: Array<Membership & { email: string }> = [];
      for (const { value } of dbs.members.getRange(range)) {
        const account = dbs.accounts.get(value.accountId);
        if (account) members.push({ ...value, email: account.email });
      }
      return members;
    },
    removeMember(siteId, accountId) {
      return dbs.transact((): 'removed' | 'last_owner' | 'not_member' => {
        const member = dbs.members.get([siteId, accountId]);
        if (!member) return 'not_member';
        // Counted inside the write transaction, so two owners removing each other cannot both win.
        if (member.role === 'owner' && countOwners(dbs, siteId) <= 1) return 'last_owner';
        void dbs.members.remove([siteId, accountId]);
        void dbs.memberSites.remove([accountId, siteId]);
        // A pending invite for the same address would let the person straight back in.
        const account = dbs.accounts.get(accountId);
        if (account) removeInvite(dbs, siteId, account.email);
        return 'removed';
      });
    },
    createInvite(input) {
      // Normalised like account e-mails, so the invite matches the account that accepts it.
      const invite: InviteRecord = { ...input, email: emailKey(input.email), createdAt: now() };
      return dbs.transact((): InviteRecord => {
        // Same key for the same address: inviting again replaces the pending invite and its token.
        removeInvite(dbs, invite.siteId, invite.email);
        void dbs.invites.put([invite.siteId, invite.email], invite);
        void dbs.inviteTokens.put(invite.tokenHash, [invite.siteId, invite.email]);
        return invite;
      });
    },
    getInviteByToken(tokenHash) {
      const key = dbs.inviteTokens.get(tokenHash);
      const invite = key && dbs.invites.get(key);
      return invite && invite.tokenHash === tokenHash && invite.expiresAt > now() ? invite : undefined;
    },
    acceptInvite(tokenHash, accountId) {
      type Outcome = Awaited<ReturnType<MembershipRecords['acceptInvite']>>;
      return dbs.transact((): Outcome => {
        const key = dbs.inviteTokens.get(tokenHash);
        const invite = key && dbs.invites.get(key);
        const site = invite && dbs.sites.get(invite.siteId);
        if (!invite || invite.tokenHash !== tokenHash || invite.expiresAt <= now() || !site || site.state === 'deleted') {
          return { ok: false, reason: 'not_found' };
        }
        const account = dbs.accounts.get(accountId);
        if (!account || account.email !== invite.email) return { ok: false, reason: 'wrong_account' };
        const existing = dbs.members.get([site.id, accountId]);
        // Accepting never demotes: an owner who accepts an old editor invite stays owner.
        const role = existing ? strongerRole(existing.role, invite.role) : invite.role;
        void dbs.members.put([site.id, accountId], { siteId: site.id, accountId, role, addedAt: existing?.addedAt ?? now() });
        void dbs.memberSites.put([accountId, site.id], role);
        removeInvite(dbs, site.id, invite.email);
        return { ok: true, invite, role };
      });
    },
    deleteInvite(siteId, email) {
      return dbs.transact(() => removeInvite(dbs, siteId, emailKey(email)));
    },
    listInvites(siteId) {
      const range = prefixRange(siteId);
      if (!range) return [];
      const at = now();
      return Array.from(dbs.invites.getRange(range), ({ value }) => value).filter((invite) => invite.expiresAt > at);
    },
  };
}

/** Inside a write transaction: drops the invite for that address and its token index row. */
function removeInvite(dbs: MetadataDbs, siteId: string, email: string): boolean {
  const existing = dbs.invites.get([siteId, email]);
  if (!existing) return false;
  void dbs.invites.remove([siteId, email]);
  if (dbs.inviteTokens.get(existing.tokenHash) !== undefined) void dbs.inviteTokens.remove(existing.tokenHash);
  return true;
}

function countOwners(dbs: MetadataDbs, siteId: string): number {
  const range = prefixRange(siteId);
  if (!range) return 0;
  let owners = 0;
  for (const { value } of dbs.members.getRange(range)) if (value.role === 'owner') owners++;
  return owners;
}
