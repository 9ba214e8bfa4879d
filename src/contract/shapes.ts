import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { ACCOUNT_PLANS, MAX_IDEMPOTENCY_KEY_CHARS, PLANS, REMOVAL_CONFIRM_MS, ROLES, SITE_ACTIONS, SITE_NAME_PATTERN } from '../rules/index.js';
import { AnalyticsDay, SiteAnalytics } from './analytics-shapes.js';
import { Domain, DomainList, DomainRemoved, DomainResult } from './domain-shapes.js';
import { Delivery, DeliveryList, Event, EventList, Webhook, WebhookCreated, WebhookDeleted, WebhookList, WebhookPayload } from './event-shapes.js';
import { arrayOf, bool, constant, enumOf, int, nullable, object, str, time, type JsonOf, type StringSchema } from './schema-kit.js';

/**
 * The JSON the operations answer (SPEC 2 and 4), each shape written once as a JSON Schema. The
 * TypeScript types of the views are derived from these schemas (`JsonOf`), the MCP tools'
 * output schemas are these schemas, and the OpenAPI document lists them as its components, so
 * a field added here is typed, validated and documented at once. Objects allow no property they
 * do not list: the contract tests check live answers against them.
 */

const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];
const SHA256 = '^[0-9a-f]{64}$';
const revisionId = (description = 'Revision id.'): StringSchema => str(description, { pattern: '^rev_' });
const nextCursor = nullable(str('Pass it as `cursor` for the next page.'), '`null` on the last page.');
const email = (description?: string): StringSchema => str(description, { format: 'email' });

const revisionRefProperties = {
  id: revisionId(),
  number: int('Starts at 1; every deploy, patch or rollback gets the next number.', { minimum: 1 }),
  created_at: time(),
  created_by: str("The deploying account's e-mail, `site_token`, `anonymous` (first anonymous deploy) or `admin`."),
};
const deploySiteProperties = {
  name: str('Site name.', { pattern: SITE_NAME_PATTERN }),
  url: str("The site's public address.", { format: 'uri' }),
  claimed: bool('False for an unclaimed anonymous site.'),
  expires_at: time('Only for unclaimed anonymous sites.'),
};

export const RevisionRef = object(revisionRefProperties);
export const DeploySite = object(deploySiteProperties, ['name', 'url', 'claimed']);
export const DeployRevision = object(
  {
    id: revisionRefProperties.id,
    number: revisionRefProperties.number,
    files: int('File count.'),
    bytes: int('Total size in bytes.'),
    live: constant(false, 'Only on a draft (`publish: false`): stored, not live.'),
    preview_url: str(
      "Only on a draft: the revision's own read-only address, `<number>--<name>` under the site domain; while the site keeps its previews to members, a preview link that opens it for anyone holding it.",
      { format: 'uri' },
    ),
  },
  ['id', 'number', 'files', 'bytes'],
);

export const Site = object(
  {
    ...deploySiteProperties,
    plan: enumOf(PLANS, 'Plan id, lower case.'),
    role: enumOf(ROLES, "The caller's role; a site token counts as owner of its unclaimed site."),
    permissions: arrayOf(enumOf(SITE_ACTIONS), "What the caller may do to the site now, given its role, its kind of credential and the site's state."),
    live_revision: nullable(RevisionRef, '`null` only for a site that never published.'),
    badge: bool('Whether pages carry the Plinth badge.'),
  },
  ['name', 'url', 'claimed', 'plan', 'role', 'permissions', 'live_revision', 'badge'],
);

export const ClaimPoll = object(
  {
    claimed: constant(true),
    account_token: str('Once, if the person who claimed the site let its publishing agent keep updating it: an API token of their account for the agent.', {
      pattern: '^pl_',
    }),
    agent_message: str('What the agent does now: where to keep the API token, and which earlier revisions the account brings back within reach.'),
  },
  ['claimed'],
  'What a site token learns once its site was claimed.',
);

export const ClaimLink = object(
  {
    claim_url: str('The new claim link: a signed-in person who opens it keeps the site. The previous link no longer works.', { format: 'uri' }),
    expires_at: time('When the unclaimed site expires, and the link with it.'),
    agent_message: str(),
  },
  ['claim_url', 'expires_at', 'agent_message'],
  "A new claim link for an unclaimed site, asked by its site token's holder.",
);

