/**
 * The operations, transport-free: plain inputs (a caller, arguments, a spooled body), plain
 * results (the JSON shapes of SPEC 2), `ServiceError` for refusals. The REST API, the account
 * app, the MCP server and the CLI all call these; their edges only translate.
 */
import { accountOperations, type AccountOperations } from './account.js';
import { admission, type Admission } from './admission.js';
import { analyticsOperations, type AnalyticsOperations } from './analytics.js';
import { claimOperations, type ClaimOperations } from './claims.js';
import type { OperationsDeps } from './deps.js';
import { deployOperations, type DeployOperations } from './deploy.js';
import { deviceOperations, type DeviceOperations } from './device.js';
import { domainOperations, type DomainOperations } from './domains.js';
import { fileOperations, type FileOperations } from './files.js';
import { memberOperations, type MemberOperations } from './members.js';
import { oauthOperations, type OAuthOperations } from './oauth.js';
import { peopleOperations, type PeopleOperations } from './people.js';
import { runOnce, type Answer, type KeyedRequest, type Replayed } from './replays.js';
import { reportOperations, type ReportOperations } from './reports.js';
import { revisionOperations, type RevisionOperations } from './revisions.js';
import { accessOperations, type AccessOperations } from './site-access.js';
import { siteOperations, type SiteOperations } from './sites.js';
import { tokenOperations, type TokenOperations } from './tokens.js';
import { eventOperations, type EventOperations } from './events.js';
import { webhookOperations, type WebhookOperations } from './webhooks.js';

export interface Operations {
  admission: Admission;
  deploy: DeployOperations;
  sites: SiteOperations;
  files: FileOperations;
  revisions: RevisionOperations;
  /** Who may see a site, and the members-only hop. */
  access: AccessOperations;
  members: MemberOperations;
  claims: ClaimOperations;
  tokens: TokenOperations;
  account: AccountOperations;
  reports: ReportOperations;
  people: PeopleOperations;
  /** The OAuth 2.1 authorization server for MCP apps. */
  oauth: OAuthOperations;
  /** Device sign-in (RFC 8628): the person's side, on the app's device page. */
  device: DeviceOperations;
  /** Custom domains of sites. */
  domains: DomainOperations;
  /** What the serving threads counted of a site's visits. */
  analytics: AnalyticsOperations;
  /** Requests sent with an idempotency key: run once, answered again to their retries. */
  retries: RetryOperations;
  /** The audit log of sites and accounts. */
  events: EventOperations;
  /** Sites' webhooks and their deliveries. */
  webhooks: WebhookOperations;
}

export interface RetryOperations {
  /**
   * Runs `run` once per key and caller within a day: the same key with the same request (target
   * and body, `bodyHash`) gets the first answer back, marked `replayed`; another request, or
   * one while the first still runs, is `409 conflict`. Only answers that went through are kept.
   */
  once<T extends Answer>(request: KeyedRequest, bodyHash: () => Promise<string>, run: () => Promise<T>): Promise<T | Replayed>;
}

/** Builds every operation over one thread's store, ingest pool and outbound adapters. */
export function createOperations(deps: OperationsDeps): Operations {
  const tokens = tokenOperations(deps);
  return {
    admission: admission(deps, tokens),
    deploy: deployOperations(deps),
    sites: siteOperations(deps),
    files: fileOperations(deps),
    revisions: revisionOperations(deps),
    access: accessOperations(deps),
    members: memberOperations(deps),
    claims: claimOperations(deps),
    tokens,
    account: accountOperations(deps),
    reports: reportOperations(deps),
    people: peopleOperations(deps),
    oauth: oauthOperations(deps),
    device: deviceOperations(deps),
    domains: domainOperations(deps),
    analytics: analyticsOperations(deps),
    retries: { once: (request, bodyHash, run) => runOnce(deps, request, bodyHash, run) },
    events: eventOperations(deps),
    webhooks: webhookOperations(deps),
  };
}

export type { OperationsDeps } from './deps.js';
export { identifyBearer, personCaller, unauthorized, type AccountCredential, type Caller, type Surface } from './callers.js';
export { createFollowUps, type FollowUps } from './follow-ups.js';
export type { DeployBody, DeployOperations, DeployOutcome, DeployRequest, DeployView, PendingDeploy } from './deploy.js';
export type { ManifestInput, ManifestView } from './manifest.js';
export { MANIFEST_LIFETIME_MS } from './manifest.js';
export { hashDeployBody, readIdempotencyKey, REPLAY_LIFETIME_MS, type Answer, type KeyedRequest, type Replayed } from './replays.js';
export type { ClaimPoll, DeletionRequest, RenameResult, SiteList } from './sites.js';
export type { FileList, LiveFile } from './files.js';
export type { LinkWarnings, PromoteResult, RevisionDeleted, RevisionList, RollbackResult } from './revisions.js';
export { ACCESS_MODES, modeOf, PREVIEWS_MODES, previewsOf, type AccessMode, type AccessTicket, type HopHost, type PreviewsMode } from './site-access.js';
export type { InvitePreview, InviteResult, MemberList, RemovalResult } from './members.js';
export type { ClaimPreview, ClaimResultView } from './claims.js';
export { newApiToken, type TokenView } from './tokens.js';
export type { MeView, PlanRow, UsageView } from './account.js';
export type { Session, StartedSignIn, FinishedSignIn } from './people.js';
export { DEFAULT_PAGE, MAX_PAGE, type PageRequest } from './paging.js';
export { REPORT_REASONS, type ReportReason } from './reports.js';
export { operatorOperations, type AccountView, type OperatorOperations, type ReportView, type SiteStateView } from './operator.js';
export { SIGN_IN_LIFETIME_MS, SIGN_IN_MAX_ATTEMPTS, SESSION_LIFETIME_MS } from './people.js';
export { INVITE_LIFETIME_MS } from './members.js';
export { APPROVAL_LIFETIME_MS } from './sites.js';
export { formatBytes, formatDuration } from './limits.js';
export type { DomainOperations } from './domains.js';
export { createDomainChecker, DOMAIN_PENDING_LIFETIME_MS, DOMAIN_RECHECK_MS, type DomainCheckReport } from './domain-checks.js';
export {
  OAUTH_PATHS,
  OAUTH_SCOPE,
  ACCESS_TOKEN_LIFETIME_MS,
  AUTHORIZATION_CODE_LIFETIME_MS,
  type AuthorizationRequest,
  type ConnectionView,
  type TokenResponse,
} from './oauth.js';
export { DEVICE_CODE_LIFETIME_MS, DEVICE_GRANT_TYPE, type DeviceAuthorization, type DeviceRequestView, type DeviceTokenResponse } from './device.js';
export { bodyTooSlow, MCP_FRAMING_BYTES, requestBodyLimit, requestTooLarge, smallBodyLimit, type BodyLimit } from './body-limits.js';
export { EVENT_KINDS, type EventKind, type EventList, type EventView } from './events.js';
export { DELIVERIES_SHOWN, deliveryView, WEBHOOK_TARGET_REFUSED, type DeliveryView, type WebhookView } from './webhooks.js';
export { signWebhook } from './webhook-queue.js';
export { EXPIRY_NOTICE_MS, startWebhookDeliverer, type WebhookDeliverer } from './webhook-deliverer.js';
