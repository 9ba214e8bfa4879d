/**
 * The store's public record shapes and operations. Times are epoch milliseconds; the API edge turns
 * them into ISO strings. The store throws no ServiceError: absent records are `undefined`, expected
 * refusals are result objects, and only I/O faults throw.
 */

import type { Plan, Role } from '../rules/index.js';

export type { Plan, Role };

/** Stored state; `expired` is never stored, it is decided at read time from `expiresAt`. */
export type SiteState = 'active' | 'deleted' | 'taken_down';

export interface SiteRecord {
  /** Immutable internal id (`site_…`); names can change, ids never do. */
  id: string;
  /** Current name. */
  name: string;
  plan: Plan;
  state: SiteState;
  claimed: boolean;
  accountId?: string;
  createdAt: number;
  /** Set for unclaimed anonymous sites. */
  expiresAt?: number;
  /** Live revision id (`rev_…`); absent until the first commit. */
  liveRevision?: string;
  liveNumber: number;
  /** Highest revision number handed out so far. */
  lastNumber: number;
  siteTokenHash?: string;
  claimTokenHash?: string;
  /** Public key derived from the site token, to seal an account token for the claim poll. */
  claimKey?: string;
  stateChangedAt?: number;
}

export type Encoding = 'br' | 'gzip';

/** One row of a revision's path index. */
export interface FileEntry {
  sha256: string;
  size: number;
  /** Content type chosen at ingest (full header value, e.g. `text/html; charset=utf-8`). */
  type: string;
  /** Precompressed variants that exist in the blob store, with their sizes. */
  encodings?: Partial<Record<Encoding, number>>;
}

export interface ListedFile extends FileEntry {
  path: string;
}

export type RevisionKind = 'deploy' | 'patch' | 'rollback';

export interface RevisionRecord {
  id: string;
  siteId: string;
  number: number;
  createdAt: number;
  /** Who made it: the account's e-mail, `site_token`, `anonymous` or `admin`. */
  createdBy: string;
  kind: RevisionKind;
  rollbackOf?: string;
  files: number;
  bytes: number;
}

/** Fields for a site created in the same transaction as its first revision. */
export interface NewSite {
  name: string;
  plan: Plan;
  claimed: boolean;
  /** The owning account; it becomes the site's first owner in the same transaction. */
  accountId?: string;
  /** Sites `accountId` may own: counted inside the transaction (`over_limit` when reached). */
  maxOwnedSites?: number;
  expiresAt?: number;
  siteTokenHash?: string;
  claimTokenHash?: string;
  claimKey?: string;
}

export interface CommitInput {
  /** Existing site name, or the name for `create`. */
  site: string;
  /** Create the site in the same transaction. The name must never have been used. */
  create?: NewSite;
  /**
   * Revision the change is based on. For an update it must equal the live revision at commit
   * time, else the commit fails with `conflict` and changes nothing. `null` means "no check"
   * (used for create and for administrative commits).
   */
  baseRevision: string | null;
  /** The complete file set of the new revision (path → entry). Paths are already validated. */
  files: ReadonlyMap<string, FileEntry>;
  kind: RevisionKind;
  createdBy: string;
  rollbackOf?: string;
}

export type CommitResult =
  | { ok: true; site: SiteRecord; revision: RevisionRecord }
  | { ok: false; reason: 'conflict'; liveRevision?: string }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'name_taken' }
  | { ok: false; reason: 'over_limit' };

export interface RevisionPage {
  revisions: RevisionRecord[];
  /** Pass as `before` to get the next page; absent at the end. */
  nextBefore?: number;
}

export interface PutFileOptions {
  compress: boolean;
  /** Compression effort for the variants; defaults to `'small'`. */
  quality?: 'fast' | 'small';
  /**
   * `false` skips the per-file fsyncs: the caller writes a batch and then calls `flush()` once
   * before anything refers to the blobs. Readers still never see a partial blob (temp + rename).
   */
  durable?: boolean;
}