export const LinkWarning = object(
  {
    file: str('The page or style sheet that holds the reference.'),
    line: int('Its line in that file, from 1.', { minimum: 1 }),
    ref: str('The reference as written.'),
    kind: constant('broken_link'),
  },
  undefined,
  'An internal reference (`href`, `src`, `srcset`, `<link>`, CSS `url()` or `@import`) that the serving rules lead to no file.',
);

export const DeployResult = object(
  {
    site: DeploySite,
    revision: DeployRevision,
    site_token: str('Only on an anonymous create: the credential for updating this site until it is claimed. Shown once.', { pattern: '^st_' }),
    claim_url: str('Only on an anonymous create: the page where a signed-in person claims the site.', { format: 'uri' }),
    skipped: arrayOf(str(), 'Paths left out on purpose (`.git/`, `node_modules/`, `.env*`, …).'),
    warnings: arrayOf(LinkWarning, 'The link check of the published site: the first broken references (the deploy is published all the same).'),
    warnings_total: int('How many broken references there are in all; more than `warnings` lists when there are many.', { minimum: 0 }),
    manifest: str('Only when `GET /v1/deploy/manifest/<id>` answers what a published digest deploy published: that manifest.', { pattern: '^mf_' }),
    agent_message: str(),
  },
  ['site', 'revision', 'skipped', 'warnings', 'warnings_total', 'agent_message'],
);

export const ManifestResult = object(
  {
    manifest: str('Upload the missing contents with `POST /v1/deploy?manifest=<this>`, in one request or several.', { pattern: '^mf_' }),
    manifest_secret: str(
      'Only when the manifest was made without a credential, and only in that first answer: send it as the `X-Manifest-Secret` header with every later request for this manifest (uploads, `GET`, `DELETE`); without it the manifest answers `404`.',
      { pattern: '^ms_' },
    ),
    missing: arrayOf(str(undefined, { pattern: SHA256 }), 'sha256 of every content still to upload, each once.'),
    missing_bytes: int('Bytes still to upload.'),
    received: int('Contents that have arrived so far.'),
    received_bytes: int('Bytes that have arrived so far.'),
    files: int('Files of the site to publish.'),
    skipped: arrayOf(str(), 'Paths left out on purpose.'),
    expires_at: time('When the manifest and its uploaded parts are dropped unless another part arrives first (each part renews it).'),
    agent_message: str(),
  },
  ['manifest', 'missing', 'missing_bytes', 'received', 'received_bytes', 'files', 'skipped', 'expires_at', 'agent_message'],
);

export const SiteList = object({ sites: arrayOf(Site), next_cursor: nextCursor });

export const FileList = object({
  revision: revisionId('The live revision the list is of.'),
  files: arrayOf(object({ path: str(), size: int(), sha256: str(undefined, { pattern: SHA256 }) })),
});

export const Revision = object(
  {
    ...revisionRefProperties,
    files: int('File count.'),
    bytes: int('Total size in bytes.'),
    kind: enumOf(['deploy', 'patch', 'rollback']),
    rollback_of: revisionId('For a rollback: the revision whose files it restored.'),
    live: bool('Whether this is the live revision.'),
    draft: bool('Stored with `publish: false` and not promoted since.'),
    preview_url: str(
      "The revision's own read-only address, `<number>--<name>` under the site domain; while the site keeps its previews to members, a preview link that opens it for anyone holding it.",
      { format: 'uri' },
    ),
  },
  ['id', 'number', 'created_at', 'created_by', 'files', 'bytes', 'kind', 'live', 'draft', 'preview_url'],
);

