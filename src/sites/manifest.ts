import { randomBytes } from 'node:crypto';
import { contentTypeFor, isCompressibleType, PLAN_LIMITS } from '../rules/index.js';
import { refusalError, ServiceError } from '../errors.js';
import { checkDeployPaths } from '../ingest/index.js';
import { hashToken, sameHash, type FileEntry, type ManifestPart, type ManifestRecord, type SiteRecord, type Store } from '../store/index.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { decideDeploy, takeAnonymousTokens, type Decision } from './deploy-decision.js';
import { checkTier, formatBytes } from './limits.js';
import type { DeployView, ManifestView as ManifestShape } from '../contract/index.js';
import { keepManifestAnswer, manifestAnswer, type Answer } from './replays.js';
import { iso } from './views.js';

/**
 * Digest deploys, the redeploy that sends only what changed (like Netlify's and Vercel's): the
 * client first describes the whole site by path, size and sha256; we answer which contents we
 * lack; it uploads only those; the result is one ordinary revision with every check of a normal
 * deploy. Contents count as "had" only when they belong to revisions of the same site that the
 * caller may read, so the answer never reveals what other accounts have stored.
 */

/**
 * A manifest waits this long for its upload, renewed by every part that arrives: a day covers a
 * slow upload of the largest plan's site (150 GB at 2 MB/s takes under 21 hours) and, with the
 * renewal, any upload that keeps making progress.
 */
export const MANIFEST_LIFETIME_MS = 24 * 3600_000;
/** Revisions of the site whose contents a manifest may reuse (the live one first). */
const REUSABLE_REVISIONS = 20;
const SHA256 = /^[0-9a-f]{64}$/;

export interface ManifestInput {
  site?: unknown;
  base_revision?: unknown;
  files?: unknown;
}

export type ManifestView = ManifestShape;

const ownerOf = (caller: Caller): string =>
  caller.kind === 'account' ? `account:${caller.account.id}` : caller.kind === 'site_token' ? `site_token:${caller.tokenHash}` : 'anonymous';

/**
 * The header that carries an anonymous manifest's secret. A credential binds every other
 * manifest to its maker; without one, the id (in URLs and logs) would be all it takes, so the
 * maker gets a secret once, in the manifest's answer, and sends it with every later call.
 */
const MANIFEST_SECRET_HEADER = 'X-Manifest-Secret';
const SECRET_PREFIX = 'ms_';

function parseFiles(raw: unknown): Array<{ path: string; size: number; sha256: string }> {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new ServiceError('bad_request', '"files" must be a non-empty array of {path, size, sha256}.', {
      agentMessage:
        'Send {"files": [{"path": "index.html", "size": 1234, "sha256": "<64 hex digits>"}, …], "site"?: "<name>", "base_revision"?: "<revision id>"} describing every file of the site.',
    });
  }
  return raw.map((item: unknown, index) => {
    const entry = (item ?? {}) as Record<string, unknown>;
    const { path, size, sha256 } = entry;
    if (typeof path !== 'string' || typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || typeof sha256 !== 'string' || !SHA256.test(sha256)) {
      throw new ServiceError('bad_request', `files[${index}] must be {path: string, size: whole number of bytes, sha256: 64 lower-case hex digits}.`, {
        details: { index },
      });
    }
    return { path, size, sha256 };
  });
}

