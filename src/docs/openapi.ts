import type { Config } from '../config.js';
import { schema, SHAPES, type Schema } from '../contract/index.js';
import { MAX_REQUEST_BYTES, PLAN_LIMITS, REMOVAL_CONFIRM_MS, SITE_NAME_PATTERN } from '../rules/index.js';
import { APPROVAL_LIFETIME_MS, DEFAULT_PAGE, INVITE_LIFETIME_MS, MANIFEST_LIFETIME_MS, MAX_PAGE } from '../sites/index.js';
import { formatDuration } from './facts.js';

/**
 * The OpenAPI 3.1 description of the REST API (`/openapi.json`): the paths written here, the
 * bodies and answers taken from sites/shapes.ts, where the operations' JSON is defined once;
 * test/docs/openapi.test.ts holds it to the router's route table both ways, validates it as
 * OpenAPI 3.1, and checks live answers against its schemas. Response objects forbid properties
 * they do not list, so a field the API adds without documenting it fails those checks.
 */

const { int, object, str } = schema;
const ref = (name: keyof typeof SHAPES): Schema => ({ $ref: `#/components/schemas/${name}` });
const response = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });
const json = (body: Schema, description: string, extra: Schema = {}): Schema => ({ description, content: { 'application/json': { schema: body } }, ...extra });

const nameParam: Schema = { name: 'name', in: 'path', required: true, description: 'Site name.', schema: str(undefined, { pattern: SITE_NAME_PATTERN }) };
const manifestParam: Schema = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The manifest id (`manifest` of `POST /v1/deploy/manifest`).',
  schema: str(undefined, { pattern: '^mf_' }),
};
const manifestSecretParam: Schema = {
  name: 'X-Manifest-Secret',
  in: 'header',
  required: false,
  description:
    'For a manifest made without a credential: the `manifest_secret` of its first answer, required with every request for it (without it the manifest answers `404`). A credential binds every other manifest to its maker.',
  schema: str(undefined, { pattern: '^ms_' }),
};
const pageParams: Schema[] = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Items per page, 1–${MAX_PAGE}.`,
    schema: int(undefined, { minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }),
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: '`next_cursor` of the previous page, unchanged. Omit for the first page.',
    schema: str(undefined, { pattern: '^[A-Za-z0-9_-]+$' }),
  },
];

// Errors every call may get: a rate limit, a fault on our side.
const COMMON_ERRORS = { '429': response('Limit'), '500': response('Internal') };
const SITE_READ_ERRORS = {
  '401': response('Unauthorized'),
  '403': response('Forbidden'),
  '404': response('NotFound'),
  '410': response('Gone'),
  ...COMMON_ERRORS,
};

const SITE_TOKEN = { siteToken: [] };
const API_TOKEN = { apiToken: [] };

function responses(): Record<string, Schema> {
  const error = (description: string, extra: Schema = {}): Schema => json(ref('Error'), description, extra);
  const retryAfter = { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } };
  return {
    BadRequest: error('`bad_request`: a bad archive, body or parameter; the message names it.'),
    Unauthorized: error('`unauthorized`: no credential, or an unknown one.', {
      headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
    }),
    Forbidden: error('`forbidden`: the credential or role cannot do this (e.g. the site token of a claimed site).'),
    NotFound: error('`not_found`: no such site (or one this credential cannot see), file or revision.'),
    Conflict: error('`conflict`: the base revision is not the live one; nothing was published.'),
    Gone: error('`gone`: the site expired or was deleted.'),
    TooLarge: error(`\`too_large\`: over a plan limit, or a request over ${MAX_REQUEST_BYTES / 1024 / 1024} MB.`),
    BlockedSecret: error(
      '`blocked_secret`: the leak guard found secret keys; `details` is `{file, line, kind}` of the first and `findings`, every key found as `{file, line, kind}` (each kind once per line, at most 50); the message names every line.',
    ),
    Limit: error('`limit`: a plan limit or rate limit.', retryAfter),
    Internal: error('`internal`: something failed on our side; retry later.'),
    Unavailable: error('`unavailable`: busy (or the e-mail relay failed); retry after `Retry-After`.', retryAfter),
  };
}