export const RevisionList = object({ revisions: arrayOf(Revision), next_cursor: nextCursor });
export const RollbackResult = object(
  {
    site: Site,
    revision: Revision,
    unchanged: bool(
      'Present (true) when the chosen content was live already: nothing changed, no revision was made, and `revision` is the live one (answered `200`, not `201`).',
    ),
    agent_message: str(),
  },
  ['site', 'revision', 'agent_message'],
);
export const PromoteResult = object({ site: Site, revision: Revision, agent_message: str() });
export const SiteAccess = object(
  {
    access: object(
      {
        mode: enumOf(['public', 'password', 'members'], 'Who may see the site (and, unless `previews` says otherwise, its previews).'),
        previews: enumOf(
          ['public', 'members'],
          "`members`: the previews (`<number>--<name>`) of a public site are kept to its members and to holders of a preview link (the `preview_url` members are given); the live address stays public. A password or members-only site's previews always follow its own access.",
        ),
      },
      ['mode', 'previews'],
    ),
    agent_message: str(),
  },
  ['access'],
);
export const RevisionDeleted = object(
  {
    revision: object({ id: revisionId(), number: revisionRefProperties.number }, ['id', 'number']),
    deleted: constant(true),
    agent_message: str(),
  },
  ['revision', 'deleted', 'agent_message'],
  'A revision deleted: its preview answers 410, its files are no longer served, and its number is not used again.',
);
export const RenameResult = object({ site: Site, previous_name: str(), agent_message: str() });

export const DeletionRequest = object({
  approve_url: str('The page where a person confirms the deletion.', { format: 'uri' }),
  approval: object({ token: str(undefined, { pattern: '^ap_' }), status: constant('pending'), expires_at: time() }),
  agent_message: str(),
});

export const Approval = object(
  {
    status: enumOf(['pending', 'approved', 'expired']),
    site: nullable(object({ name: str(), url: str(undefined, { format: 'uri' }) })),
    expires_at: time(),
    approve_url: str('While pending.', { format: 'uri' }),
    deleted_at: time('Once approved.'),
  },
  ['status', 'site', 'expires_at'],
);

export const Invite = object({ email: email(), role: enumOf(['editor', 'viewer']), expires_at: time() });
export const MemberList = object({ members: arrayOf(object({ email: email(), role: enumOf(ROLES) })), invites: arrayOf(Invite) });
export const InviteResult = object({ invite: Invite, agent_message: str() });
export const RemovalConfirmation = object({
  confirm_token: str(`Repeat the request with \`?confirm=<token>\` within ${REMOVAL_CONFIRM_MS / 60_000} minutes.`, { pattern: '^rm_' }),
  expires_at: time(),
  member: object({ email: email(), role: enumOf(ROLES) }),
  agent_message: str(),
});
export const RemovalDone = object({ removed: email(), agent_message: str() });

export const Me = object({
  email: email(),
  plan: enumOf(ACCOUNT_PLANS),
  sites_used: int('Sites the account owns.'),
  sites_limit: int('Sites its plan allows.'),
});

/** SPEC 7's error body. */
export const ErrorBody = object(
  {
    error: object(
      {
        code: enumOf(ERROR_CODES, 'Stable error code (see the errors guide).'),
        message: str('What went wrong, for people.'),
        details: {
          type: 'object',
          description: 'Structured facts, e.g. `{file, line, kind}` for `blocked_secret`, `{reason}` for a refused name, `{live_revision}` for `conflict`.',
        },
      },
      ['code', 'message'],
    ),
    agent_message: str(
      "What the calling agent should do or tell its user next. Pass it on in the user's language with links, codes, numbers and dates unchanged.",
    ),
  },
  ['error'],
);

const fileInBody = {
  path: str('Path relative to the site root, e.g. "index.html" or "css/site.css".'),
  sha256: str('For content this site already has (as its file list shows it): its sha256 instead of the content.', { pattern: SHA256 }),
  size: int('With sha256: the size of that content in bytes.'),
};
const siteInBody = str('Site to update; omit to create a new site.', { pattern: SITE_NAME_PATTERN });
// Any other string is a base that is not the live revision: a conflict, as in `X-Base-Revision`.
const baseInBody = str('For updates: the live revision id (`live_revision.id` of the site) the change is based on.', { minLength: 1, maxLength: 200 });

/**
 * SPEC 4.2's inline-files deploy body (REST `POST /v1/deploy` with JSON, MCP `deploy_site`): the
 * one schema the ingest worker validates every JSON deploy against.
 */