/** Content-addressed blob files: `blobs/<aa>/<bb>/<sha256>` plus `.br` / `.gz` variants. */
export interface BlobStore {
  /** Absolute path of a blob (or of one of its precompressed variants). */
  pathOf(sha256: string, encoding?: Encoding): string;
  has(sha256: string): boolean;
  /**
   * Streams bytes into a temp file (fsynced), hashing on the way, then renames into place unless
   * a blob with that hash already exists (that one's mtime is renewed instead, so garbage
   * collection's grace period covers reused blobs too). Never exposes a partial blob.
   */
  write(source: AsyncIterable<Uint8Array> | Uint8Array): Promise<{ sha256: string; size: number }>;
  /**
   * Writes a blob and, when `compress` is set and compression saves space, its brotli and gzip
   * variants (made once, here). Returns the path-index entry for it. `quality: 'fast'` (brotli 5,
   * gzip 4) is for deploys, where time matters; the default `'small'` spends more CPU for size.
   */
  putFile(bytes: Uint8Array, type: string, options: PutFileOptions): Promise<FileEntry>;
  /**
   * Makes the precompressed variants of an existing blob (those that save space) and returns the
   * sizes of the variants that exist. Idempotent.
   */
  compressBlob(sha256: string, options?: { quality?: 'fast' | 'small'; durable?: boolean }): Promise<Partial<Record<Encoding, number>>>;
  /**
   * Writes a blob synchronously and without fsync (temp file + rename, so never partially
   * visible), for ingest worker threads that own their thread and flush a whole deploy at once
   * with `flush()`. Returns false when the blob already existed (its mtime is renewed, as in `write`).
   */
  writeSync(bytes: Uint8Array, sha256: string): boolean;
  /** Makes every blob written with `durable: false` (or `writeSync`) durable, with one filesystem sync. */
  flush(): Promise<void>;
  /** Reads a whole blob (or variant) into memory; for small files only. */
  readSync(sha256: string, encoding?: Encoding): Buffer;
  /**
   * Removes temp files left by writers that died: at once when the writing process is gone (with
   * `atStartup`, also those named after this process's pid, which an earlier process may have had),
   * otherwise once older than `olderThanMs`. Returns how many went.
   */
  sweepTemp(olderThanMs: number, options?: { atStartup?: boolean }): Promise<number>;
  /** Every blob file and variant (not temp files), in no particular order; for garbage collection. */
  listBlobFiles(): AsyncIterable<BlobFile>;
  /**
   * Keeps garbage collection, in every process on this data directory, from deleting any blob
   * until the returned function is called (or this process ends): a backup copies the blobs of
   * a snapshot that may stop referencing them while it runs.
   */
  pin(): () => void;
  /** True while some running process holds a pin. */
  isPinned(): boolean;
}

export interface BlobFile {
  sha256: string;
  /** Set for a precompressed variant. */
  encoding?: Encoding;
  path: string;
  mtimeMs: number;
}

