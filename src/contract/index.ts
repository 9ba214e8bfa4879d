/**
 * The wire contract: every JSON shape the operations answer and the bodies they take, each
 * written once as a JSON Schema whose TypeScript type is derived from it (`JsonOf`). The
 * operations return these views, the ingest worker validates a JSON deploy against `JsonDeploy`,
 * the MCP tools list them as their schemas and the OpenAPI document as its components. A leaf:
 * it imports nothing of ours but the rules and the error catalogue. The small bodies of the routes
 * on one site are in `BODIES`, and `compileBodyCheck` is the one check of a body against its shape.
 */
export * as schema from './schema-kit.js';
export type { JsonOf, Schema } from './schema-kit.js';
export { BODIES } from './bodies.js';
export type { AddDomainBody, AddWebhookBody, InviteBody, PromoteBody, RenameBody, RollbackBody } from './bodies.js';
export { compileBodyCheck, problemDetails, type BodyCheck, type BodyProblem } from './body-check.js';
export { JsonDeploy, SHAPES } from './shapes.js';
export type {
  ApprovalView,
  ClaimLinkView,
  ClaimPollView,
  DeletionView,
  DeploySiteView,
  DeployView,
  FileListView,
  InviteView,
  ManifestView,
  MemberListView,
  MeView,
  PromoteView,
  RemovalView,
  RenameView,
  RevisionDeletedView,
  RevisionListView,
  RevisionRefView,
  RevisionView,
  RollbackView,
  SiteAccessView,
  SiteListView,
  SiteView,
} from './shapes.js';
export type { DomainListView, DomainRemovedView, DomainResultView, DomainView } from './domain-shapes.js';
export type { AnalyticsDayView, SiteAnalyticsView } from './analytics-shapes.js';