export const JsonDeploy = object(
  {
    files: arrayOf(
      object(
        {
          path: fileInBody.path,
          content: str('The file content: text as is (encoding utf8) or base64 for binary files. Omit it when sending sha256 and size.'),
          encoding: enumOf(['utf8', 'base64'], 'utf8 (default) or base64.'),
          sha256: fileInBody.sha256,
          size: fileInBody.size,
        },
        ['path'],
      ),
      'Every file of the site (or, with patch, only the changed ones); index.html at the root is required. Each file carries its content, or for content the site already has, only sha256 and size, so a redeploy sends only what changed.',
    ),
    site: siteInBody,
    base_revision: baseInBody,
    patch: bool('true: files holds only changed files; everything else of base_revision is kept.'),
    publish: bool('false: store the revision as a draft with a preview address; it goes live only when promoted.'),
    deleted: arrayOf(str(), 'With patch: paths to remove.'),
    manifest: str(
      'A part of a digest deploy: files holds some of the contents the manifest lists as missing, and the site goes live when the last one has arrived. REST: the same id as `?manifest=`.',
      { pattern: '^mf_[A-Za-z0-9_-]{1,100}$' },
    ),
    idempotency_key: str(
      "MCP's deploy_site only (REST sends the `Idempotency-Key` header instead, and refuses this field): a key of your choosing, such as a UUID, that makes a retry safe. The same key with the same arguments within 24 hours answers the first answer again and changes nothing; with other arguments, or while the first call still runs, it is a conflict.",
      { minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS, pattern: '^[\\x20-\\x7e]+$' },
    ),
  },
  ['files'],
);

/** The first half of a digest deploy: the whole site by path, size and sha256. */
export const ManifestRequest = object(
  {
    site: siteInBody,
    base_revision: baseInBody,
    files: { ...arrayOf(object({ path: fileInBody.path, size: int('Size in bytes.'), sha256: str(undefined, { pattern: SHA256 }) })), minItems: 1 },
  },
  ['files'],
);

/** Every named shape, as the OpenAPI document's components list them. */
export const SHAPES = {
  Error: ErrorBody,
  JsonDeploy,
  Manifest: ManifestRequest,
  RevisionRef,
  DeploySite,
  DeployRevision,
  LinkWarning,
  DeployResult,
  ManifestResult,
  Site,
  ClaimPoll,
  ClaimLink,
  SiteList,
  FileList,
  Revision,
  RevisionList,
  RollbackResult,
  PromoteResult,
  SiteAccess,
  RevisionDeleted,
  RenameResult,
  DeletionRequest,
  Approval,
  Invite,
  MemberList,
  InviteResult,
  RemovalConfirmation,
  RemovalDone,
  Me,
  Domain,
  DomainResult,
  DomainList,
  DomainRemoved,
  Event,
  EventList,
  Webhook,
  WebhookCreated,
  WebhookList,
  WebhookDeleted,
  Delivery,
  DeliveryList,
  WebhookPayload,
  AnalyticsDay,
  SiteAnalytics,
} as const;

export type DeploySiteView = JsonOf<typeof DeploySite>;
export type RevisionRefView = JsonOf<typeof RevisionRef>;
export type SiteView = JsonOf<typeof Site>;
export type RevisionView = JsonOf<typeof Revision>;
export type DeployView = JsonOf<typeof DeployResult>;
export type ManifestView = JsonOf<typeof ManifestResult>;
export type SiteListView = JsonOf<typeof SiteList>;
export type ClaimPollView = JsonOf<typeof ClaimPoll>;
export type ClaimLinkView = JsonOf<typeof ClaimLink>;
export type FileListView = JsonOf<typeof FileList>;
export type RevisionListView = JsonOf<typeof RevisionList>;
export type RollbackView = JsonOf<typeof RollbackResult>;
export type PromoteView = JsonOf<typeof PromoteResult>;
export type SiteAccessView = JsonOf<typeof SiteAccess>;
export type RevisionDeletedView = JsonOf<typeof RevisionDeleted>;
export type RenameView = JsonOf<typeof RenameResult>;
export type DeletionView = JsonOf<typeof DeletionRequest>;
export type ApprovalView = JsonOf<typeof Approval>;
export type MemberListView = JsonOf<typeof MemberList>;
export type InviteView = JsonOf<typeof InviteResult>;
export type RemovalView = JsonOf<typeof RemovalConfirmation> | JsonOf<typeof RemovalDone>;
export type MeView = JsonOf<typeof Me>;