export interface Store {
  readonly blobs: BlobStore;
  /** Site by current or former name. A former name returns the record whose `name` is the new one. */
  getSite(name: string): SiteRecord | undefined;
  getSiteById(id: string): SiteRecord | undefined;
  getRevision(revisionId: string): RevisionRecord | undefined;
  /** One path-index row; synchronous so the serving hot path never awaits. */
  getFile(revisionId: string, path: string): FileEntry | undefined;
  /** A revision's files in path order. */
  listFiles(revisionId: string): ListedFile[];
  /** Newest first; `before` is an exclusive upper bound on `number`. */
  listRevisions(siteId: string, options?: { before?: number; limit?: number }): RevisionPage;
  /** Atomically check the base, write the revision and its path index, move the live pointer. */
  commitRevision(input: CommitInput): Promise<CommitResult>;
  /**
   * Records precompressed variants made after a revision was committed, on the rows of that
   * revision whose blob they belong to, and tells serving threads. Content never changes.
   */
  recordEncodings(revisionId: string, encodings: ReadonlyMap<string, Partial<Record<Encoding, number>>>): Promise<number>;
  /** Records a lifecycle change (taken down, restored to active); a deleted site stays deleted. */
  setSiteState(name: string, state: SiteState): Promise<{ ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' | 'deleted' }>;
  /** The record for a token hash (see `hashToken`), if any. */
  findToken(tokenHash: string): TokenRecord | undefined;
  /** A new account; `undefined` when the e-mail address is already registered. */
  createAccount(input: { email: string; plan: AccountRecord['plan'] }): Promise<AccountRecord | undefined>;
  getAccount(id: string): AccountRecord | undefined;
  getAccountByEmail(email: string): AccountRecord | undefined;
  setAccountPlan(id: string, plan: AccountRecord['plan']): Promise<AccountRecord | undefined>;
  /** Records an API token by its hash; the token itself is never stored. */
  addApiToken(input: { accountId: string; tokenHash: string; name: string }): Promise<ApiTokenInfo>;
  /** The account's API tokens, oldest first (never the tokens themselves). */
  listApiTokens(accountId: string): ApiTokenInfo[];
  /** Revokes one of the account's API tokens at once; false when it has no token with that id. */
  revokeApiToken(accountId: string, tokenId: string): Promise<boolean>;
  /** Records that a token was used (callers throttle this; it is a write). */
  touchApiToken(tokenHash: string, at: number): Promise<void>;
  /** The caller's role on a site, if a member. */
  getRole(siteId: string, accountId: string): Role | undefined;
  /** Adds or changes a member's role. */
  setMember(siteId: string, accountId: string, role: Role): Promise<void>;
  /** True if the name was ever used by any site (names are never reused). */
  isNameUsed(name: string): boolean;
  /**
   * Counts each check's hits (one unless it says `hits`) in one transaction, all or nothing: if
   * any check's window has no room for its hits, nothing is counted. Shared by all threads and
   * processes on the data directory.
   */
  takeRateTokens(checks: readonly RateCheck[]): Promise<RateResult>;
  /** Drops counter windows that started before `before` (pass a time past every window's end); returns how many. */
  pruneCounters(before: number): Promise<number>;
  /**
   * Calls `listener` whenever a site record changes through any store handle of this process
   * (commits, state changes): at once in this thread, within a turn in other threads. Returns an
   * unsubscribe function.
   */
  onSiteChanged(listener: (change: { siteId: string; name: string }) => void): () => void;
  /**
   * A value that changes whenever another process (the admin CLI) changes a site record, which
   * `onSiteChanged` does not report. Cheap enough to poll about once a second.
   */
  siteChangesElsewhere(): string;
  /**
   * Sites the account is a member of (deleted ones left out), ordered by site id; `after` is the
   * last id of the previous page (exclusive). `limit` defaults to 50 and is clamped to 1-200.
   */
  listSitesOf(accountId: string, options?: { after?: string; limit?: number }): { sites: Array<{ site: SiteRecord; role: Role }>; nextAfter?: string };
  /** Sites the account owns, deleted ones left out (for the plan's site limit). */
  countOwnedSites(accountId: string): number;
  /** Members of a site with their account e-mail, in account id order. */
  listMembers(siteId: string): Array<Membership & { email: string }>;
  /** Removes a member (both indexes) unless they are the site's last owner. */
  removeMember(siteId: string, accountId: string): Promise<'removed' | 'last_owner' | 'not_member'>;
  /**
   * Moves an unclaimed, unexpired anonymous site into the account: owner, plan Free, no expiry;
   * the claim token is used up and the site token keeps only the right to read the claim.
   * A used-up (or unknown, or non-claim) token and a deleted site give `not_found`;
   * `expired` from `expiresAt <= now` on.
   */
  claimSite(claimTokenHash: string, accountId: string, options?: ClaimOptions): Promise<ClaimResult>;
  /**
   * The sealed account token a claim left for the site token's holder, removed as it is read
   * (the claim poll hands it out once).
   */
  takeSealedAccountToken(siteTokenHash: string): Promise<string | undefined>;
  /**
   * Gives a site a new name; the old one keeps resolving to it (serving redirects) and is never
   * reused. `name` must be the current name of a site that is not deleted (else `not_found`);
   * `newName` must never have been used by any site (else `name_taken`). The caller validates its form.
   */
  renameSite(name: string, newName: string): Promise<{ ok: true; site: SiteRecord } | { ok: false; reason: 'not_found' | 'name_taken' }>;
  /**
   * Records a pending, e-mailed invitation (e-mail trimmed and lower-cased); inviting the same
   * address to the same site again replaces the pending invite.
   */
  createInvite(input: Omit<InviteRecord, 'createdAt'>): Promise<InviteRecord>;
  /** A site's pending invites; those past `expiresAt` are left out. */
  listInvites(siteId: string): InviteRecord[];
  /** The pending, unexpired invite an accept link's token names. */
  getInviteByToken(tokenHash: string): InviteRecord | undefined;
  /**
   * Makes the account a member with the invited role and uses the invite up, in one transaction.
   * The account's e-mail must be the invited one (`wrong_account`); an expired or used invite,
   * or a deleted site, gives `not_found`. An existing member keeps the higher of the two roles.
   */
  acceptInvite(tokenHash: string, accountId: string): Promise<{ ok: true; invite: InviteRecord; role: Role } | { ok: false; reason: 'not_found' | 'wrong_account' }>;
  /** Drops the invite for that address (declined, revoked, or its person removed); false if none. */
  deleteInvite(siteId: string, email: string): Promise<boolean>;
  /** Stores a short-lived confirmation (member removal, deletion approval) by token hash. */
  putConfirmation(tokenHash: string, record: Confirmation): Promise<void>;
  /** The record as stored, also past its `expiresAt`: callers judge expiry (approvals report `expired`). */
  getConfirmation(tokenHash: string): Confirmation | undefined;
  /**
   * Deletes the site if `typedAddress` names it, the approval is pending and not expired. Accepted:
   * the current name, or `name.<domain…>` with an optional `http(s)://` and trailing `/`,
   * case-insensitive (the domain is not checked). Checks in order: unknown token or not a
   * deletion → `not_found`; already approved → `already_decided`; `expiresAt <= now` →
   * `expired`; address → `wrong_address`. Returns the approval as it ends up.
   */
  approveDeletion(approvalTokenHash: string, typedAddress: string): Promise<ApprovalOutcome>;
  /**
   * Drops revisions of a site created before `before`, never the live one, with all their path
   * rows (in bounded transactions); their blobs are left to `collectGarbage`. Returns how many.
   */
  pruneRevisions(siteId: string, before: number): Promise<number>;
  /** A new browser session (by the hash of its cookie value). */
  createSession(sessionHash: string, record: SessionRecord): Promise<void>;
  /** The session, if it exists and has not expired. */
  getSession(sessionHash: string): SessionRecord | undefined;
  /** Moves a session's expiry (sliding sessions); no-op for an unknown one. */
  extendSession(sessionHash: string, expiresAt: number): Promise<void>;
  deleteSession(sessionHash: string): Promise<void>;
  /** A pending sign-in (e-mailed link and code), by its id; its secrets are kept as hashes. */
  createSignIn(id: string, record: SignInRecord): Promise<void>;
  getSignIn(id: string): SignInRecord | undefined;
  /**
   * Uses a sign-in up, atomically, with one of its two proofs: the e-mailed link's secret, or
   * the asking browser's secret together with the code (a wrong code counts an attempt, and
   * `maxAttempts` wrong ones lock the sign-in). A proof whose secret does not match is
   * `not_found`, exactly like an unknown id.
   */
  useSignIn(id: string, check: { proof: SignInProof; maxAttempts: number }): Promise<SignInOutcome>;
  /** Stores an abuse report; returns it with its id. */
  createReport(input: Omit<ReportRecord, 'id' | 'createdAt' | 'status'>): Promise<ReportRecord>;
  /** Reports, oldest first; `status` filters. */
  listReports(options?: { status?: ReportRecord['status'] }): ReportRecord[];
  /** Marks a report resolved; undefined when unknown. */
  resolveReport(id: string, note?: string): Promise<ReportRecord | undefined>;
  /**
   * A named server secret, made once with `make` and then the same for every thread and process
   * on the data directory (keys for form tokens and the like).
   */
  ensureSecret(name: string, make: () => string): Promise<string>;
  /** Stores a digest-deploy manifest until its upload (or its expiry). */
  putManifest(id: string, record: ManifestRecord): Promise<void>;
  /** The manifest, unless it expired. */
  getManifest(id: string): ManifestRecord | undefined;
  /** Removes the manifest; true only for the one call that removed it (a manifest is used once). */
  deleteManifest(id: string): Promise<boolean>;
  /** Drops expired manifests, sessions and sign-ins (for the sweeper); returns how many. */
  pruneExpired(): Promise<number>;
  /** Records (or refreshes) an OAuth client. */
  putOAuthClient(client: OAuthClientRecord): Promise<void>;
  getOAuthClient(clientId: string): OAuthClientRecord | undefined;
  /** A new authorization code, by the hash of the code. */
  createAuthorizationCode(codeHash: string, record: AuthorizationCodeRecord): Promise<void>;
  /**
   * Exchanges a code for a new grant and its first tokens, atomically and once. `check` sees the
   * code's record (client, redirect URI, PKCE, resource); false burns the code (`mismatch`). A code
   * already used revokes the grant it was exchanged for (`reused`).
   */
  redeemAuthorizationCode(
    codeHash: string,
    check: (code: AuthorizationCodeRecord) => boolean,
    grant: Omit<OAuthGrantRecord, 'accountId' | 'clientId' | 'resource' | 'scope' | 'refreshHash' | 'createdAt'>,
    tokens: IssuedTokens,
  ): Promise<CodeRedemption>;
  /**
   * Rotates a refresh token: the grant's current refresh token is swapped for new tokens. An older
   * refresh token of the grant revokes the whole grant (`reused`); `check` (client, resource) false
   * refuses without rotating.
   */
  rotateRefreshToken(refreshHash: string, check: (grant: OAuthGrantRecord) => boolean, tokens: IssuedTokens): Promise<RefreshOutcome>;
  getOAuthGrant(grantId: string): OAuthGrantRecord | undefined;
  /** The account's standing grants, oldest first. */
  listOAuthGrants(accountId: string): OAuthGrantRecord[];
  /** Revokes a grant (every token it issued stops at once); with `accountId`, only that account's. */
  revokeOAuthGrant(grantId: string, reason: NonNullable<OAuthGrantRecord['revokedReason']>, accountId?: string): Promise<boolean>;
  /** Forgets one access token (RFC 7009 revocation of an access token). */
  removeOAuthToken(tokenHash: string): Promise<void>;
  /** Drops expired codes and OAuth tokens, and grants revoked before `before`; returns how many. */
  pruneOAuth(before: number): Promise<number>;
  /** Every site id (for the sweeper). */
  listSiteIds(): string[];
  /**
   * Mark and sweep: deletes blob files (and variants) that no revision references and that are
   * older than `graceMs` (so blobs of deploys still in flight survive). Returns how many went.
   */
  collectGarbage(graceMs: number): Promise<number>;
  /**
   * Writes a consistent, compacted copy of the LMDB environment as `<dir>/data.mdb` (the folder is
   * created) while other threads and processes go on writing: the state of one committed transaction.
   */
  snapshot(dir: string): Promise<void>;
  close(): Promise<void>;
}

export interface ClaimOptions {
  /** The claiming account may own at most this many sites (`over_limit` otherwise). */
  maxOwnedSites?: number;
  /**
   * An API token made for the agent that published the site: its record is added with the claim,
   * and `sealed` (the token encrypted so only the site token's holder can open it) waits on the
   * site token's record for the next claim poll.
   */
  accountToken?: { tokenHash: string; name: string; sealed: string };
}

export type ClaimResult =
  | { ok: true; site: SiteRecord; tokenId?: string }
  | { ok: false; reason: 'not_found' | 'already_claimed' | 'expired' | 'over_limit' };

/** The first half of a digest deploy: the whole site by hash, and what the caller must still send. */
export interface ManifestRecord {
  /** Who may finish it: `account:<id>` or `site_token:<token hash>`. */
  owner: string;
  mode: 'create' | 'update';
  /** For an update: the site (by id, so a rename in between is harmless) and its base revision. */
  siteId?: string;
  baseRevision?: string;
  /** The target site's plan, whose limits the result must meet. */
  plan: Plan;
  /** The site as it will be published: final paths, sizes and hashes. */
  files: Array<{ path: string; size: number; sha256: string }>;
  skipped: string[];
  /** Contents the caller already has on this site, reusable without upload. */
  known: Record<string, { size: number; encodings?: Partial<Record<Encoding, number>> }>;
  /** Hashes whose bytes must be uploaded. */
  missing: string[];
  createdAt: number;
  expiresAt: number;
}

export interface ApiTokenInfo {
  /** Public handle (`tok_…`) for listing and revoking; not a credential. */
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt?: number;
}

export interface SessionRecord {
  accountId: string;
  createdAt: number;
  expiresAt: number;
  /** Secret the session's CSRF tokens are derived from. */
  csrfSecret: string;
}

export interface SignInRecord {
  email: string;
  /** sha256 of the secret in the e-mailed link. */
  linkHash: string;
  /** sha256 of the secret in the cookie of the browser that asked (useless without the code). */
  browserHash: string;
  /** sha256 of the 6-digit code. */
  codeHash: string;
  createdAt: number;
  expiresAt: number;
  attempts: number;
  /** App path to return to after signing in. */
  next?: string;
  usedAt?: number;
}

/** What finishes a sign-in: the link's secret alone, or the browser's secret and the code. */
export type SignInProof = { kind: 'link'; secretHash: string } | { kind: 'browser'; secretHash: string; codeHash: string };

export type SignInOutcome =
  | { ok: true; signIn: SignInRecord }
  | { ok: false; reason: 'not_found' | 'expired' | 'used' | 'locked' | 'wrong_code'; attemptsLeft?: number };

export interface ReportRecord {
  /** `rep_…` */
  id: string;
  site: string;
  reason: 'phishing' | 'malware' | 'spam' | 'copyright' | 'other';
  details: string;
  contact?: string;
  /** Network of the reporter (for abuse of the form itself), never the full address. */
  network: string;
  createdAt: number;
  status: 'open' | 'resolved';
  resolvedAt?: number;
  note?: string;
}

export interface InviteRecord {
  siteId: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  tokenHash: string;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

/** A pending two-step action. */
export type Confirmation =
  | { kind: 'remove_member'; siteId: string; accountId: string; requestedBy: string; expiresAt: number }
  | { kind: 'delete_site'; siteId: string; requestedBy: string; expiresAt: number; status: 'pending' | 'approved'; decidedAt?: number };

export type ApprovalOutcome =
  | { ok: true; approval: Extract<Confirmation, { kind: 'delete_site' }> }
  | { ok: false; reason: 'not_found' | 'expired' | 'wrong_address' | 'already_decided' };

/** What a token (looked up by its sha256) grants. */
export type TokenRecord =
  | { kind: 'site'; siteId: string; sealedAccountToken?: string }
  | { kind: 'claim'; siteId: string }
  | { kind: 'api'; accountId: string; name: string; createdAt: number; id?: string }
  /** An OAuth access (`pla_`) or refresh token: valid while unexpired and its grant stands. */
  | { kind: 'oauth_access' | 'oauth_refresh'; grantId: string; expiresAt: number };

/** An MCP app that may ask people for access: registered (RFC 7591) or named by its metadata URL. */
export interface OAuthClientRecord {
  /** `client_id`: `mcp_…` for registered clients, the https URL of a client metadata document otherwise. */
  id: string;
  kind: 'registered' | 'metadata_document';
  /** Self-asserted by the client; pages say so. */
  name: string;
  redirectUris: string[];
  clientUri?: string;
  createdAt: number;
  /** Metadata documents: when the document was last fetched. */
  fetchedAt?: number;
}

/** A pending authorization code (stored by its hash), bound to everything the token request must repeat. */
export interface AuthorizationCodeRecord {
  clientId: string;
  accountId: string;
  redirectUri: string;
  /** PKCE S256 challenge. */
  codeChallenge: string;
  /** RFC 8707 resource the tokens will be for. */
  resource: string;
  scope: string;
  expiresAt: number;
  usedAt?: number;
  /** The grant the code was exchanged for (revoked if the code is used again). */
  grantId?: string;
}

/** One person's approval of one MCP app: the tokens it holds hang off it, and stop when it goes. */
export interface OAuthGrantRecord {
  /** `grant_…` */
  id: string;
  accountId: string;
  clientId: string;
  clientName: string;
  /** Host of the redirect URI the approval went to, for people to recognise the app. */
  redirectHost: string;
  resource: string;
  scope: string;
  createdAt: number;
  /** Hash of the one refresh token that may be used next; any older one is a replay. */
  refreshHash: string;
  lastRefreshedAt?: number;
  revokedAt?: number;
  revokedReason?: 'disconnected' | 'refresh_reused' | 'code_reused' | 'revoked';
}

/** New tokens for a grant, by hash, with their expiry times. */
export interface IssuedTokens {
  accessHash: string;
  accessExpiresAt: number;
  refreshHash: string;
  refreshExpiresAt: number;
}

export type CodeRedemption =
  | { ok: true; grant: OAuthGrantRecord }
  | { ok: false; reason: 'not_found' | 'expired' | 'mismatch' | 'reused' };

export type RefreshOutcome =
  | { ok: true; grant: OAuthGrantRecord }
  | { ok: false; reason: 'not_found' | 'expired' | 'revoked' | 'mismatch' | 'reused' };


export interface AccountRecord {
  /** Immutable internal id (`acct_…`). */
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** A paid or Free plan; never `anonymous`. */
  plan: Exclude<Plan, 'anonymous'>;
  createdAt: number;
}

export interface Membership {
  siteId: string;
  accountId: string;
  role: Role;
  addedAt: number;
}

export interface RateCheck {
  /** What is counted, e.g. `anon-sites:203.0.113.0/24`. */
  scope: string;
  limit: number;
  windowMs: number;
  /** How many hits this take counts (default 1): a JSON-RPC batch counts each of its calls. */
  hits?: number;
}

export type RateResult = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface StoreOptions {
  /** Data directory; LMDB lives in `<dir>/meta`, blobs in `<dir>/blobs`. */
  dir: string;
  /** Clock, injectable so tests can move time. */
  now?: () => number;
}
