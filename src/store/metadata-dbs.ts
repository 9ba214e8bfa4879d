import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { guardCommitFailures } from './commit-failure.js';
import type {
  AccessTicketRecord,
  AccountRecord,
  Confirmation,
  DomainRecord,
  EventRecord,
  FileEntry,
  InviteRecord,
  ManifestPart,
  ManifestRecord,
  Membership,
  OAuthClientRecord,
  OAuthCodeEntry,
  OAuthGrantRecord,
  PackRows,
  ReplayRecord,
  ReportRecord,
  RevisionExtras,
  RevisionRecord,
  Role,
  SessionRecord,
  SignInRecord,
  SiteRecord,
  TokenRecord,
  WebhookDelivery,
  WebhookRecord,
} from './types.js';

export type RevisionKey = [siteId: string, number: number];
export type PathKey = [revisionId: string, path: string];

/** LMDB refuses longer keys; ingest caps paths well below this. */
export const MAX_KEY_BYTES = 1978;

/** See `MetadataDbs.transact`. */
export interface TransactOptions {
  packRows?: () => PackRows | undefined;
  ready?: Promise<unknown>;
}

export interface MetadataDbs {
  env: RootDatabase;
  /**
   * Runs `fn` as one write transaction: its reads see its own writes, and its writes are
   * committed together or not at all. Embedded, an LMDB transaction; in a cluster, the same code
   * runs against the local replica and its writes are committed through PostgreSQL first (see
   * replica.ts). `fn` must only read and write these databases: it may run more than once.
   * `packRows` (a cluster only): written to PostgreSQL with the change, if `fn` writes anything.
   * `ready`: nothing is committed before it resolves (a rejection refuses the transaction);
   * `packRows` is read then. A cluster runs `fn` against its replica meanwhile (see metadata.ts).
   */
  transact<T>(fn: () => T, options?: TransactOptions): Promise<T>;
  /** site id → record. */
  sites: Database<SiteRecord, string>;
  /** Every name ever used → site id, so names are never reused and former names still resolve. */
  names: Database<string, string>;
  revisions: Database<RevisionRecord, RevisionKey>;
  /** revision id → key in `revisions`. */
  revisionIds: Database<RevisionKey, string>;
  paths: Database<FileEntry, PathKey>;
  /** revision id → its compiled `_redirects` and `_headers` and link-check warnings; absent when it has none. */
  revisionExtras: Database<RevisionExtras, string>;
  /** sha256 of a token → what it grants. Tokens themselves are never stored. */
  tokens: Database<TokenRecord, string>;
  accounts: Database<AccountRecord, string>;
  /** Lower-cased e-mail → account id. */
  accountEmails: Database<string, string>;
  /** `[siteId, accountId]` → membership; one range scan lists a site's members. */
  members: Database<Membership, MemberKey>;
  /** `[accountId, siteId]` → role; one range scan lists an account's sites. */
  memberSites: Database<Role, MemberSiteKey>;
  /** `[scope, window start]` → hits in that fixed window, for rate caps shared by all threads. */
  counters: Database<number, CounterKey>;
  /**
   * pid → a value that changes whenever that process changed a site record: how servers learn of
   * changes made by other processes (the admin CLI), which the in-process feed cannot reach.
   */
  siteMarks: Database<string, number>;
  /** `[siteId, email]` → the pending invite; one per address, a new invite replaces it. */
  invites: Database<InviteRecord, InviteKey>;
  /** sha256 of a confirm or approval token → the pending (or decided) two-step action. */
  confirmations: Database<Confirmation, string>;
  /** sha256 of an invite's accept token → its key in `invites`. */
  inviteTokens: Database<InviteKey, string>;
  /** `[accountId, tokenId]` → an API token's listing row; one range scan lists an account's tokens. */
  accountTokens: Database<AccountTokenRow, AccountTokenKey>;
  /** sha256 of a session cookie → the session. */
  sessions: Database<SessionRecord, string>;
  /** sha256 of a sign-in id → the pending sign-in. */
  signIns: Database<SignInRecord, string>;
  /** report id → report. */
  reports: Database<ReportRecord, string>;
  /** name → server secret (made once). */
  secrets: Database<string, string>;
  /** manifest id → a digest deploy waiting for its upload. */
  manifests: Database<ManifestRecord, string>;
  /** `[manifestId, sha256]` → a content of that manifest that has arrived; one range scan lists them. */
  manifestParts: Database<ManifestPart, ManifestPartKey>;
  /** sha256 naming a request that may be retried → its first answer (replays.ts). */
  replays: Database<ReplayRecord, string>;
  /** client_id → OAuth client. */
  oauthClients: Database<OAuthClientRecord, string>;
  /**
   * sha256 of an authorization code → the code's bindings; sha256 of a device code → the device
   * sign-in; a user code's key → the device code's hash (device-grants.ts).
   */
  oauthCodes: Database<OAuthCodeEntry, string>;
  /** grant id → a person's approval of an MCP app. */
  oauthGrants: Database<OAuthGrantRecord, string>;
  /** `[accountId, grantId]` → 1; one range scan lists an account's connected apps. */
  accountGrants: Database<number, AccountGrantKey>;
  /**
   * domain → its one claim: the layout before several sites could claim a domain at once. Records
   * still stored so are moved to `domainClaims` when the store opens (domains.ts).
   */
  domains: Database<DomainRecord, string>;
  /** `[domain, siteId]` → that site's claim on the domain; one range scan lists a domain's claims. */
  domainClaims: Database<DomainRecord, DomainClaimKey>;
  /** `[siteId, domain]` → 1; one range scan lists a site's domains. */
  siteDomains: Database<number, SiteDomainKey>;
  /** sha256 of a members-only access ticket → the ticket (used once). */
  accessTickets: Database<AccessTicketRecord, string>;
  /** `[scope, at, n]` → an audit log entry (n orders those of one millisecond); a scope is a site or an account (events.ts). */
  events: Database<EventRecord, EventKey>;
  /** `[siteId, webhookId]` → a webhook of that site (webhooks.ts). */
  webhooks: Database<WebhookRecord, WebhookKey>;
  /** delivery id → a webhook delivery waiting, delivered or given up (this machine's queue: delivery-queue.ts). */
  deliveries: Database<WebhookDelivery, string>;
  /** In a cluster: the last change applied from PostgreSQL, and which cluster this replica follows. */
  replicaState: Database<number | string, string>;
}

