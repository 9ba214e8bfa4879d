import { BODIES, schema } from '../../contract/index.js';
import { REMOVAL_CONFIRM_MS } from '../../rules/index.js';
import { formatDuration, INVITE_LIFETIME_MS } from '../../sites/index.js';
import { siteEndpoints as e } from '../endpoints.js';
import { answer, pathParam, shape, type ApiRoute } from '../route.js';
import { nameParam, SITE_READ } from './params.js';

const { str } = schema;

/** Who may see a site, and its members and invites (docs/sites-api.md). */
export const peopleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/v1/sites/{name}/access',
    operationId: 'getAccess',
    summary: 'Who may see the site and its previews',
    tag: 'Access',
    auth: ['api'],
    parameters: [nameParam],
    responses: { 200: answer('SiteAccess', 'The access mode.') },
    errors: SITE_READ,
    handle: e.getAccess,
  },
  {
    method: 'PUT',
    path: '/v1/sites/{name}/access',
    operationId: 'setAccess',
    summary: 'Make the site public, password-protected or members-only; keep its previews to members',
    description:
      'Owners, account credentials only; unclaimed sites stay public. Send `mode`, `previews` or both; what is left out stays as it is. A password has 8–128 characters and is stored as a scrypt hash; setting the mode again signs every visitor out. ' +
      '`previews: "members"` keeps the previews of a public site to its members (who sign in through the app, or send a member\'s API token as Bearer) and to holders of a preview link: while it is on, the `preview_url` of a draft\'s deploy answer and of the revision listing is such a link. Turning it off, or off and on again, ends every link handed out before.',
    tag: 'Access',
    auth: ['api'],
    parameters: [nameParam],
    body: { schema: BODIES.SiteAccessChange },
    responses: { 200: answer('SiteAccess', 'Set.') },
    errors: SITE_READ,
    handle: e.setAccess,
  },
  {
    method: 'GET',
    path: '/v1/sites/{name}/members',
    operationId: 'listMembers',
    summary: 'Members and pending invites',
    tag: 'Members',
    auth: ['api'],
    parameters: [nameParam],
    responses: { 200: answer('MemberList', 'Members by e-mail, then invites.') },
    errors: SITE_READ,
    handle: e.listMembers,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/members',
    operationId: 'inviteMember',
    summary: 'Invite someone by e-mail',
    description: `Owners only. The invite is valid ${formatDuration(INVITE_LIFETIME_MS)}; inviting again replaces it.`,
    tag: 'Members',
    auth: ['api'],
    parameters: [nameParam],
    body: { schema: BODIES.Invite },
    responses: { 201: answer('InviteResult', 'Invited; the e-mail is on its way.') },
    errors: [...SITE_READ, 'limit', 'unavailable'],
    handle: e.invite,
  },
  {
    method: 'DELETE',
    path: '/v1/sites/{name}/members/{email}',
    operationId: 'removeMember',
    summary: 'Remove a member (two calls)',
    description: `Owners only. Without \`confirm\` the answer is a confirmation token; repeat the request with \`?confirm=<token>\` within ${formatDuration(REMOVAL_CONFIRM_MS)}. The last owner cannot be removed. For an address that has only a pending invite, the same two calls withdraw the invite, and its link stops working.`,
    tag: 'Members',
    auth: ['api'],
    parameters: [
      nameParam,
      pathParam('email', "The member's (or invited person's) e-mail address.", str(undefined, { format: 'email' })),
      { name: 'confirm', in: 'query', required: false, description: 'The `confirm_token` of the first call.', schema: str(undefined, { pattern: '^rm_' }) },
    ],
    responses: { 200: answer({ oneOf: [shape('RemovalConfirmation'), shape('RemovalDone')] }, 'First call: a confirmation token. Second call: removed.') },
    errors: ['bad_request', ...SITE_READ],
    handle: e.removeMember,
  },
];
