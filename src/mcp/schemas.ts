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

/** A tool's input: these properties and no other. */
export const input = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The input of a tool that takes only the site. */
export const siteOnly = input({ site: siteName }, ['site']);

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
  eventList: SHAPES.EventList,
  analytics: SHAPES.SiteAnalytics,
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

/**
 * The input of a tool whose REST twin takes a body on one site: `site` (the path's name) beside
 * the fields of that very body shape (contract/bodies.ts), so both edges accept and refuse alike.
 */
export function siteAnd(body: { readonly properties: Record<string, Schema>; readonly required: readonly string[] }): Schema {
  return { type: 'object', properties: { site: siteName, ...body.properties }, required: ['site', ...body.required], additionalProperties: false };
}

/** The inputs of the tools whose REST twin takes a body. */
export const bodyInputs = {
  setAccess: siteAnd(BODIES.SiteAccessChange),
  rollback: siteAnd(BODIES.Rollback),
  promote: siteAnd(BODIES.Promote),
  rename: siteAnd(BODIES.Rename),
  invite: siteAnd(BODIES.Invite),
  addDomain: siteAnd(BODIES.AddDomain),
};