export interface AccountTokenRow {
  tokenHash: string;
  name: string;
  createdAt: number;
  lastUsedAt?: number;
}

export type ManifestPartKey = [manifestId: string, sha256: string];
export type EventKey = [scope: string, at: number, n: number];
export type WebhookKey = [siteId: string, webhookId: string];
export type CounterKey = [scope: string, windowStart: number];
export type MemberKey = [siteId: string, accountId: string];
export type MemberSiteKey = [accountId: string, siteId: string];
export type InviteKey = [siteId: string, email: string];
export type AccountTokenKey = [accountId: string, tokenId: string];
export type AccountGrantKey = [accountId: string, grantId: string];
export type SiteDomainKey = [siteId: string, domain: string];
export type DomainClaimKey = [domain: string, siteId: string];

export function openMetadataDbs(path: string): MetadataDbs {
  // LMDB holds the service's secrets in clear (the key that signs access cookies, webhook secrets)
  // and writes its files under the umask: a folder made here is its owner's alone. One that
  // exists keeps the mode its operator gave it.
  mkdirSync(path, { recursive: true, mode: 0o700 });
  // Other areas add their own named DBs (accounts, tokens, members…); leave room for them.
  const env = open(path, { noSubdir: false, maxDbs: 48 });
  guardCommitFailures(env, path);
  return {
    env,
    transact: async (fn, options) => {
      if (options?.ready !== undefined) await options.ready;
      // Packs live in a cluster's bucket: an embedded index has nowhere to record them.
      if (options?.packRows?.() !== undefined) throw new TypeError('this store has no bucket packs');
      return env.transaction(fn);
    },
    sites: env.openDB<SiteRecord, string>('sites', {}),
    names: env.openDB<string, string>('names', {}),
    revisions: env.openDB<RevisionRecord, RevisionKey>('revisions', {}),
    revisionIds: env.openDB<RevisionKey, string>('revisionIds', {}),
    paths: env.openDB<FileEntry, PathKey>('paths', {}),
    revisionExtras: env.openDB<RevisionExtras, string>('revisionExtras', {}),
    counters: env.openDB<number, CounterKey>('counters', {}),
    siteMarks: env.openDB<string, number>('siteMarks', {}),
    tokens: env.openDB<TokenRecord, string>('tokens', {}),
    accounts: env.openDB<AccountRecord, string>('accounts', {}),
    accountEmails: env.openDB<string, string>('accountEmails', {}),
    members: env.openDB<Membership, MemberKey>('members', {}),
    memberSites: env.openDB<Role, MemberSiteKey>('memberSites', {}),
    invites: env.openDB<InviteRecord, InviteKey>('invites', {}),
    confirmations: env.openDB<Confirmation, string>('confirmations', {}),
    inviteTokens: env.openDB<InviteKey, string>('inviteTokens', {}),
    accountTokens: env.openDB<AccountTokenRow, AccountTokenKey>('accountTokens', {}),
    sessions: env.openDB<SessionRecord, string>('sessions', {}),
    signIns: env.openDB<SignInRecord, string>('signIns', {}),
    reports: env.openDB<ReportRecord, string>('reports', {}),
    secrets: env.openDB<string, string>('secrets', {}),
    manifests: env.openDB<ManifestRecord, string>('manifests', {}),
    manifestParts: env.openDB<ManifestPart, ManifestPartKey>('manifestParts', {}),
    replays: env.openDB<ReplayRecord, string>('replays', {}),
    oauthClients: env.openDB<OAuthClientRecord, string>('oauthClients', {}),
    oauthCodes: env.openDB<OAuthCodeEntry, string>('oauthCodes', {}),
    oauthGrants: env.openDB<OAuthGrantRecord, string>('oauthGrants', {}),
    accountGrants: env.openDB<number, AccountGrantKey>('accountGrants', {}),
    domains: env.openDB<DomainRecord, string>('domains', {}),
    domainClaims: env.openDB<DomainRecord, DomainClaimKey>('domainClaims', {}),
    siteDomains: env.openDB<number, SiteDomainKey>('siteDomains', {}),
    accessTickets: env.openDB<AccessTicketRecord, string>('accessTickets', {}),
    events: env.openDB<EventRecord, EventKey>('events', {}),
    webhooks: env.openDB<WebhookRecord, WebhookKey>('webhooks', {}),
    deliveries: env.openDB<WebhookDelivery, string>('deliveries', {}),
    replicaState: env.openDB<number | string, string>('replicaState', {}),
  };
}

