import { BODIES, schema } from '../../contract/index.js';
import { APPROVAL_LIFETIME_MS, formatDuration } from '../../sites/index.js';
import { siteEndpoints as e } from '../endpoints.js';
import { answer, pathParam, shape, type ApiRoute } from '../route.js';
import { nameParam, pageParams } from './params.js';

const { str } = schema;

/** The account, its sites, a site's name and its deletion (docs/sites-api.md). */
export const siteRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/v1/me',
    operationId: 'getMe',
    summary: 'The account behind the API token',
    tag: 'Account',
    auth: ['api'],
    responses: { 200: answer('Me', 'The account and its site allowance.') },
    errors: ['forbidden'],
    handle: e.me,
  },
  {
    method: 'GET',
    path: '/v1/sites',
    operationId: 'listSites',
    summary: 'Sites the caller is a member of',
    description: 'Oldest first. Follow `next_cursor` until it is `null`.',
    tag: 'Sites',
    auth: ['api'],
    parameters: pageParams,
    responses: { 200: answer('SiteList', 'A page of sites.') },
    errors: ['bad_request', 'forbidden'],
    handle: e.listSites,
  },
  {
    method: 'GET',
    path: '/v1/sites/{name}',
    operationId: 'getSite',
    summary: 'One site (and the claim poll for a site token)',
    description:
      'With the site token of a claimed site the answer is `{"claimed": true}` and nothing else: store the site under the account and use an API token from then on.',
    tag: 'Sites',
    auth: ['site', 'api'],
    parameters: [nameParam],
    responses: { 200: answer({ oneOf: [shape('Site'), shape('ClaimPoll')] }, 'The site.') },
    errors: ['not_found', 'gone'],
    handle: e.getSite,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/claim-link',
    operationId: 'renewClaimLink',
    summary: 'A new claim link for an unclaimed site',
    description:
      "The site token of an unclaimed site only: a new claim link, and the previous one stops working at once (a link is stored as a hash, so a lost one cannot be shown again). Keep it as `claim_url` in `.service.json`. A claimed site's token is `403`; an expired site is `410`.",
    tag: 'Sites',
    auth: ['site'],
    parameters: [nameParam],
    responses: { 201: answer('ClaimLink', 'The new claim link.') },
    errors: ['forbidden', 'not_found', 'gone'],
    handle: e.renewClaimLink,
  },
  {
    method: 'DELETE',
    path: '/v1/sites/{name}',
    operationId: 'deleteSite',
    summary: "Ask for a site's deletion",
    description: `Owners only. Nothing is deleted yet: a person confirms on \`approve_url\` within ${formatDuration(APPROVAL_LIFETIME_MS)}. Poll \`GET /v1/approvals/{token}\`.`,
    tag: 'Sites',
    auth: ['api'],
    parameters: [nameParam],
    responses: { 202: answer('DeletionRequest', "Deletion requested; waiting for the person's approval.") },
    errors: ['forbidden', 'not_found', 'gone'],
    handle: e.deleteSite,
  },
  {
    method: 'POST',
    path: '/v1/sites/{name}/rename',
    operationId: 'renameSite',
    summary: 'Give a site a new name',
    description: 'Editors and owners, API token only. The old address then redirects to the new one, and the old name is never given out again.',
    tag: 'Sites',
    auth: ['api'],
    parameters: [nameParam],
    body: { schema: BODIES.Rename },
    responses: { 200: answer('RenameResult', 'Renamed.') },
    errors: ['forbidden', 'not_found', 'gone'],
    handle: e.rename,
  },
  {
    method: 'GET',
    path: '/v1/approvals/{token}',
    operationId: 'getApproval',
    summary: 'Whether a requested deletion happened',
    description: 'No credential needed: the token is the secret. (A credential that is sent must be valid.)',
    tag: 'Sites',
    auth: ['none'],
    parameters: [pathParam('token', 'The approval token from `DELETE /v1/sites/{name}`.', str(undefined, { pattern: '^ap_' }))],
    responses: { 200: answer('Approval', "The approval's state.") },
    errors: ['not_found'],
    handle: e.approval,
  },
];