/** Describes the site to publish; answers what must be uploaded. Counts as a deploy for the anonymous caps. */
export async function createManifest(deps: OperationsDeps, caller: Caller, network: string, input: ManifestInput): Promise<ManifestView> {
  const site = typeof input.site === 'string' && input.site !== '' ? input.site : undefined;
  const base = typeof input.base_revision === 'string' ? input.base_revision : undefined;
  const { store, log } = deps;
  const decision = decideDeploy(deps, caller, site, base);
  const raw = parseFiles(input.files);
  const anonymous = caller.kind !== 'account';
  const plan = decision.mode === 'create' ? decision.plan : decision.site.plan;
  const checked = checkDeployPaths(
    raw.map((file) => file.path),
    { maxFiles: PLAN_LIMITS[plan].maxFiles, blockExecutables: anonymous, partial: false },
  );
  if (!checked.ok) throw refusalError(checked.error);
  const files = checked.checked.paths.map((path, i) => ({ ...raw[checked.checked.from[i]!]!, path }));
  checkTier(new Map(files.map((file) => [file.path, { sha256: file.sha256, size: file.size, type: '' }])), PLAN_LIMITS[plan]);
  await takeAnonymousTokens(deps, caller, network, { deploy: true, site: decision.mode === 'create' });

  const known = decision.mode === 'update' ? reusableContents(store, decision.site, deps.now()) : {};
  const missing = new Map<string, number>();
  for (const file of files) {
    const had = known[file.sha256];
    if (had && had.size !== file.size) {
      throw new ServiceError('bad_request', `${file.path}: size ${file.size} does not match the content with that sha256 (${had.size} bytes).`, {
        details: { file: file.path },
      });
    }
    if (!had) missing.set(file.sha256, file.size);
  }
  // Only what the manifest needs of `known` is kept.
  const kept: ManifestRecord['known'] = {};
  for (const file of files) if (known[file.sha256]) kept[file.sha256] = known[file.sha256]!;

  const missingBytes = [...missing.values()].reduce((sum, size) => sum + size, 0);
  const owner = ownerOf(caller);
  const anonymousNetwork = caller.kind === 'anonymous' ? network : undefined;
  checkUnpublishedCap(deps, caller, owner, anonymousNetwork, missingBytes);

  const id = `mf_${randomBytes(18).toString('base64url')}`;
  const secret = caller.kind === 'anonymous' ? `${SECRET_PREFIX}${randomBytes(24).toString('base64url')}` : undefined;
  const now = deps.now();
  const record: ManifestRecord = {
    owner,
    ...(secret !== undefined ? { secretHash: hashToken(secret) } : {}),
    mode: decision.mode,
    ...(decision.mode === 'update' ? { siteId: decision.site.id, baseRevision: decision.base } : {}),
    plan,
    files,
    skipped: checked.checked.skipped,
    known: kept,
    missing: [...missing.keys()],
    missingBytes,
    ...(anonymousNetwork !== undefined ? { network: anonymousNetwork } : {}),
    createdAt: now,
    expiresAt: now + MANIFEST_LIFETIME_MS,
  };
  await store.putManifest(id, record);
  log.info({ manifest: id, files: files.length, missing: missing.size, missingBytes }, 'deploy.manifest');
  const view = manifestStatusView(deps, id, record, new Map());
  if (secret === undefined) return view;
  return {
    ...view,
    manifest_secret: secret,
    agent_message: `${view.agent_message} Send the manifest_secret as the ${MANIFEST_SECRET_HEADER} header with every request for this manifest (each upload, GET and DELETE); it is shown only now, and without it the manifest answers 404.`,
  };
}

/**
 * `GET /v1/deploy/manifest/<id>`: what is still missing (after an interrupted upload, say).
 * `secret`: an anonymous manifest's secret, as every call for one must send it.
 */
export function manifestStatus(deps: Pick<OperationsDeps, 'store' | 'config' | 'now'>, caller: Caller, id: string, secret?: string): ManifestView | DeployView {
  // Published: what it published, credentials included, for a day (a lost answer is not a lost site).
  const published = publishedManifest(deps, caller, id, secret);
  if (published) {
    const view = published.view as DeployView;
    return {
      ...view,
      // A client that resumes by the manifest id (the CLI) finds it here and finishes with a replay.
      manifest: id,
      agent_message: `This manifest was already published, as revision ${view.revision.number} of ${view.site.url} ; nothing more to upload. Its answer follows. ${view.agent_message}`,
    };
  }
  // What the next part would meet: the site gone (410), access lost (403), a stale base (409).
  const { record } = loadManifest(deps, caller, id, secret);
  return manifestStatusView(deps, id, record, deps.store.listManifestParts(id));
}

/** The answer a manifest of this caller's published, kept a day (see replays.ts). */
export function publishedManifest(deps: Pick<OperationsDeps, 'store'>, caller: Caller, id: string, secret: string | undefined): Answer | undefined {
  return manifestAnswer(deps, { id, owner: ownerOf(caller), ...(caller.kind === 'anonymous' ? { secret: secret ?? '' } : {}) });
}

/** Keeps a published manifest's answer for its maker's retries (see replays.ts). */
export function keepPublishedManifest(
  deps: Pick<OperationsDeps, 'store' | 'log' | 'now'>,
  caller: Caller,
  id: string,
  secret: string | undefined,
  answer: Answer,
): Promise<void> {
  return keepManifestAnswer(deps, { id, owner: ownerOf(caller), ...(caller.kind === 'anonymous' ? { secret: secret ?? '' } : {}) }, answer);
}