/**
 * Exclusive upper bound for every `[revisionId, path]` key. ordered-binary writes an array as its
 * elements joined by 0x00 and a path as UTF-8, which never contains 0xFF. The obvious
 * `[revisionId, '\uffff']` would cut off paths starting at U+FFFF or above (emoji: UTF-8 lead
 * byte 0xF0 > 0xEF). Only valid for ids ordered-binary copies byte for byte; see `isPlainId`.
 */
export function pathRangeEnd(revisionId: string): Uint8Array {
  return Uint8Array.from([...Buffer.from(revisionId, 'latin1'), 0x00, 0xff]);
}

/** ordered-binary writes strings of 1-63 chars in 0x1c-0x7f as their raw bytes. */
export function isPlainId(id: string): boolean {
  return /^[\x1c-\x7f]{1,63}$/.test(id);
}

/** Encoded size of a `[revisionId, path]` key: escapes add a byte before a leading control character and per char <= 4. */
export function pathKeyBytes(revisionId: string, path: string): number {
  let escapes = path.length === 0 || path.charCodeAt(0) < 28 ? 1 : 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) <= 4) escapes++;
  return Buffer.byteLength(revisionId) + 1 + Buffer.byteLength(path) + escapes;
}

/** Drops `undefined` fields so stored records round-trip without phantom keys. */
export function compact<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Range over every key whose first element is `first` (`[siteId, …]`, `[accountId, …]`), with the
 * same byte-level end as `pathRangeEnd`. Undefined for a non-plain id, which none of our keys has.
 */
export function prefixRange(first: string): { start: [string]; end: Uint8Array } | undefined {
  return isPlainId(first) ? { start: [first], end: pathRangeEnd(first) } : undefined;
}
