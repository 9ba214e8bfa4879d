/**
 * JSON Schemas of the tools' inputs and outputs. Outputs describe the same JSON the REST API
 * returns (SPEC 2, 4), since both come from the same operations.
 */

type Schema = Record<string, unknown>;

const str = (description?: string): Schema => (description ? { type: 'string', description } : { type: 'string' });
const int = (description?: string): Schema => (description ? { type: 'integer', description } : { type: 'integer' });
const bool = { type: 'boolean' };
const object = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  required,
  ...extra,
});

export const siteName = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  description: 'The site name, e.g. "sunny-otter-4821" (the first label of its address).',
};

export const page = {
  limit: { type: 'integer', minimum: 1, maximum: 200, description: 'Page size, 1-200 (default 50).' },
  cursor: { type: 'string', description: 'next_cursor from the previous page; omit for the first page.' },
};

const revisionRef = object({ id: str('Revision id, rev_…'), number: int(), created_at: str(), created_by: str() }, ['id', 'number', 'created_at', 'created_by']);

const siteProperties = {
  name: str(),
  url: str('Public address of the site.'),
  claimed: bool,
  expires_at: str('When an unclaimed anonymous site expires.'),
  plan: str('anonymous, free, prompter, builder, team or company.'),
  role: { type: 'string', enum: ['viewer', 'editor', 'owner'] },
  live_revision: { anyOf: [revisionRef, { type: 'null' }] },
  badge: bool,
};

export const site = object(siteProperties, ['name', 'url', 'claimed', 'plan', 'role', 'live_revision', 'badge']);

export const revision = object(
  {
    ...revisionRef.properties as Record<string, Schema>,
    files: int(),
    bytes: int(),
    kind: { type: 'string', enum: ['deploy', 'patch', 'rollback'] },
    rollback_of: str(),
  },
  ['id', 'number', 'created_at', 'created_by', 'files', 'bytes', 'kind'],
);

export const outputs = {
  account: object({ email: str(), plan: str(), sites_used: int(), sites_limit: int() }, ['email', 'plan', 'sites_used', 'sites_limit']),
  siteList: object({ sites: { type: 'array', items: site }, next_cursor: { type: ['string', 'null'] } }, ['sites', 'next_cursor']),
  /** A site, or (for a claimed site's token) the claim poll `{claimed: true, account_token?}`. */
  siteOrClaim: object({ ...siteProperties, account_token: str() }, ['claimed']),
  deploy: object(
    {
      site: object({ name: str(), url: str(), claimed: bool, expires_at: str() }, ['name', 'url', 'claimed']),
      revision: object({ id: str(), number: int(), files: int(), bytes: int() }, ['id', 'number', 'files', 'bytes']),
      site_token: str('Only on an anonymous create: keep it to update the site.'),
      claim_url: str('Only on an anonymous create.'),
      skipped: { type: 'array', items: str() },
      agent_message: str(),
    },
    ['site', 'revision', 'skipped', 'agent_message'],
  ),
  fileList: object(
    { revision: str(), files: { type: 'array', items: object({ path: str(), size: int(), sha256: str() }, ['path', 'size', 'sha256']) } },
    ['revision', 'files'],
  ),
  file: object(
    {
      site: str(),
      path: str(),
      revision: str(),
      size: int(),
      sha256: str(),
      content_type: str(),
      encoding: { type: 'string', enum: ['utf8', 'base64'] },
      content: str(),
    },
    ['site', 'path', 'revision', 'size', 'sha256', 'content_type', 'encoding', 'content'],
  ),
  revisionList: object({ revisions: { type: 'array', items: revision }, next_cursor: { type: ['string', 'null'] } }, ['revisions', 'next_cursor']),
  rollback: object({ site, revision, agent_message: str() }, ['site', 'revision', 'agent_message']),
  rename: object({ site, previous_name: str(), agent_message: str() }, ['site', 'previous_name', 'agent_message']),
  deletion: object(
    {
      approve_url: str('The page where an owner confirms the deletion.'),
      approval: object({ token: str(), status: str(), expires_at: str() }, ['token', 'status', 'expires_at']),
      agent_message: str(),
    },
    ['approve_url', 'approval', 'agent_message'],
  ),
  members: object(
    {
      members: { type: 'array', items: object({ email: str(), role: str() }, ['email', 'role']) },
      invites: { type: 'array', items: object({ email: str(), role: str(), expires_at: str() }, ['email', 'role', 'expires_at']) },
    },
    ['members', 'invites'],
  ),
  invite: object({ invite: object({ email: str(), role: str(), expires_at: str() }, ['email', 'role', 'expires_at']), agent_message: str() }, ['invite', 'agent_message']),
  removal: object(
    {
      confirm_token: str('First step only: pass it back as "confirm" within 5 minutes.'),
      expires_at: str(),
      member: object({ email: str(), role: str() }, ['email', 'role']),
      removed: str('Second step only: the address that lost access.'),
      agent_message: str(),
    },
    ['agent_message'],
  ),
};

/** SPEC 4.2's inline-files body, as `deploy_site` takes it. */
export const deployInput = object(
  {
    files: {
      type: 'array',
      description:
        'Every file of the site (or, with patch, only the changed ones). index.html at the root is required. ' +
        'Each file carries "content"; or, for content the site already has (unchanged since an earlier revision), only "sha256" and "size" as list_files shows them, so a redeploy sends only what changed.',
      items: object(
        {
          path: str('Path relative to the site root, e.g. "index.html" or "css/site.css".'),
          content: str('The file content: text as is (encoding utf8) or base64 for binary files. Omit it when sending sha256 and size.'),
          encoding: { type: 'string', enum: ['utf8', 'base64'], description: 'utf8 (default) or base64.' },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Instead of content: the sha256 of content this site already has (from list_files).' },
          size: { type: 'integer', minimum: 0, description: 'With sha256: the size in bytes of that content.' },
        },
        ['path'],
        { additionalProperties: false },
      ),
    },
    site: { ...siteName, description: 'Omit to create a new site; name an existing site to update it (with base_revision).' },
    base_revision: str('For updates: the live revision id (live_revision.id from get_site) the change is based on.'),
    patch: { type: 'boolean', description: 'true: files holds only changed files; everything else of base_revision is kept.' },
    deleted: { type: 'array', items: str(), description: 'With patch: paths to remove.' },
  },
  ['files'],
  { additionalProperties: false },
);