/** `DELETE /v1/deploy/manifest/<id>`: gives up an upload; its parts go at the next sweep. */
export async function abandonManifest(deps: Pick<OperationsDeps, 'store' | 'log'>, caller: Caller, id: string, secret?: string): Promise<void> {
  ownRecord(deps.store, caller, id, secret, { refusedToo: true });
  if (!(await deps.store.deleteManifest(id))) throw manifestNotFound(caller);
  deps.log.info({ manifest: id }, 'deploy.manifest_abandoned');
}

/** The manifest a part belongs to, if this caller made it (404 otherwise, used or expired alike). */
export function loadManifest(
  deps: Pick<OperationsDeps, 'store' | 'config' | 'now'>,
  caller: Caller,
  id: string,
  secret?: string,
): { record: ManifestRecord; decision: Decision } {
  const record = ownRecord(deps.store, caller, id, secret);
  // Access and the base are checked again: both may have changed since the manifest.
  const site = record.siteId === undefined ? undefined : deps.store.getSiteById(record.siteId);
  if (record.mode === 'update' && !site) throw new ServiceError('not_found', 'The site of this manifest no longer exists.');
  return { record, decision: decideDeploy(deps, caller, site?.name, record.baseRevision) };
}

/**
 * Records the contents of one uploaded part (already checked by ingest: paths, limits, the
 * leak guard, executables). Each must be a content the manifest lists as missing; one sent
 * again costs nothing. Answers every content arrived so far.
 */
export async function receiveParts(
  { store }: Pick<OperationsDeps, 'store'>,
  id: string,
  record: ManifestRecord,
  uploaded: UploadedContent[],
): Promise<Map<string, ManifestPart>> {
  const missing = new Set(record.missing);
  const sizes = new Map(record.files.map((file) => [file.sha256, file.size]));
  const parts = new Map<string, { sha256: string; size: number; compress?: boolean }>();
  for (const file of uploaded) {
    if (!missing.has(file.sha256)) {
      throw new ServiceError('bad_request', `${file.path} was uploaded but its content is not one the manifest asked for.`, {
        agentMessage: 'Upload only contents listed as "missing" by the manifest (by sha256); GET /v1/deploy/manifest/<id> lists what is still missing.',
        details: { file: file.path },
      });
    }
    if (sizes.get(file.sha256) !== file.size) {
      throw new ServiceError('bad_request', `${file.path}: the manifest says ${sizes.get(file.sha256)} bytes, the content has ${file.size}.`, {
        details: { file: file.path },
      });
    }
    parts.set(file.sha256, { sha256: file.sha256, size: file.size, ...(file.compress ? { compress: true } : {}) });
  }
  const arrived = await store.addManifestParts(id, [...parts.values()]);
  // Expired, refused, or being published by another request since `load`.
  if (!arrived) throw manifestNotFound();
  return arrived;
}

/** Refuses the whole deploy for good (a secret in one part): nothing of it can go live. */
export async function refuseManifest({ store, log }: Pick<OperationsDeps, 'store' | 'log'>, id: string, error: ServiceError): Promise<void> {
  const refused = await store.refuseManifest(id, {
    code: error.code,
    message: error.message,
    ...(error.agentMessage !== undefined ? { agentMessage: error.agentMessage } : {}),
    ...(error.details !== undefined ? { details: error.details } : {}),
  });
  if (refused) log.info({ manifest: id, code: error.code }, 'deploy.manifest_refused');
}

/** What is still missing, by sha256 (empty: the deploy can publish). */
export function remainingContents(record: ManifestRecord, parts: ReadonlyMap<string, ManifestPart>): string[] {
  return record.missing.filter((sha256) => !parts.has(sha256));
}

/**
 * The site's files from the manifest: uploaded contents (already checked by ingest) and the
 * reused ones. Every missing content must have arrived, and nothing else.
 */
export function assembleManifest(record: ManifestRecord, parts: ReadonlyMap<string, ManifestPart>): Map<string, FileEntry> {
  const absent = record.missing.filter((sha256) => !parts.has(sha256));
  if (absent.length > 0) {
    const paths = record.files.filter((file) => absent.includes(file.sha256)).map((file) => file.path);
    throw new ServiceError('bad_request', `${absent.length} missing contents were not uploaded, for example ${paths[0]}.`, {
      agentMessage: `Upload every content the manifest listed as missing, for example ${paths.slice(0, 3).join(', ')}.`,
      details: { file: paths[0] },
    });
  }
  const files = new Map<string, FileEntry>();
  for (const file of record.files) {
    const source = parts.get(file.sha256) ?? record.known[file.sha256]!;
    if (source.size !== file.size) {
      throw new ServiceError('bad_request', `${file.path}: the manifest says ${file.size} bytes, the content has ${source.size}.`, {
        details: { file: file.path },
      });
    }
    files.set(file.path, entryAt(file.path, file.sha256, 'at' in source ? { size: source.size } : source));
  }
  return files;
}