function paths(): Record<string, Schema> {
  const ops: Record<string, Record<string, Schema>> = {
    '/v1/deploy': {
      post: {
        operationId: 'deploy',
        summary: 'Publish a site (create or update)',
        description:
          'The body is an archive (`.tar.gz`, `.tgz`, `.tar`, `.zip`, recognised by its bytes) or JSON (`Content-Type: application/json`). ' +
          'Without `site` it creates a site: anonymous without a credential (it expires unless claimed), in the account with an API token. ' +
          "With `site` it updates that site, which needs its site token or an editor's API token and the live revision as `X-Base-Revision` (JSON: `base_revision`); a stale base is `409` and publishes nothing. " +
          `One request carries at most ${MAX_REQUEST_BYTES / 1024 / 1024} MB.`,
        tags: ['Deploy'],
        security: [{}, SITE_TOKEN, API_TOKEN],
        parameters: [
          {
            name: 'site',
            in: 'query',
            required: false,
            description: 'Site to update (archives; JSON bodies name it inside).',
            schema: str(undefined, { pattern: SITE_NAME_PATTERN }),
          },
          {
            name: 'X-Base-Revision',
            in: 'header',
            required: false,
            description: 'Live revision id the update is based on; required with `site`.',
            schema: str(undefined, { pattern: '^rev_' }),
          },
          {
            name: 'manifest',
            in: 'query',
            required: false,
            description:
              'Uploads a part of a digest deploy: the body holds some or all of the contents the manifest lists as missing (or is empty when none are). Any number of parts, in any order, each within the request limit; `202` while contents are still missing, `201` from the part that brings the last one, which publishes the whole site as one revision. The site and base come from the manifest.',
            schema: str(undefined, { pattern: '^mf_' }),
          },
          manifestSecretParam,
          {
            name: 'publish',
            in: 'query',
            required: false,
            description:
              '`false` stores the revision as a draft: every check runs, the live site does not change, and the answer has `live: false` and a `preview_url`. JSON bodies may say `"publish": false` instead. Only for updates.',
            schema: { type: 'string', enum: ['true', 'false'] },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/gzip': { schema: { type: 'string', contentMediaType: 'application/gzip' } },
            'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } },
            'application/x-tar': { schema: { type: 'string', contentMediaType: 'application/x-tar' } },
            'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
            'application/json': { schema: ref('JsonDeploy') },
          },
        },
        responses: {
          '201': json(ref('DeployResult'), 'Published: the new revision is live.'),
          '202': json(ref('ManifestResult'), 'A part of a digest deploy arrived (`?manifest=`); contents are still missing and nothing is live yet.'),
          '400': response('BadRequest'),
          '401': response('Unauthorized'),
          '403': response('Forbidden'),
          '404': response('NotFound'),
          '409': response('Conflict'),
          '410': response('Gone'),
          '413': response('TooLarge'),
          '422': response('BlockedSecret'),
          ...COMMON_ERRORS,
          '503': response('Unavailable'),
        },
      },
    },
    '/v1/deploy/manifest': {
      post: {
        operationId: 'deployManifest',
        summary: 'Describe a deploy by hash; learn what to upload',
        description:
          'The first half of a digest deploy: the whole site by path, size and sha256. The answer lists the contents the service lacks; upload only those with `POST /v1/deploy?manifest=…`. ' +
          "Only contents of this site's own recent revisions count as present, so a manifest never confirms content stored elsewhere. " +
          `Every check of a deploy that needs no bytes runs here (access, the base revision, paths, skips, executable names, plan limits, index.html). A manifest lasts ${formatDuration(MANIFEST_LIFETIME_MS)} after it was made or after its latest part, and publishes once. ` +
          'It belongs to the credential that made it; one made without a credential answers a `manifest_secret` once, which every later request for it must send as `X-Manifest-Secret`.',
        tags: ['Deploy'],
        security: [{}, SITE_TOKEN, API_TOKEN],
        requestBody: { required: true, content: { 'application/json': { schema: ref('Manifest') } } },
        responses: {
          '201': json(ref('ManifestResult'), 'What to upload.'),
          '400': response('BadRequest'),
          '401': response('Unauthorized'),
          '403': response('Forbidden'),
          '404': response('NotFound'),
          '409': response('Conflict'),
          '410': response('Gone'),
          '413': response('TooLarge'),
          ...COMMON_ERRORS,
          '503': response('Unavailable'),
        },
      },
    },
    '/v1/deploy/manifest/{id}': {
      get: {
        operationId: 'getManifest',
        summary: 'What a digest deploy still needs',
        description:
          "The contents still missing from a manifest's upload, what has arrived and when it expires: ask after an interrupted upload, then send only what is missing. A refused deploy (a secret in one of its parts) answers its refusal; what the next part would meet (the site gone, access lost, a stale base revision) is answered as the part would be.",
        tags: ['Deploy'],
        security: [{}, SITE_TOKEN, API_TOKEN],
        parameters: [manifestParam, manifestSecretParam],
        responses: {
          '200': json(ref('ManifestResult'), 'What is missing.'),
          '401': response('Unauthorized'),
          '403': response('Forbidden'),
          '404': response('NotFound'),
          '409': response('Conflict'),
          '410': response('Gone'),
          '422': response('BlockedSecret'),
          ...COMMON_ERRORS,
        },
      },
      delete: {
        operationId: 'abandonManifest',
        summary: 'Give up a digest deploy',
        description: 'Drops the manifest; its uploaded parts are deleted at the next sweep and no longer count against the cap on unpublished uploads.',
        tags: ['Deploy'],
        security: [{}, SITE_TOKEN, API_TOKEN],
        parameters: [manifestParam, manifestSecretParam],
        responses: {
          '200': json(object({ abandoned: { type: 'boolean', const: true } }, ['abandoned']), 'Given up.'),
          '401': response('Unauthorized'),
          '404': response('NotFound'),
          ...COMMON_ERRORS,
        },
      },
    },
    '/v1/me': {
      get: {
        operationId: 'getMe',
        summary: 'The account behind the API token',
        tags: ['Account'],
        security: [API_TOKEN],
        responses: {
          '200': json(ref('Me'), 'The account and its site allowance.'),
          '401': response('Unauthorized'),
          '403': response('Forbidden'),
          ...COMMON_ERRORS,
        },
      },
    },
    '/v1/sites': {
      get: {
        operationId: 'listSites',
        summary: 'Sites the caller is a member of',
        description: 'Oldest first. Follow `next_cursor` until it is `null`.',
        tags: ['Sites'],
        security: [API_TOKEN],
        parameters: pageParams,
        responses: {
          '200': json(ref('SiteList'), 'A page of sites.'),
          '400': response('BadRequest'),
          '401': response('Unauthorized'),
          '403': response('Forbidden'),
          ...COMMON_ERRORS,
        },
      },
    },
    '/v1/sites/{name}': {
      get: {
        operationId: 'getSite',
        summary: 'One site (and the claim poll for a site token)',
        description:
          'With the site token of a claimed site the answer is `{"claimed": true}` and nothing else: store the site under the account and use an API token from then on.',
        tags: ['Sites'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam],
        responses: {
          '200': json({ oneOf: [ref('Site'), ref('ClaimPoll')] }, 'The site.'),
          '401': response('Unauthorized'),
          '404': response('NotFound'),
          '410': response('Gone'),
          ...COMMON_ERRORS,
        },
      },
      delete: {
        operationId: 'deleteSite',
        summary: "Ask for a site's deletion",
        description: `Owners only. Nothing is deleted yet: a person confirms on \`approve_url\` within ${formatDuration(APPROVAL_LIFETIME_MS)}. Poll \`GET /v1/approvals/{token}\`.`,
        tags: ['Sites'],
        security: [API_TOKEN],
        parameters: [nameParam],
        responses: { '202': json(ref('DeletionRequest'), "Deletion requested; waiting for the person's approval."), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/rename': {
      post: {
        operationId: 'renameSite',
        summary: 'Give a site a new name',
        description: 'Editors and owners, API token only. The old address then redirects to the new one, and the old name is never given out again.',
        tags: ['Sites'],
        security: [API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: object({ name: str('4–63 characters of a-z, 0-9 and -.', { minLength: 4, maxLength: 63 }) }) } },
        },
        responses: { '200': json(ref('RenameResult'), 'Renamed.'), '400': response('BadRequest'), '413': response('TooLarge'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/files': {
      get: {
        operationId: 'listFiles',
        summary: 'Files of the live revision',
        tags: ['Files'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam],
        responses: { '200': json(ref('FileList'), 'Every file, in path order.'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/files/{path}': {
      get: {
        operationId: 'readFile',
        summary: 'One file of the live revision, raw',
        tags: ['Files'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam, { name: 'path', in: 'path', required: true, description: 'Path relative to the site root; may contain `/`.', schema: str() }],
        responses: {
          '200': {
            description: "The file's bytes with its stored content type.",
            headers: {
              'X-Revision': { description: 'The live revision the file was read from.', schema: str(undefined, { pattern: '^rev_' }) },
              ETag: { description: "Strong ETag: the file's sha256.", schema: str() },
            },
            content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
          },
          ...SITE_READ_ERRORS,
        },
      },
    },
    '/v1/sites/{name}/revisions': {
      get: {
        operationId: 'listRevisions',
        summary: "Revisions within the plan's history reach",
        description: `Newest first. History reach: ${Object.entries(PLAN_LIMITS)
          .map(([plan, limits]) => `${plan} ${formatDuration(limits.historyReachMs)}`)
          .join(', ')}; the live revision is always listed.`,
        tags: ['Revisions'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam, ...pageParams],
        responses: { '200': json(ref('RevisionList'), 'A page of revisions.'), '400': response('BadRequest'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/revisions/{id}': {
      delete: {
        operationId: 'deleteRevision',
        summary: 'Delete a revision that is not live',
        description:
          "Owners (and the site token of an unclaimed site, its only owner). At once, on every node: the revision's preview answers `410`, its files are no longer served, listed or reusable, and rollback or promote to it is refused; blobs no other revision uses are collected by the next sweep. Its number is never used again. " +
          'The live revision cannot be deleted (`409`): roll back or promote another one first.',
        tags: ['Revisions'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [
          nameParam,
          {
            name: 'id',
            in: 'path',
            required: true,
            description: 'The revision id (`rev_…`), or its number.',
            schema: str(undefined, { pattern: '^(rev_.+|[1-9][0-9]{0,8})$' }),
          },
        ],
        responses: { '200': json(ref('RevisionDeleted'), 'Deleted.'), '409': response('Conflict'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/rollback': {
      post: {
        operationId: 'rollback',
        summary: 'Make an earlier revision live again',
        description: "The chosen revision's files become a new revision with the next number. Site token while unclaimed, editor or owner.",
        tags: ['Revisions'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: object({ revision: str('Revision id to restore.', { pattern: '^rev_' }) }) } },
        },
        responses: {
          '201': json(ref('RollbackResult'), 'Rolled back.'),
          '400': response('BadRequest'),
          '409': response('Conflict'),
          '413': response('TooLarge'),
          ...SITE_READ_ERRORS,
        },
      },
    },
    '/v1/sites/{name}/promote': {
      post: {
        operationId: 'promote',
        summary: 'Make a stored revision (a draft) live as it is',
        description:
          'The revision becomes live without a copy, guarded like a deploy: `base_revision` must be the live revision, else `409` and nothing changes. Site token while unclaimed, editor or owner.',
        tags: ['Revisions'],
        security: [SITE_TOKEN, API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: object({
                revision: str('Revision id to make live.', { pattern: '^rev_' }),
                base_revision: str('The live revision id it replaces.', { pattern: '^rev_' }),
              }),
            },
          },
        },
        responses: {
          '200': json(ref('PromoteResult'), 'Promoted.'),
          '400': response('BadRequest'),
          '409': response('Conflict'),
          '413': response('TooLarge'),
          ...SITE_READ_ERRORS,
        },
      },
    },
    '/v1/sites/{name}/access': {
      get: {
        operationId: 'getAccess',
        summary: 'Who may see the site and its previews',
        tags: ['Access'],
        security: [API_TOKEN],
        parameters: [nameParam],
        responses: { '200': json(ref('SiteAccess'), 'The access mode.'), ...SITE_READ_ERRORS },
      },
      put: {
        operationId: 'setAccess',
        summary: 'Make the site public, password-protected or members-only; keep its previews to members',
        description:
          'Owners, account credentials only; unclaimed sites stay public. Send `mode`, `previews` or both; what is left out stays as it is. A password has 8–128 characters and is stored as a scrypt hash; setting the mode again signs every visitor out. ' +
          '`previews: "members"` keeps the previews of a public site to its members (who sign in through the app, or send a member\'s API token as Bearer) and to holders of a preview link: while it is on, the `preview_url` of a draft\'s deploy answer and of the revision listing is such a link. Turning it off, or off and on again, ends every link handed out before.',
        tags: ['Access'],
        security: [API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                minProperties: 1,
                ...object(
                  {
                    mode: { type: 'string', enum: ['public', 'password', 'members'] },
                    password: str('With `mode: "password"`.', { minLength: 8, maxLength: 128 }),
                    previews: { type: 'string', enum: ['public', 'members'], description: 'Who may see the previews while the site is public.' },
                  },
                  [],
                ),
              },
            },
          },
        },
        responses: { '200': json(ref('SiteAccess'), 'Set.'), '400': response('BadRequest'), '413': response('TooLarge'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/members': {
      get: {
        operationId: 'listMembers',
        summary: 'Members and pending invites',
        tags: ['Members'],
        security: [API_TOKEN],
        parameters: [nameParam],
        responses: { '200': json(ref('MemberList'), 'Members by e-mail, then invites.'), ...SITE_READ_ERRORS },
      },
      post: {
        operationId: 'inviteMember',
        summary: 'Invite someone by e-mail',
        description: `Owners only. The invite is valid ${formatDuration(INVITE_LIFETIME_MS)}; inviting again replaces it.`,
        tags: ['Members'],
        security: [API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: object({ email: str(undefined, { format: 'email' }), role: { type: 'string', enum: ['editor', 'viewer'] } }) },
          },
        },
        responses: {
          '201': json(ref('InviteResult'), 'Invited; the e-mail is on its way.'),
          '400': response('BadRequest'),
          '413': response('TooLarge'),
          ...SITE_READ_ERRORS,
          '503': response('Unavailable'),
        },
      },
    },
    '/v1/sites/{name}/members/{email}': {
      delete: {
        operationId: 'removeMember',
        summary: 'Remove a member (two calls)',
        description: `Owners only. Without \`confirm\` the answer is a confirmation token; repeat the request with \`?confirm=<token>\` within ${formatDuration(REMOVAL_CONFIRM_MS)}. The last owner cannot be removed.`,
        tags: ['Members'],
        security: [API_TOKEN],
        parameters: [
          nameParam,
          { name: 'email', in: 'path', required: true, description: "The member's e-mail address.", schema: str(undefined, { format: 'email' }) },
          { name: 'confirm', in: 'query', required: false, description: 'The `confirm_token` of the first call.', schema: str(undefined, { pattern: '^rm_' }) },
        ],
        responses: {
          '200': json({ oneOf: [ref('RemovalConfirmation'), ref('RemovalDone')] }, 'First call: a confirmation token. Second call: removed.'),
          '400': response('BadRequest'),
          ...SITE_READ_ERRORS,
        },
      },
    },
    '/v1/approvals/{token}': {
      get: {
        operationId: 'getApproval',
        summary: 'Whether a requested deletion happened',
        description: 'No credential needed: the token is the secret. (A credential that is sent must be valid.)',
        tags: ['Sites'],
        security: [{}],
        parameters: [
          {
            name: 'token',
            in: 'path',
            required: true,
            description: 'The approval token from `DELETE /v1/sites/{name}`.',
            schema: str(undefined, { pattern: '^ap_' }),
          },
        ],
        responses: { '200': json(ref('Approval'), "The approval's state."), '401': response('Unauthorized'), '404': response('NotFound'), ...COMMON_ERRORS },
      },
    },
    ...domainPaths(),
  };
  return ops;
}

/** Custom domains (docs/sites-api.md "Custom domains"). */
function domainPaths(): Record<string, Record<string, Schema>> {
  const domainParam: Schema = {
    name: 'domain',
    in: 'path',
    required: true,
    description: 'The domain, as the list spells it (lower-case ASCII).',
    schema: str(undefined, { pattern: '^[a-z0-9.-]{3,253}$' }),
  };
  return {
    '/v1/sites/{name}/domains': {
      get: {
        operationId: 'listDomains',
        summary: 'Custom domains of a site',
        description: 'Members with account credentials. Each domain with its status, the reason of a failed check, and the DNS records it needs.',
        tags: ['Domains'],
        security: [API_TOKEN],
        parameters: [nameParam],
        responses: { '200': json(ref('DomainList'), 'Domains in name order.'), ...SITE_READ_ERRORS },
      },
      post: {
        operationId: 'addDomain',
        summary: 'Attach a custom domain',
        description:
          'Owners with account credentials. The domain starts `pending`; `agent_message` and `records` say which DNS records to create. ' +
          "A domain another site holds active is `409`; over the plan's cap (or on a plan without domains) `429`. " +
          'Posting a domain the site has already changes `primary` and `redirect_site_address` and answers `200`.',
        tags: ['Domains'],
        security: [API_TOKEN],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: object(
                {
                  domain: str('Domain name; internationalised names are stored in punycode.'),
                  primary: { type: 'boolean', description: 'Of an apex/www pair, the one the other redirects to.' },
                  redirect_site_address: { type: 'boolean', description: "With `primary`: the site's own address redirects to this domain." },
                },
                ['domain'],
              ),
            },
          },
        },
        responses: {
          '200': json(ref('DomainResult'), 'The site had the domain already; `primary` changed as asked.'),
          '201': json(ref('DomainResult'), 'Attached, pending verification.'),
          '400': response('BadRequest'),
          '409': response('Conflict'),
          '413': response('TooLarge'),
          ...SITE_READ_ERRORS,
        },
      },
    },
    '/v1/sites/{name}/domains/{domain}': {
      delete: {
        operationId: 'removeDomain',
        summary: 'Detach a custom domain',
        description: 'Owners with account credentials. The domain stops being served at once.',
        tags: ['Domains'],
        security: [API_TOKEN],
        parameters: [nameParam, domainParam],
        responses: { '200': json(ref('DomainRemoved'), 'Detached.'), ...SITE_READ_ERRORS },
      },
    },
    '/v1/sites/{name}/domains/{domain}/verify': {
      post: {
        operationId: 'verifyDomain',
        summary: 'Check the TXT record now',
        description:
          'Owners with account credentials. Looks the `_plinth-challenge` TXT record up and answers the domain with its new status (the reason when it is not active).',
        tags: ['Domains'],
        security: [API_TOKEN],
        parameters: [nameParam, domainParam],
        responses: { '200': json(ref('DomainResult'), 'Checked; see `status` and `reason`.'), '413': response('TooLarge'), ...SITE_READ_ERRORS },
      },
    },
  };
}

export function openApiDocument(config: Readonly<Config>): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Plinth REST API',
      version: '1',
      summary: 'Publish a static website from a folder and manage it.',
      description:
        `Guides: ${config.publicUrls.docs}/llms.txt (Markdown for agents), ${config.publicUrls.docs}/sites-api . ` +
        'Every error has the body `{"error": {"code", "message", "details"?}, "agent_message"?}`.',
    },
    servers: [{ url: config.publicUrls.api }],
    tags: [
      { name: 'Deploy', description: 'Publishing.' },
      { name: 'Sites' },
      { name: 'Files' },
      { name: 'Revisions' },
      { name: 'Access', description: 'Who may see a site: public, password or members only.' },
      { name: 'Members' },
      { name: 'Domains' },
      { name: 'Account' },
    ],
    security: [API_TOKEN],
    paths: paths(),
    components: {
      schemas: SHAPES,
      responses: responses(),
      securitySchemes: {
        siteToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'st_…',
          description:
            'Site token, returned once by an anonymous deploy. Updates, reads and rolls back its one site until the site is claimed; afterwards it only answers the claim poll.',
        },
        apiToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'pl_…',
          description:
            "API token of an account. Everything the account may do, with the caller's role on each site. (OAuth tokens `pla_…` are for the MCP server; REST answers them 401.)",
        },
      },
    },
  };
}
