import { BODIES, schema, SHAPES, type Schema } from '../contract/index.js';

const { int, object, str } = schema;

/**
 * JSON Schemas of the tools' inputs and outputs. Outputs are the REST API's own shapes (SPEC 2,
 * 4), defined once in contract/shapes.ts, since both come from the same operations.
 */

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

/** An answer that is one of several shapes; MCP wants an object schema at the top. */
const eitherOf = (...shapes: Schema[]): Schema => ({ type: 'object', anyOf: shapes });

/** The REST API's shapes (contract/shapes.ts), plus the one answer only MCP has: a file's content. */
export const outputs = {
  account: SHAPES.Me,
  siteList: SHAPES.SiteList,
  /** A site, or (for a claimed site's token) the claim poll `{claimed: true, account_token?}`. */
  siteOrClaim: eitherOf(SHAPES.Site, SHAPES.ClaimPoll),
  deploy: SHAPES.DeployResult,
  /** Published (the revision), or a part of a deploy arrived and contents are still missing. */
  deployOrPart: eitherOf(SHAPES.DeployResult, SHAPES.ManifestResult),
  manifest: SHAPES.ManifestResult,
  fileList: SHAPES.FileList,
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
  revisionList: SHAPES.RevisionList,
  rollback: SHAPES.RollbackResult,
  promote: SHAPES.PromoteResult,
  access: SHAPES.SiteAccess,
  revisionDeleted: SHAPES.RevisionDeleted,
  rename: SHAPES.RenameResult,
  deletion: SHAPES.DeletionRequest,
  claimLink: SHAPES.ClaimLink,
  members: SHAPES.MemberList,
  invite: SHAPES.InviteResult,
  removal: eitherOf(SHAPES.RemovalConfirmation, SHAPES.RemovalDone),
};

/** SPEC 4.2's inline-files body, as `deploy_site` takes it: the REST API's JSON deploy body. */
export const deployInput = SHAPES.JsonDeploy;

/** The first half of a deploy in parts: the whole site by path, size and sha256. */
export const manifestInput = SHAPES.Manifest;

/** What `set_access` changes: the body of `PUT /v1/sites/{name}/access`. */
export const accessChange = BODIES.SiteAccessChange;