/**
 * Uses the manifest up, just before its deploy publishes: of any requests racing each other,
 * only the one that took it may go on (404 for the rest), so one manifest never publishes
 * twice or creates a second site. Its parts stay held until `release`.
 */
export async function takeManifest({ store }: Pick<OperationsDeps, 'store'>, id: string): Promise<void> {
  if (!(await store.takeManifest(id))) throw manifestNotFound();
}

/**
 * After a taken manifest's publish: dropped once published, or refused for good (409: the
 * base moved on; 404: the site is gone); any other failure (a store outage, a limit) gives
 * it back, so the parts already uploaded can still publish with an empty request.
 */
export async function releaseManifest({ store }: Pick<OperationsDeps, 'store'>, id: string, failure?: unknown): Promise<void> {
  const code = (failure as { code?: unknown } | undefined)?.code;
  if (failure === undefined || code === 'conflict' || code === 'not_found') await store.deleteManifest(id);
  else await store.untakeManifest(id);
}

/**
 * The caller's own live manifest; a refused one answers its refusal. Anyone else, an anonymous
 * caller without the manifest's secret included, is told there is no such manifest.
 */
function ownRecord(
  store: Pick<Store, 'getManifest'>,
  caller: Caller,
  id: string,
  secret: string | undefined,
  options: { refusedToo?: boolean } = {},
): ManifestRecord {
  const record = typeof id === 'string' && id.startsWith('mf_') ? store.getManifest(id) : undefined;
  if (!record || record.owner !== ownerOf(caller) || record.takenAt !== undefined) throw manifestNotFound(caller);
  if (caller.kind === 'anonymous' && !holdsSecret(record, secret)) throw manifestNotFound(caller);
  if (record.refused && !options.refusedToo) {
    const { code, message, agentMessage, details } = record.refused;
    throw new ServiceError(code as ServiceError['code'], `This deploy was refused and can no longer be finished: ${message}`, {
      agentMessage: `${agentMessage ?? message} Nothing of this deploy was published. Fix the files, then start again with a new manifest (POST /v1/deploy/manifest).`,
      ...(details !== undefined ? { details } : {}),
    });
  }
  return record;
}

/** What a manifest still lacks, and how to send it. */
export function manifestStatusView(
  deps: Pick<OperationsDeps, 'now'>,
  id: string,
  record: ManifestRecord,
  parts: ReadonlyMap<string, ManifestPart>,
): ManifestView {
  const sizes = new Map(record.files.map((file) => [file.sha256, file.size]));
  const missing = record.missing.filter((sha256) => !parts.has(sha256));
  const missingBytes = missing.reduce((sum, sha256) => sum + (sizes.get(sha256) ?? 0), 0);
  let receivedBytes = 0;
  for (const part of parts.values()) receivedBytes += part.size;
  let expiresAt = record.expiresAt;
  for (const part of parts.values()) expiresAt = Math.max(expiresAt, part.at + MANIFEST_LIFETIME_MS);
  const within = spellDuration(expiresAt - deps.now());
  return {
    manifest: id,
    missing,
    missing_bytes: missingBytes,
    received: parts.size,
    received_bytes: receivedBytes,
    files: record.files.length,
    skipped: record.skipped,
    expires_at: iso(expiresAt),
    agent_message:
      missing.length === 0
        ? `Nothing is missing. Publish with POST /v1/deploy?manifest=${id} and an empty body within ${within}.`
        : `Upload the ${missing.length} missing contents (${formatBytes(missingBytes)}) to POST /v1/deploy?manifest=${id}, as archives or JSON {"files": [...]} of at most 90 MB each (40 MB through MCP), in any number of requests and in any order; ` +
          `each file at any path of the manifest that has its sha256. The site goes live, as one revision, when the last one arrives. Within ${within} of the last part; GET /v1/deploy/manifest/${id} tells what is still missing.`,
  };
}

/**
 * An owner's open manifests may together ask for at most `PLINTH_UNPUBLISHED_SITES` times its
 * plan's per-site limit: uploads nobody publishes cannot fill the disk. Counted when a
 * manifest is made, so a refusal costs no upload.
 */
