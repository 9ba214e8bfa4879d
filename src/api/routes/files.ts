import { DEFAULT_ANALYTICS_DAYS, PLAN_LIMITS } from '../../rules/index.js';
import { BODIES, schema } from '../../contract/index.js';
import { formatDuration } from '../../sites/index.js';
import { siteEndpoints as e } from '../endpoints.js';
import { answer, pathParam, type ApiRoute } from '../route.js';
import { routeGroup } from './group.js';
import { nameParam, pageParams, SITE_READ } from './params.js';

const { str } = schema;

// Every route here is on one site, for its site token or a member's API token.
const onSite = { auth: ['site', 'api'], parameters: [nameParam], errors: SITE_READ } as const;
const files = routeGroup({ tag: 'Files', ...onSite });
const revisions = routeGroup({ tag: 'Revisions', ...onSite });
const analytics = routeGroup({ tag: 'Analytics', ...onSite });

/** The live revision's files, the revision history, rollback and promote (docs/sites-api.md). */
export const fileRoutes: readonly ApiRoute[] = [
  files({
    method: 'GET',
    path: '/v1/sites/{name}/files',
    operationId: 'listFiles',
    summary: 'Files of the live revision',
    responses: { 200: answer('FileList', 'Every file, in path order.') },
    handle: e.listFiles,
  }),
  files({
    method: 'GET',
    path: '/v1/sites/{name}/files/{path...}',
    operationId: 'readFile',
    summary: 'One file of the live revision, raw',
    parameters: [pathParam('path', 'Path relative to the site root; may contain `/`.')],
    responses: {
      200: {
        description: "The file's bytes with its stored content type.",
        headers: {
          'X-Revision': { description: 'The live revision the file was read from.', schema: str(undefined, { pattern: '^rev_' }) },
          ETag: { description: "Strong ETag: the file's sha256.", schema: str() },
        },
        content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
    },
    handle: e.readFile,
  }),
  analytics({
    method: 'GET',
    path: '/v1/sites/{name}/analytics',
    operationId: 'siteAnalytics',
    summary: 'What the server counted of the site’s visits, per day',
    description:
      'Page views, visitors, 404s, bytes, crawler views, top pages and referrer hosts, per UTC day and in total, counted by the server (no script, no cookie). ' +
      `Default: the last ${DEFAULT_ANALYTICS_DAYS} days. Days are kept for the plan's history reach; a range reaching further back starts there. Counts appear within a minute.`,
    parameters: [
      { name: 'from', in: 'query', required: false, description: 'First day, `YYYY-MM-DD` (UTC).', schema: str(undefined, { format: 'date' }) },
      { name: 'to', in: 'query', required: false, description: 'Last day, `YYYY-MM-DD` (UTC); default today.', schema: str(undefined, { format: 'date' }) },
    ],
    responses: { 200: answer('SiteAnalytics', 'Totals and every day of the range.') },
    errors: ['bad_request'],
    handle: e.siteAnalytics,
  }),
  revisions({
    method: 'GET',
    path: '/v1/sites/{name}/revisions',
    operationId: 'listRevisions',
    summary: "Revisions within the plan's history reach",
    description: `Newest first. History reach: ${Object.entries(PLAN_LIMITS)
      .map(([plan, limits]) => `${plan} ${formatDuration(limits.historyReachMs)}`)
      .join(', ')}; the live revision is always listed.`,
    parameters: pageParams,
    responses: { 200: answer('RevisionList', 'A page of revisions.') },
    errors: ['bad_request'],
    handle: e.listRevisions,
  }),
  revisions({
    method: 'DELETE',
    path: '/v1/sites/{name}/revisions/{id}',
    operationId: 'deleteRevision',
    summary: 'Delete a revision that is not live',
    description:
      "Owners (and the site token of an unclaimed site, its only owner). At once, on every node: the revision's preview answers `410`, its files are no longer served, listed or reusable, and rollback or promote to it is refused; blobs no other revision uses are collected by the next sweep. Its number is never used again. " +
      'The live revision cannot be deleted (`409`): roll back or promote another one first.',
    parameters: [pathParam('id', 'The revision id (`rev_…`), or its number.', str(undefined, { pattern: '^(rev_.+|[1-9][0-9]{0,8})$' }))],
    responses: { 200: answer('RevisionDeleted', 'Deleted.') },
    errors: ['conflict'],
    handle: e.deleteRevision,
  }),
  revisions({
    method: 'POST',
    path: '/v1/sites/{name}/rollback',
    operationId: 'rollback',
    summary: 'Make an earlier revision live again',
    description:
      "The chosen revision's files become a new revision with the next number. When they are what is live already (a repeated rollback), nothing changes and no revision is made: `200` with `unchanged: true`. Site token while unclaimed, editor or owner.",
    body: { schema: BODIES.Rollback },
    responses: {
      200: answer('RollbackResult', 'The content was live already: nothing changed (`unchanged: true`).'),
      201: answer('RollbackResult', 'Rolled back.'),
    },
    errors: ['conflict'],
    handle: e.rollback,
  }),
  revisions({
    method: 'POST',
    path: '/v1/sites/{name}/promote',
    operationId: 'promote',
    summary: 'Make a stored revision (a draft) live as it is',
    description:
      'The revision becomes live without a copy, guarded like a deploy: `base_revision` must be the live revision, else `409` and nothing changes. Site token while unclaimed, editor or owner.',
    body: { schema: BODIES.Promote },
    responses: { 200: answer('PromoteResult', 'Promoted.') },
    errors: ['conflict'],
    handle: e.promote,
  }),
];
