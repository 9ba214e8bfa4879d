import { randomBytes } from 'node:crypto';
import { siteUrl, type Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { normaliseEmail, REMOVAL_CONFIRM_MS } from '../rules/index.js';
import { hashToken, type InviteRecord, type Role, type SiteRecord } from '../store/index.js';
import { checkAlive, requireAccount, resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { inviteMail } from '../outbound/index.js';
import type { InviteView, MemberListView, RemovalView } from '../contract/index.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';
import { iso } from './views.js';

/** Invites wait this long to be accepted. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3600_000;

const INVITABLE: readonly Role[] = ['editor', 'viewer'];

/** A trimmed, lower-cased e-mail address, or a 400 naming the field. */
export function parseEmail(value: unknown, field = 'email'): string {
  const email = normaliseEmail(value);
  if (email === undefined) throw new ServiceError('bad_request', `"${field}" must be a valid e-mail address.`, { details: { field } });
  return email;
}

export type MemberList = MemberListView;

export type InviteResult = InviteView;

/** What the invite page shows before the person accepts or declines. */
export interface InvitePreview {
  site: { name: string; url: string };
  email: string;
  role: Role;
  invited_by: string | null;
  expires_at: string;
}

export type RemovalResult = RemovalView;

export interface MemberOperations {
  list(caller: Caller, name: string): MemberList;
  invite(caller: Caller, name: string, input: { email: unknown; role: unknown }): Promise<InviteResult>;
  /** An owner withdraws a pending invite. */
  revokeInvite(caller: Caller, name: string, email: string): Promise<{ revoked: string }>;
  /** The invite behind an accept link (404 when unknown, used or expired). */
  previewInvite(token: string): InvitePreview;
  /** The invited person (signed in with that address) joins the site. */
  acceptInvite(caller: Caller, token: string): Promise<{ site: { name: string; url: string }; role: Role }>;
  /** The invited person says no; the invite is gone. */
  declineInvite(caller: Caller, token: string): Promise<{ site: { name: string; url: string } }>;
  /**
   * Two steps (SPEC 4.3): without `confirm`, a confirmation token valid 5 minutes; with it, the
   * member is removed (with any pending invite for their address). The last owner stays. An
   * address that only has a pending invite goes through the same two steps, and the invite is
   * withdrawn (its accept link stops working).
   */
  remove(caller: Caller, name: string, email: string, confirm?: string): Promise<RemovalResult>;
}

/** Members and invitations of a site (SPEC 4.3). */
export function memberOperations(deps: OperationsDeps): MemberOperations {
  return {
    list: (caller, name) => listMembers(deps, caller, name),
    invite: (caller, name, input) => inviteMember(deps, caller, name, input),
    revokeInvite: (caller, name, email) => revokeInvite(deps, caller, name, email),
    previewInvite: (token) => previewInvite(deps, token),
    acceptInvite: (caller, token) => acceptInvite(deps, caller, token),
    declineInvite: (caller, token) => declineInvite(deps, caller, token),
    remove: (caller, name, email, confirm) => removeMember(deps, caller, name, email, confirm),
  };
}

type SiteLink = { name: string; url: string };
const link = (config: Pick<Config, 'publicUrls'>, site: SiteRecord): SiteLink => ({ name: site.name, url: siteUrl(config.publicUrls, site.name) });

/** The invite behind a token and its (live) site, or 404: used, expired, unknown alike. */
function liveInvite(deps: Pick<OperationsDeps, 'store' | 'now'>, token: string): { invite: InviteRecord; site: SiteRecord } {
  const { store } = deps;
  const invite = typeof token === 'string' && token.startsWith('inv_') ? store.getInviteByToken(hashToken(token)) : undefined;
  const site = invite && store.getSiteById(invite.siteId);
  if (!invite || !site || site.state === 'deleted') {
    throw new ServiceError('not_found', 'This invitation is not valid any more: it was used, withdrawn, or it expired.', {
      agentMessage: 'Ask an owner of the site to invite you again.',
    });
  }
  checkAlive(site, deps.now());
  return { invite, site };
}

function wrongAccount(invite: InviteRecord, account: { email: string }): ServiceError {
  return new ServiceError('forbidden', `This invitation is for ${invite.email}, and you are signed in as ${account.email}.`, {
    details: { reason: 'wrong_account', invited: invite.email },
  });
}

export function listMembers(deps: OperationsDeps, caller: Caller, name: string): MemberList {
  const { store } = deps;
  const { site } = resolveSite(store, caller, name, 'list_members', deps.now());
  const members = store
    .listMembers(site.id)
    .map((member) => ({ email: member.email, role: member.role }))
    .sort((a, b) => a.email.localeCompare(b.email));
  const invites = store.listInvites(site.id).map((invite) => ({ email: invite.email, role: invite.role, expires_at: iso(invite.expiresAt) }));
  return { members, invites };
}

export async function inviteMember(deps: OperationsDeps, caller: Caller, name: string, input: { email: unknown; role: unknown }): Promise<InviteResult> {
  const { store, config, log, mailer } = deps;
  const { site } = resolveSite(store, caller, name, 'manage_members', deps.now());
  const inviter = requireAccount(caller, 'inviting members');
  const email = parseEmail(input.email);
  if (typeof input.role !== 'string' || !INVITABLE.includes(input.role as Role)) {
    throw new ServiceError('bad_request', 'The body needs "role": "editor" or "viewer".', {
      agentMessage: 'Invite people as "editor" (may deploy and roll back) or "viewer" (may read the site and its history).',
      details: { field: 'role' },
    });
  }
  const role = input.role as Exclude<Role, 'owner'>;
  const existing = store.getAccountByEmail(email);
  if (existing && store.getRole(site.id, existing.id) !== undefined) {
    throw new ServiceError('bad_request', `${email} is already a member of ${site.name}.`, { details: { field: 'email' } });
  }
  // Each invite is an e-mail to an address the inviter chooses, and inviting again sends another:
  // capped per address (whoever invites) and per inviting account, like sign-in e-mails.
  await takeOrRefuse(
    store,
    [
      cap(`invite-address:${email}`, config.app.invitesPerAddressPerHour, HOUR_MS),
      cap(`invite-account:${inviter.id}`, config.app.invitesPerAccountPerHour, HOUR_MS),
    ],
    (seconds) => ({
      message: `Too many invitations were e-mailed to ${email}, or sent by this account, in the last hour; nothing was sent. Try again in ${Math.ceil(seconds / 60)} minutes.`,
      agentMessage: `Invitation e-mails are capped per address and per inviting account each hour. Tell the user the invitation to ${email} was not sent, and try again in ${Math.ceil(seconds / 60)} minutes.`,
    }),
  );
  const token = `inv_${randomBytes(24).toString('base64url')}`;
  const invite = await store.createInvite({
    siteId: site.id,
    email,
    role,
    tokenHash: hashToken(token),
    invitedBy: inviter.id,
    expiresAt: deps.now() + INVITE_LIFETIME_MS,
  });
  const acceptUrl = `${config.publicUrls.app}/invites/${token}`;
  const url = siteUrl(config.publicUrls, site.name);
  try {
    await mailer.send(
      inviteMail({ to: invite.email, inviter: inviter.email, siteName: site.name, siteUrl: url, role, acceptUrl, expiresAt: iso(invite.expiresAt) }),
    );
  } catch (err) {
    log.error({ err, site: site.name }, 'mail.failed');
    throw new ServiceError('unavailable', 'The invite e-mail could not be sent.', {
      agentMessage: 'Sending the invite e-mail failed. Try the same request again in a minute; a new invite replaces the old one.',
      headers: { 'Retry-After': '60' },
    });
  }
  log.info({ site: site.name, role }, 'member.invited');
  await recordEvent(deps, actorOf(caller), { kind: 'member.invited', site, details: { email: invite.email, role } });
  return {
    invite: { email: invite.email, role: invite.role, expires_at: iso(invite.expiresAt) },
    agent_message: `An invitation to ${url} as ${role} was e-mailed to ${invite.email}; it can be accepted until ${iso(invite.expiresAt)}.`,
  };
}

export async function revokeInvite(deps: OperationsDeps, caller: Caller, name: string, email: string): Promise<{ revoked: string }> {
  const { store, log } = deps;
  const { site } = resolveSite(store, caller, name, 'manage_members', deps.now());
  const address = email.trim().toLowerCase();
  if (!(await store.deleteInvite(site.id, address))) {
    throw new ServiceError('not_found', `There is no pending invitation for ${address} on ${site.name}.`);
  }
  log.info({ site: site.name }, 'member.invite_revoked');
  await recordEvent(deps, actorOf(caller), { kind: 'invite.revoked', site, details: { email: address } });
  return { revoked: address };
}

export function previewInvite(deps: OperationsDeps, token: string): InvitePreview {
  const { store, config } = deps;
  const { invite, site } = liveInvite(deps, token);
  const inviter = store.getAccount(invite.invitedBy);
  return { site: link(config, site), email: invite.email, role: invite.role, invited_by: inviter?.email ?? null, expires_at: iso(invite.expiresAt) };
}

export async function acceptInvite(deps: OperationsDeps, caller: Caller, token: string): Promise<{ site: SiteLink; role: Role }> {
  const { store, config, log } = deps;
  const account = requireAccount(caller, 'accepting an invitation');
  const { invite, site } = liveInvite(deps, token);
  if (invite.email !== account.email) throw wrongAccount(invite, account);
  const outcome = await store.acceptInvite(hashToken(token), account.id);
  if (!outcome.ok) {
    if (outcome.reason === 'wrong_account') throw wrongAccount(invite, account);
    liveInvite(deps, token);
    throw new ServiceError('not_found', 'This invitation is not valid any more.');
  }
  log.info({ site: site.name, role: outcome.role }, 'member.joined');
  await recordEvent(deps, actorOf(caller), { kind: 'member.joined', site, details: { email: account.email, role: outcome.role } });
  return { site: link(config, site), role: outcome.role };
}

export async function declineInvite(deps: OperationsDeps, caller: Caller, token: string): Promise<{ site: SiteLink }> {
  const { store, config, log } = deps;
  const account = requireAccount(caller, 'declining an invitation');
  const { invite, site } = liveInvite(deps, token);
  if (invite.email !== account.email) throw wrongAccount(invite, account);
  await store.deleteInvite(site.id, invite.email);
  log.info({ site: site.name }, 'member.declined');
  return { site: link(config, site) };
}

export async function removeMember(deps: OperationsDeps, caller: Caller, name: string, email: string, confirm?: string): Promise<RemovalResult> {
  const { store, log } = deps;
  const now = deps.now();
  const { site } = resolveSite(store, caller, name, 'manage_members', now);
  const requester = requireAccount(caller, 'removing members');
  const address = email.trim().toLowerCase();
  const target = store.getAccountByEmail(address);
  const role = target ? store.getRole(site.id, target.id) : undefined;
  if (!target || role === undefined) {
    // Not (yet) a member: an address invited and not joined is removed by withdrawing its invite.
    const invite = store.listInvites(site.id).find((entry) => entry.email === address);
    if (invite) return withdrawInvite(deps, caller, site, requester, invite, confirm);
    throw new ServiceError('not_found', `${address} is not a member of ${site.name}.`, {
      agentMessage: `GET /v1/sites/${site.name}/members lists the members.`,
    });
  }
  const lastOwner = (): ServiceError =>
    new ServiceError('bad_request', `${address} is the last owner of ${site.name} and cannot be removed.`, {
      agentMessage: 'Make another member an owner first; a site always keeps at least one owner.',
    });

  if (confirm === undefined || confirm === '') {
    if (role === 'owner' && store.listMembers(site.id).filter((m) => m.role === 'owner').length <= 1) throw lastOwner();
    const token = `rm_${randomBytes(18).toString('base64url')}`;
    const expiresAt = now + REMOVAL_CONFIRM_MS;
    await store.putConfirmation(hashToken(token), { kind: 'remove_member', siteId: site.id, accountId: target.id, requestedBy: requester.id, expiresAt });
    return {
      confirm_token: token,
      expires_at: iso(expiresAt),
      member: { email: address, role },
      agent_message: `Confirm with the user that ${address} (${role}) should lose access to ${site.name}, then repeat this request with ?confirm=${token} before ${iso(expiresAt)}.`,
    };
  }

  const tokenHash = hashToken(confirm);
  const pending = store.getConfirmation(tokenHash);
  // The second step repeats the first: same site, same member, same owner asking. Another
  // owner who got hold of the token has not confirmed anything and asks for their own.
  if (
    pending?.kind !== 'remove_member' ||
    pending.siteId !== site.id ||
    pending.accountId !== target.id ||
    pending.requestedBy !== requester.id ||
    pending.expiresAt <= now
  ) {
    throw wrongConfirmation(site, address);
  }
  const outcome = await store.removeMember(site.id, target.id);
  // Used up either way: a token confirms one removal, once.
  await store.putConfirmation(tokenHash, { ...pending, expiresAt: 0 });
  if (outcome === 'last_owner') throw lastOwner();
  if (outcome === 'not_member') throw new ServiceError('not_found', `${address} is not a member of ${site.name}.`);
  log.info({ site: site.name }, 'member.removed');
  await recordEvent(deps, actorOf(caller), { kind: 'member.removed', site, accountId: target.id, details: { email: address, role } });
  return { removed: address, agent_message: `${address} no longer has access to ${site.name}.` };
}

function wrongConfirmation(site: SiteRecord, address: string): ServiceError {
  return new ServiceError('bad_request', 'The confirmation token is wrong or expired; nobody was removed.', {
    agentMessage: `Confirmation tokens last 5 minutes and match one member and the owner who asked. Call DELETE /v1/sites/${site.name}/members/${encodeURIComponent(address)} without ?confirm to get a new one.`,
  });
}

/**
 * `DELETE …/members/:email` for an address that has only a pending invite: the same two steps as
 * a member's removal, and the second withdraws the invite, so its accept link stops working.
 */
async function withdrawInvite(
  deps: OperationsDeps,
  caller: Caller,
  site: SiteRecord,
  requester: { id: string },
  invite: InviteRecord,
  confirm: string | undefined,
): Promise<RemovalResult> {
  const { store, log } = deps;
  const now = deps.now();
  const address = invite.email;
  if (confirm === undefined || confirm === '') {
    const token = `rm_${randomBytes(18).toString('base64url')}`;
    const expiresAt = now + REMOVAL_CONFIRM_MS;
    await store.putConfirmation(hashToken(token), { kind: 'withdraw_invite', siteId: site.id, email: address, requestedBy: requester.id, expiresAt });
    return {
      confirm_token: token,
      expires_at: iso(expiresAt),
      member: { email: address, role: invite.role },
      agent_message: `${address} was invited to ${site.name} as ${invite.role} and has not accepted yet. Confirm with the user that the invitation should be withdrawn, then repeat this request with ?confirm=${token} before ${iso(expiresAt)}.`,
    };
  }
  const tokenHash = hashToken(confirm);
  const pending = store.getConfirmation(tokenHash);
  if (
    pending?.kind !== 'withdraw_invite' ||
    pending.siteId !== site.id ||
    pending.email !== address ||
    pending.requestedBy !== requester.id ||
    pending.expiresAt <= now
  ) {
    throw wrongConfirmation(site, address);
  }
  const withdrawn = await store.deleteInvite(site.id, address);
  await store.putConfirmation(tokenHash, { ...pending, expiresAt: 0 });
  if (!withdrawn) throw new ServiceError('not_found', `${address} is not a member of ${site.name}.`);
  log.info({ site: site.name }, 'member.invite_revoked');
  await recordEvent(deps, actorOf(caller), { kind: 'invite.revoked', site, details: { email: address } });
  return { removed: address, agent_message: `The invitation for ${address} to ${site.name} was withdrawn; its link no longer works.` };
}