function checkUnpublishedCap(
  { store, config }: Pick<OperationsDeps, 'store' | 'config'>,
  caller: Caller,
  owner: string,
  network: string | undefined,
  adding: number,
): void {
  const factor = config.deploy.unpublishedSites;
  if (factor === 0 || adding === 0) return;
  const plan = caller.kind === 'account' ? caller.account.plan : 'anonymous';
  const cap = factor * PLAN_LIMITS[plan].maxSiteBytes;
  let held = 0;
  let soonest = Number.POSITIVE_INFINITY;
  for (const { record } of store.listOwnerManifests(owner)) {
    if (record.refused || record.takenAt !== undefined || record.network !== network) continue;
    held += record.missingBytes ?? 0;
    soonest = Math.min(soonest, record.expiresAt);
  }
  if (held + adding <= cap) return;
  throw new ServiceError('limit', `Uploads not yet published would hold ${formatBytes(held + adding)}; the limit is ${formatBytes(cap)}.`, {
    agentMessage:
      `Other deploys of yours that were never finished hold ${formatBytes(held)} of uploads. Finish them, give them up with DELETE /v1/deploy/manifest/<id>, or wait until they expire` +
      (Number.isFinite(soonest) ? ` (the first at ${iso(soonest)})` : '') +
      '; then send this manifest again.',
    details: { unpublished_bytes: held, limit_bytes: cap },
  });
}

/** An uploaded content of a part, as ingest reports it. */
export interface UploadedContent {
  path: string;
  sha256: string;
  size: number;
  /** Worth precompressed variants once live. */
  compress?: boolean;
}

/**
 * Contents of the site's recent revisions (the live one first, then up to 20 more within the
 * plan's history reach): what a digest deploy of this site may reuse without an upload.
 */
export function reusableContents(store: Store, site: SiteRecord, now: number): ManifestRecord['known'] {
  const known: ManifestRecord['known'] = {};
  const remember = (entry: FileEntry): void => {
    known[entry.sha256] ??= entry.encodings ? { size: entry.size, encodings: entry.encodings } : { size: entry.size };
  };
  if (site.liveRevision) for (const file of store.listFiles(site.liveRevision)) remember(file);
  const reach = PLAN_LIMITS[site.plan].historyReachMs;
  if (reach > 0) {
    const since = now - reach;
    for (const revision of store.listRevisions(site.id, { limit: REUSABLE_REVISIONS }).revisions) {
      if (revision.id === site.liveRevision || revision.createdAt < since) continue;
      for (const file of store.listFiles(revision.id)) remember(file);
    }
  }
  return known;
}

/** The path-index row of reused or fresh content at a path: the type follows the path. */
export function entryAt(path: string, sha256: string, source: { size: number; encodings?: FileEntry['encodings'] }): FileEntry {
  const type = contentTypeFor(path);
  const entry: FileEntry = { sha256, size: source.size, type };
  // Variants belong to the bytes; they are served only for types worth compressing.
  if (source.encodings && Object.keys(source.encodings).length > 0 && isCompressibleType(type)) entry.encodings = source.encodings;
  return entry;
}

/** `24 hours`, `35 minutes`: for messages. */
function spellDuration(ms: number): string {
  if (ms >= 2 * 3600_000) return `${Math.round(ms / 3600_000)} hours`;
  const minutes = Math.max(1, Math.round(ms / 60_000));
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

// An anonymous manifest made before manifests had secrets has none, and no one can prove it theirs.
function holdsSecret(record: ManifestRecord, secret: string | undefined): boolean {
  return record.secretHash !== undefined && typeof secret === 'string' && secret.startsWith(SECRET_PREFIX) && sameHash(hashToken(secret), record.secretHash);
}

/** The same answer whether the manifest does not exist or is someone else's. */
function manifestNotFound(caller?: Caller): ServiceError {
  // Said to every anonymous caller alike, so it tells nothing about this id.
  const secret =
    caller?.kind === 'anonymous'
      ? ` Without a credential, every request for a manifest must send the manifest_secret from its first answer as the ${MANIFEST_SECRET_HEADER} header.`
      : '';
  return new ServiceError(
    'not_found',
    `There is no such manifest for this caller; it may have expired (a manifest lasts ${spellDuration(MANIFEST_LIFETIME_MS)} after its last part) or been published.`,
    {
      agentMessage: `Send the manifest again with POST /v1/deploy/manifest, then upload what it answers as missing.${secret}`,
    },
  );
}
