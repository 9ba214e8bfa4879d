import { randomBytes } from 'node:crypto';
import { contentTypeFor, isCompressibleType, PLAN_LIMITS } from '../rules/index.js';
import { ServiceError } from '../errors.js';
import { checkDeployPaths, type IngestedFile } from '../ingest/index.js';
import type { FileEntry, ManifestRecord, SiteRecord, Store } from '../store/index.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { deployDecisions, type Decision } from './deploy-decision.js';
import { checkTier, formatBytes } from './limits.js';
import type { ManifestView as ManifestShape } from './shapes.js';
import { iso } from './views.js';

/**
 * Digest deploys, the redeploy that sends only what changed (like Netlify's and Vercel's): the
 * client first describes the whole site by path, size and sha256; we answer which contents we
 * lack; it uploads only those; the result is one ordinary revision with every check of a normal
 * deploy. Contents count as "had" only when they belong to revisions of the same site that the
 * caller may read, so the answer never reveals what other accounts have stored.
 */

/** A manifest waits this long for its upload. */
export const MANIFEST_LIFETIME_MS = 3600_000;
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

export function manifestOperations(deps: OperationsDeps) {
  const { store, log } = deps;
  const { decide, takeAnonymousTokens } = deployDecisions(deps);

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
      if (
        typeof path !== 'string' ||
        typeof size !== 'number' ||
        !Number.isSafeInteger(size) ||
        size < 0 ||
        typeof sha256 !== 'string' ||
        !SHA256.test(sha256)
      ) {
        throw new ServiceError('bad_request', `files[${index}] must be {path: string, size: whole number of bytes, sha256: 64 lower-case hex digits}.`, {
          details: { index },
        });
      }
      return { path, size, sha256 };
    });
  }

  return {
    /** Describes the site to publish; answers what must be uploaded. Counts as a deploy for the anonymous caps. */
    async create(caller: Caller, network: string, input: ManifestInput): Promise<ManifestView> {
      const site = typeof input.site === 'string' && input.site !== '' ? input.site : undefined;
      const base = typeof input.base_revision === 'string' ? input.base_revision : undefined;
      const decision = decide(caller, site, base);
      const raw = parseFiles(input.files);
      const anonymous = caller.kind !== 'account';
      const plan = decision.mode === 'create' ? decision.plan : decision.site.plan;
      const checked = checkDeployPaths(
        raw.map((file) => file.path),
        { maxFiles: PLAN_LIMITS[plan].maxFiles, blockExecutables: anonymous, partial: false },
      );
      if (!checked.ok)
        throw new ServiceError(checked.error.code, checked.error.message, { agentMessage: checked.error.agentMessage, details: checked.error.details });
      const files = checked.checked.paths.map((path, i) => ({ ...raw[checked.checked.from[i]!]!, path }));
      checkTier(new Map(files.map((file) => [file.path, { sha256: file.sha256, size: file.size, type: '' }])), PLAN_LIMITS[plan]);
      await takeAnonymousTokens(caller, network, { deploy: true, site: decision.mode === 'create' });

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

      const id = `mf_${randomBytes(18).toString('base64url')}`;
      const now = deps.now();
      const record: ManifestRecord = {
        owner: ownerOf(caller),
        mode: decision.mode,
        ...(decision.mode === 'update' ? { siteId: decision.site.id, baseRevision: decision.base } : {}),
        plan,
        files,
        skipped: checked.checked.skipped,
        known: kept,
        missing: [...missing.keys()],
        createdAt: now,
        expiresAt: now + MANIFEST_LIFETIME_MS,
      };
      await store.putManifest(id, record);
      const missingBytes = [...missing.values()].reduce((sum, size) => sum + size, 0);
      log.info({ manifest: id, files: files.length, missing: missing.size, missingBytes }, 'deploy.manifest');
      return {
        manifest: id,
        missing: record.missing,
        missing_bytes: missingBytes,
        files: files.length,
        skipped: record.skipped,
        expires_at: iso(record.expiresAt),
        agent_message:
          missing.size === 0
            ? `Nothing needs uploading. Finish with POST /v1/deploy?manifest=${id} and an empty body within an hour.`
            : `Upload the ${missing.size} missing files (${formatBytes(missingBytes)}) as an archive or JSON to POST /v1/deploy?manifest=${id} within an hour; each at any path of the manifest that has its sha256.`,
      };
    },

    /** The manifest a deploy finishes, if this caller made it (404 otherwise, used or expired alike). */
    load(caller: Caller, id: string): { record: ManifestRecord; decision: Decision } {
      const record = typeof id === 'string' && id.startsWith('mf_') ? store.getManifest(id) : undefined;
      if (!record || record.owner !== ownerOf(caller)) throw manifestNotFound();
      // Access and the base are checked again: both may have changed since the manifest.
      const site = record.siteId === undefined ? undefined : store.getSiteById(record.siteId);
      if (record.mode === 'update' && !site) throw new ServiceError('not_found', 'The site of this manifest no longer exists.');
      return { record, decision: decide(caller, site?.name, record.baseRevision) };
    },

    /**
     * The site's files from the manifest: uploaded contents (already checked by ingest) and the
     * reused ones. Every missing content must have arrived, and nothing else.
     */
    assemble(record: ManifestRecord, uploaded: readonly IngestedFile[]): Map<string, FileEntry> {
      const missing = new Set(record.missing);
      const arrived = new Map<string, IngestedFile>();
      for (const file of uploaded) {
        if (!missing.has(file.sha256)) {
          throw new ServiceError('bad_request', `${file.path} was uploaded but its content is not one the manifest asked for.`, {
            agentMessage: 'Upload exactly the contents listed as "missing" by the manifest (by sha256), and nothing else.',
            details: { file: file.path },
          });
        }
        arrived.set(file.sha256, file);
      }
      const absent = record.missing.filter((sha256) => !arrived.has(sha256));
      if (absent.length > 0) {
        const paths = record.files.filter((file) => absent.includes(file.sha256)).map((file) => file.path);
        throw new ServiceError('bad_request', `${absent.length} missing contents were not uploaded, for example ${paths[0]}.`, {
          agentMessage: `Upload every content the manifest listed as missing, for example ${paths.slice(0, 3).join(', ')}.`,
          details: { file: paths[0] },
        });
      }
      const files = new Map<string, FileEntry>();
      for (const file of record.files) {
        const source = arrived.get(file.sha256) ?? record.known[file.sha256]!;
        if (source.size !== file.size) {
          throw new ServiceError('bad_request', `${file.path}: the manifest says ${file.size} bytes, the content has ${source.size}.`, {
            details: { file: file.path },
          });
        }
        files.set(file.path, entryAt(file.path, file.sha256, source));
      }
      return files;
    },

    /**
     * Uses the manifest up, just before its deploy publishes: of any finishes racing each other,
     * only the one whose delete removed it may go on (404 for the rest), so one manifest never
     * publishes twice or creates a second site.
     */
    async take(id: string): Promise<void> {
      if (!(await store.deleteManifest(id))) throw manifestNotFound();
    },
  };
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

function manifestNotFound(): ServiceError {
  return new ServiceError('not_found', 'There is no such manifest for this caller; it may have expired (manifests last an hour) or been used.', {
    agentMessage: 'Send the manifest again with POST /v1/deploy/manifest, then upload what it answers as missing.',
  });
}

export type ManifestOperations = ReturnType<typeof manifestOperations>;
