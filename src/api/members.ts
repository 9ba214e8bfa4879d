import { randomBytes } from 'node:crypto';
import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { hashToken, type Role } from '../store/index.js';
import { requireAccount, resolveSite } from './access.js';
import { objectBody, type Endpoint, type EndpointDeps } from './handler.js';
import type { Mailer } from './mailer.js';
import { iso } from './views.js';

/** Invites wait this long to be accepted. */
export const INVITE_LIFETIME_MS = 7 * 24 * 3600_000;
/** The second call of a member removal must come this soon (SPEC 8 rule 6). */
export const REMOVAL_CONFIRM_MS = 5 * 60_000;

const EMAIL = /^[^\s@<>()[\]",;:\\]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/i;
const INVITABLE: readonly Role[] = ['editor', 'viewer'];

export interface MemberEndpoints {
  list: Endpoint;
  invite: Endpoint;
  remove: Endpoint;
}

/** `GET|POST /v1/sites/:name/members`, `DELETE /v1/sites/:name/members/:email` (SPEC 4.3). */
export function memberEndpoints(deps: EndpointDeps & { mailer: Mailer }): MemberEndpoints {
  const { store, config, log, mailer } = deps;

  return {
    async list({ caller, request }) {
      const { site } = resolveSite(store, caller, request.params[0]!, 'read', deps.now(), { accountOnly: true });
      const members = store
        .listMembers(site.id)
        .map((member) => ({ email: member.email, role: member.role }))
        .sort((a, b) => a.email.localeCompare(b.email));
      const invites = store.listInvites(site.id).map((invite) => ({ email: invite.email, role: invite.role, expires_at: iso(invite.expiresAt) }));
      return { status: 200, body: { members, invites } };
    },

    async invite({ caller, request, body }) {
      const { site } = resolveSite(store, caller, request.params[0]!, 'admin', deps.now(), { accountOnly: true });
      const inviter = requireAccount(caller, 'inviting members');
      const fields = objectBody(body, '{"email": "person@example.com", "role": "editor"}');
      const email = typeof fields.email === 'string' ? fields.email.trim().toLowerCase() : '';
      if (email.length > 254 || !EMAIL.test(email)) {
        throw new ServiceError('bad_request', 'The body needs "email", a valid e-mail address.');
      }
      if (typeof fields.role !== 'string' || !INVITABLE.includes(fields.role as Role)) {
        throw new ServiceError('bad_request', 'The body needs "role": "editor" or "viewer".', {
          agentMessage: 'Invite people as "editor" (may deploy and roll back) or "viewer" (may read the site and its history).',
        });
      }
      const role = fields.role as Exclude<Role, 'owner'>;
      const existing = store.getAccountByEmail(email);
      if (existing && store.getRole(site.id, existing.id) !== undefined) {
        throw new ServiceError('bad_request', `${email} is already a member of ${site.name}.`);
      }
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
        await mailer.send({
          to: invite.email,
          subject: `You are invited to ${site.name}`,
          text: [
            `Hello,`,
            ``,
            `${inviter.email} invited you to the site ${url} as ${role}.`,
            ``,
            `Accept the invitation here:`,
            acceptUrl,
            ``,
            `The link works until ${iso(invite.expiresAt)}. If you did not expect this e-mail, you can ignore it.`,
          ].join('\n'),
        });
      } catch (err) {
        log.error({ err, site: site.name }, 'mail.failed');
        throw new ServiceError('unavailable', 'The invite e-mail could not be sent.', {
          agentMessage: 'Sending the invite e-mail failed. Try the same request again in a minute; a new invite replaces the old one.',
          headers: { 'Retry-After': '60' },
        });
      }
      log.info({ site: site.name, role }, 'member.invited');
      return {
        status: 201,
        body: {
          invite: { email: invite.email, role: invite.role, expires_at: iso(invite.expiresAt) },
          agent_message: `An invitation to ${url} as ${role} was e-mailed to ${invite.email}; it can be accepted until ${iso(invite.expiresAt)}.`,
        },
      };
    },

    async remove({ caller, request }) {
      const now = deps.now();
      const { site } = resolveSite(store, caller, request.params[0]!, 'admin', now, { accountOnly: true });
      const requester = requireAccount(caller, 'removing members');
      const email = request.params[1]!.trim().toLowerCase();
      const target = store.getAccountByEmail(email);
      const role = target ? store.getRole(site.id, target.id) : undefined;
      if (!target || role === undefined) {
        throw new ServiceError('not_found', `${email} is not a member of ${site.name}.`, {
          agentMessage: `GET /v1/sites/${site.name}/members lists the members.`,
        });
      }
      const lastOwner = (): ServiceError =>
        new ServiceError('bad_request', `${email} is the last owner of ${site.name} and cannot be removed.`, {
          agentMessage: `Make another member an owner first; a site always keeps at least one owner.`,
        });

      const confirm = request.query.get('confirm');
      if (confirm === null || confirm === '') {
        if (role === 'owner' && store.listMembers(site.id).filter((m) => m.role === 'owner').length <= 1) throw lastOwner();
        const token = `rm_${randomBytes(18).toString('base64url')}`;
        const expiresAt = now + REMOVAL_CONFIRM_MS;
        await store.putConfirmation(hashToken(token), { kind: 'remove_member', siteId: site.id, accountId: target.id, requestedBy: requester.id, expiresAt });
        return {
          status: 200,
          body: {
            confirm_token: token,
            expires_at: iso(expiresAt),
            member: { email, role },
            agent_message: `Confirm with the user that ${email} (${role}) should lose access to ${site.name}, then repeat this request with ?confirm=${token} before ${iso(expiresAt)}.`,
          },
        };
      }

      const tokenHash = hashToken(confirm);
      const pending = store.getConfirmation(tokenHash);
      if (pending?.kind !== 'remove_member' || pending.siteId !== site.id || pending.accountId !== target.id || pending.expiresAt <= now) {
        throw new ServiceError('bad_request', 'The confirmation token is wrong or expired; nobody was removed.', {
          agentMessage: `Confirmation tokens last 5 minutes and match one member. Call DELETE /v1/sites/${site.name}/members/${encodeURIComponent(email)} without ?confirm to get a new one.`,
        });
      }
      const outcome = await store.removeMember(site.id, target.id);
      // Used up either way: a token confirms one removal, once.
      await store.putConfirmation(tokenHash, { ...pending, expiresAt: 0 });
      if (outcome === 'last_owner') throw lastOwner();
      if (outcome === 'not_member') throw new ServiceError('not_found', `${email} is not a member of ${site.name}.`);
      log.info({ site: site.name }, 'member.removed');
      return { status: 200, body: { removed: email, agent_message: `${email} no longer has access to ${site.name}.` } };
    },
  };
}
