import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { mkdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { siteUrl, type Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { isAborted, sendError, sendJson, spoolBody, SpoolError, trackAbort } from '../http.js';
import type { IngestPool, JsonDeployFields, UnpackResult } from '../ingest/index.js';
import type { Logger } from '../log.js';
import type { UploadPacer } from '../upload-pacer.js';
import { ANONYMOUS_LIFETIME_MS, MAX_REQUEST_BYTES, MAX_UNPACKED_BYTES, PLAN_LIMITS, PLAN_TITLES, type TierLimits } from '../plans.js';
import { hashToken, type AccountRecord, type FileEntry, type Plan, type SiteRecord, type Store } from '../store/index.js';
import type { HttpRequest, HttpResponse } from '../uws.js';
import { clientAddress, networkOf } from './client-network.js';
import { resolveSite } from './access.js';
import { identifyCaller, type Caller } from './credentials.js';
import { readRequest, type ApiRequest } from './request.js';
import { randomSiteName } from './site-names.js';
import { deployRevisionView, deploySiteView, iso } from './views.js';

export interface DeployDeps {
  store: Store;
  ingest: IngestPool;
  pacer?: UploadPacer;
  config: Readonly<Config>;
  log: Logger;
  now: () => number;
}

/** What a deploy will do, decided from the caller, the site and the base revision. */
type Decision =
  | { mode: 'create'; plan: Plan; accountId?: string; createdBy: string }
  | { mode: 'update'; site: SiteRecord; base: string; createdBy: string };

const HOUR_MS = 3600_000;
const MB = 1024 * 1024;
const NAME_ATTEMPTS = 8;

const isJsonBody = (contentType: string | undefined): boolean => /^application\/([a-z.+-]*\+)?json\b/i.test(contentType?.trim() ?? '');

/**
 * `POST /v1/deploy` (SPEC 4.1, 4.2). The HTTP thread only spools the body to disk and makes the
 * decisions; the ingest pool parses, validates, scans and stores blobs; one store transaction
 * publishes. Nothing is live until that transaction, so a refused deploy changes nothing.
 */
export function createDeployHandler(deps: DeployDeps): (res: HttpResponse, req: HttpRequest) => void {
  const { store, config, log } = deps;
  const spoolDir = join(config.dataDir, 'tmp', 'uploads');
  mkdirSync(spoolDir, { recursive: true });

  return (res, req) => {
    const request = readRequest(res, req, []);
    trackAbort(res);
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > MAX_REQUEST_BYTES) {
      return sendError(res, tooLargeRequest(), log, { closeConnection: true });
    }
    const spoolPath = join(spoolDir, `${randomUUID()}.upload`);
    const spool = spoolBody(res, { path: spoolPath, maxBytes: MAX_REQUEST_BYTES, pacer: deps.pacer, deadlineMs: config.deploy.uploadTimeoutMs });
    void (async () => {
      try {
        await deploy(request, spool.done);
      } catch (err) {
        if (isAborted(res)) return;
        if (err instanceof SpoolError) {
          if (err.reason === 'aborted') return;
          if (err.reason === 'too_large') err = tooLargeRequest();
        }
        // The body may still be arriving (an early refusal, or one over the size limit).
        const finished = await spool.drain();
        sendError(res, err, log, { closeConnection: !finished, context: { route: 'deploy' } });
      } finally {
        spool.discard();
        await unlink(spoolPath).catch(() => undefined);
      }
    })();

    async function deploy(request: ApiRequest, bodyDone: Promise<number>): Promise<void> {
      const started = performance.now();
      const caller = identifyCaller(request.headers.authorization, store);
      const json = isJsonBody(request.headers['content-type']);
      const network = networkOf(clientAddress(request.remoteAddress, request.headers['x-forwarded-for'] ?? '', config.deploy.trustProxy));

      // Archives name their site in the query and header: decide before reading the body.
      const early = json ? undefined : decide(caller, request.query.get('site') ?? undefined, request.headers['x-base-revision']);
      await takeAnonymousTokens(caller, network, early?.mode === 'create');

      const bytes = await bodyDone;
      const uploaded = performance.now();
      if (bytes === 0) {
        throw new ServiceError('bad_request', 'The request body is empty.', {
          agentMessage: 'Send the site as a .tar.gz, .tar or .zip archive in the body, or as JSON {"files": [...]} with Content-Type: application/json.',
        });
      }

      const result = await unpack(caller, spoolPath, json);
      const unpacked = performance.now();
      if (!result.ok) {
        throw new ServiceError(result.error.code, result.error.message, { agentMessage: result.error.agentMessage, details: result.error.details });
      }

      const fields = result.json ?? {};
      const decision = early ?? (await decideJson(caller, fields, network));
      const files = assemble(decision, result, fields.patch === true ? fields.deleted ?? [] : undefined);
      const { body, revisionId } = await publish(decision, files, result.skipped, fields.patch === true);
      sendJson(res, 201, body);
      const ms = (from: number, to: number): number => Math.round(to - from);
      log.info({ revision: revisionId, bytes, files: files.size, uploadMs: ms(started, uploaded), unpackMs: ms(uploaded, unpacked), commitMs: ms(unpacked, performance.now()) }, 'deploy.timing');
      compressAfterPublish(revisionId, result.pendingVariants);
    }
  };

  /** A JSON body names its site and base inside; decided once the worker has parsed it. */
  async function decideJson(caller: Caller, fields: JsonDeployFields, network: string): Promise<Decision> {
    if (fields.deleted && !fields.patch) throw new ServiceError('bad_request', '"deleted" is only allowed with "patch": true.');
    if (fields.patch && fields.site === undefined) {
      throw new ServiceError('bad_request', '"patch": true needs "site" and "base_revision".', {
        agentMessage: 'A patch changes an existing site: send "site" and "base_revision" (the live revision id from GET /v1/sites/<name>).',
      });
    }
    const decision = decide(caller, fields.site, fields.base_revision);
    // The deploy itself was counted before the body was read; a create also counts as a site.
    if (decision.mode === 'create') await takeAnonymousTokens(caller, network, true, false);
    return decision;
  }

  /** Who may do what (SPEC 4.1 table, SPEC 5): throws the matching error. */
  function decide(caller: Caller, siteName: string | undefined, base: string | undefined): Decision {
    if (siteName === undefined || siteName === '') {
      if (caller.kind === 'site_token') {
        throw new ServiceError('bad_request', 'A site token can only update its own site; name it with ?site=<name>.', {
          agentMessage: 'To update the site, send ?site=<name> (JSON: "site") and the live revision as X-Base-Revision (JSON: "base_revision"). Omit the site token to create a new site.',
        });
      }
      if (caller.kind === 'account') {
        checkSitesLimit(caller.account);
        return { mode: 'create', plan: caller.account.plan, accountId: caller.account.id, createdBy: caller.account.email };
      }
      return { mode: 'create', plan: 'anonymous', createdBy: 'anonymous' };
    }
    // The same access rules as every other site endpoint: 401, 404, 410, then 403.
    const { site, actor } = resolveSite(store, caller, siteName, 'deploy', deps.now(), { mustBeActive: true });
    if (base === undefined || base === '') {
      throw new ServiceError('bad_request', 'An update needs the revision it is based on.', {
        agentMessage: `Get the live revision with GET /v1/sites/${site.name} (field live_revision.id) and send it as the X-Base-Revision header (archives) or "base_revision" (JSON), then retry.`,
      });
    }
    if (base !== site.liveRevision) throw conflict(site);
    return { mode: 'update', site, base, createdBy: actor };
  }

  /**
   * The plan's number of owned sites (SPEC 8 rule 4). Checked before the upload is read; two
   * creates racing at the limit may both pass, which costs at most one site over.
   */
  function checkSitesLimit(account: AccountRecord): void {
    const limit = config.api.sitesLimit[account.plan];
    const used = store.countOwnedSites(account.id);
    if (used < limit) return;
    throw new ServiceError('limit', `The ${PLAN_TITLES[account.plan]} plan allows ${limit} sites and this account owns ${used}.`, {
      agentMessage: `This account already has ${used} of the ${limit} sites its ${PLAN_TITLES[account.plan]} plan allows, so no new site was created. Update an existing site instead (send "site" and its live revision), delete one with DELETE /v1/sites/<name>, or move to a larger plan in the account settings at ${config.publicUrls.app} .`,
      details: { sites_used: used, sites_limit: limit },
    });
  }

  function conflict(site: SiteRecord): ServiceError {
    return new ServiceError('conflict', `The site ${site.name} changed since the base revision you sent; nothing was published.`, {
      agentMessage: `Someone published ${site.name} after your base revision. Fetch the live revision with GET /v1/sites/${site.name}, merge your changes onto it, and retry with it as the base revision.`,
      details: site.liveRevision ? { live_revision: site.liveRevision } : undefined,
    });
  }

  async function takeAnonymousTokens(caller: Caller, network: string, creates: boolean, countDeploy = true): Promise<void> {
    if (caller.kind !== 'anonymous' && caller.kind !== 'site_token') return;
    const checks = [];
    if (countDeploy && config.deploy.anonDeploysPerHour > 0) {
      checks.push({ scope: `anon-deploys:${network}`, limit: config.deploy.anonDeploysPerHour, windowMs: HOUR_MS });
    }
    if (creates && config.deploy.anonSitesPerHour > 0) {
      checks.push({ scope: `anon-sites:${network}`, limit: config.deploy.anonSitesPerHour, windowMs: HOUR_MS });
    }
    if (checks.length === 0) return;
    const result = await store.takeRateTokens(checks);
    if (!result.allowed) {
      const seconds = Math.ceil(result.retryAfterMs / 1000);
      throw new ServiceError('limit', 'Too many anonymous deploys from your network this hour.', {
        agentMessage: `Anonymous publishing is capped per network. Try again in ${Math.ceil(seconds / 60)} minutes, or sign in and deploy with an API token.`,
        headers: { 'Retry-After': String(seconds) },
      });
    }
  }

  async function unpack(caller: Caller, spoolPath: string, json: boolean): Promise<UnpackResult> {
    // The caller's tier bounds the work (a zip bomb stops at it); the target site's tier is
    // checked on the assembled site afterwards.
    const anonymous = caller.kind === 'anonymous' || caller.kind === 'site_token';
    const tier = PLAN_LIMITS[caller.kind === 'account' ? caller.account.plan : 'anonymous'];
    try {
      return await deps.ingest.unpack({
        spoolPath,
        dataDir: config.dataDir,
        bodyKind: json ? 'json' : 'archive',
        limits: {
          maxFiles: tier.maxFiles,
          maxFileBytes: tier.maxFileBytes,
          maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES),
        },
        blockExecutables: anonymous,
      });
    } catch (err) {
      if ((err as { code?: unknown }).code === 'unavailable') {
        throw new ServiceError('unavailable', 'Too many deploys are being processed right now.', {
          agentMessage: 'The service is busy. Wait a few seconds and retry the same request.',
          headers: { 'Retry-After': '5' },
        });
      }
      throw err;
    }
  }

  /** The complete file set of the new revision, checked against the target site's tier. */
  function assemble(decision: Decision, result: Extract<UnpackResult, { ok: true }>, deleted: string[] | undefined): Map<string, FileEntry> {
    const files = new Map<string, FileEntry>();
    if (deleted !== undefined && decision.mode === 'update') {
      for (const file of store.listFiles(decision.base)) {
        files.set(file.path, compactEntry(file));
      }
      for (const path of deleted) {
        if (!files.delete(path)) {
          throw new ServiceError('bad_request', `Cannot delete ${path}: the base revision has no such file.`, { details: { file: path } });
        }
      }
    }
    for (const file of result.files) files.set(file.path, compactEntry(file));

    checkTier(files, PLAN_LIMITS[decision.mode === 'create' ? decision.plan : decision.site.plan]);
    if (!files.has('index.html')) {
      throw new ServiceError('bad_request', 'The site has no index.html at its root.', {
        agentMessage: 'Every site needs an index.html at the top level of the upload (or inside its single top-level folder).',
      });
    }
    return files;
  }

  function checkTier(files: ReadonlyMap<string, FileEntry>, tier: TierLimits): void {
    if (files.size > tier.maxFiles) {
      throw new ServiceError('too_large', `The site would have ${files.size} files; the limit is ${tier.maxFiles}.`, {
        agentMessage: `This plan allows ${tier.maxFiles} files per site. Remove files or publish with a larger plan.`,
      });
    }
    let total = 0;
    for (const [path, entry] of files) {
      if (entry.size > tier.maxFileBytes) {
        throw new ServiceError('too_large', `${path} is larger than ${formatMb(tier.maxFileBytes)}.`, {
          agentMessage: `This plan allows files up to ${formatMb(tier.maxFileBytes)}. Shrink ${path} or publish with a larger plan.`,
          details: { file: path },
        });
      }
      total += entry.size;
    }
    if (total > tier.maxSiteBytes) {
      throw new ServiceError('too_large', `The site would be ${formatMb(total)}; the limit is ${formatMb(tier.maxSiteBytes)}.`, {
        agentMessage: `This plan allows ${formatMb(tier.maxSiteBytes)} per site. Remove or shrink files, or publish with a larger plan.`,
      });
    }
  }

  /**
   * The site is live before its text files have compressed variants: they are made by the pool
   * right after, recorded on the revision, and picked up by serving threads then.
   */
  function compressAfterPublish(revisionId: string, sha256s: string[]): void {
    if (sha256s.length === 0) return;
    deps.ingest
      .compress({ dataDir: config.dataDir, sha256s })
      .then((made) => store.recordEncodings(revisionId, new Map(Object.entries(made))))
      .then(
        (files) => log.debug({ revision: revisionId, files }, 'deploy.compressed'),
        (err: unknown) => log.warn({ err, revision: revisionId }, 'deploy.compress_failed'),
      );
  }

  /** Commits the revision (creating the site when asked) and returns the 201 body. */
  async function publish(decision: Decision, files: Map<string, FileEntry>, skipped: string[], patch: boolean): Promise<{ body: Record<string, unknown>; revisionId: string }> {
    if (decision.mode === 'update') {
      const result = await store.commitRevision({
        site: decision.site.name,
        baseRevision: decision.base,
        files,
        kind: patch ? 'patch' : 'deploy',
        createdBy: decision.createdBy,
      });
      if (!result.ok) {
        if (result.reason === 'conflict') throw conflict(store.getSite(decision.site.name) ?? decision.site);
        throw new ServiceError('not_found', `There is no site named ${decision.site.name}.`);
      }
      log.info({ site: result.site.name, revision: result.revision.id, files: files.size, kind: result.revision.kind }, 'deploy.published');
      const url = siteUrl(config.publicUrls, result.site.name);
      const body = {
        site: deploySiteView(result.site, config.publicUrls),
        revision: deployRevisionView(result.revision),
        skipped,
        agent_message: `Published revision ${result.revision.number} of ${url} (${files.size} files).${skippedNote(skipped)}`,
      };
      return { body, revisionId: result.revision.id };
    }

    const anonymous = decision.plan === 'anonymous';
    const siteToken = anonymous ? `st_${randomBytes(24).toString('base64url')}` : undefined;
    const claimToken = anonymous ? `ct_${randomBytes(24).toString('base64url')}` : undefined;
    const expiresAt = anonymous ? deps.now() + ANONYMOUS_LIFETIME_MS : undefined;
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      const name = randomSiteName();
      if (store.isNameUsed(name)) continue;
      const result = await store.commitRevision({
        site: name,
        create: {
          name,
          plan: decision.plan,
          claimed: !anonymous,
          accountId: decision.accountId,
          expiresAt,
          siteTokenHash: siteToken && hashToken(siteToken),
          claimTokenHash: claimToken && hashToken(claimToken),
        },
        baseRevision: null,
        files,
        kind: 'deploy',
        createdBy: decision.createdBy,
      });
      if (!result.ok) continue; // only `name_taken` can happen here: another deploy took the name
      log.info({ site: name, revision: result.revision.id, files: files.size, anonymous }, 'deploy.created');
      const url = siteUrl(config.publicUrls, name);
      const body: Record<string, unknown> = {
        site: deploySiteView(result.site, config.publicUrls),
        revision: deployRevisionView(result.revision),
        skipped,
      };
      if (anonymous) {
        const claimUrl = `${config.publicUrls.app}/claim/${claimToken}`;
        body.site_token = siteToken;
        body.claim_url = claimUrl;
        body.agent_message =
          `Your site is live at ${url} . It is temporary: it will be deleted on ${iso(expiresAt!)} (72 hours from now) unless you claim it. ` +
          `To keep it, open ${claimUrl} and sign in. To update it later, keep the site_token (save it with the site name in .service.json, and keep that file out of version control).` +
          skippedNote(skipped);
      } else {
        body.agent_message = `Your site is live at ${url} .${skippedNote(skipped)}`;
      }
      return { body, revisionId: result.revision.id };
    }
    throw new Error('could not find an unused site name');
  }
}

function skippedNote(skipped: readonly string[]): string {
  if (skipped.length === 0) return '';
  const shown = skipped.slice(0, 5).join(', ');
  return ` Left out on purpose (never published): ${shown}${skipped.length > 5 ? ` and ${skipped.length - 5} more` : ''}.`;
}

function compactEntry(file: FileEntry): FileEntry {
  const entry: FileEntry = { sha256: file.sha256, size: file.size, type: file.type };
  if (file.encodings && Object.keys(file.encodings).length > 0) entry.encodings = file.encodings;
  return entry;
}

function formatMb(bytes: number): string {
  const mb = bytes / MB;
  return mb >= 1024 ? `${(mb / 1024).toFixed(mb % 1024 === 0 ? 0 : 1)} GB` : `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

function tooLargeRequest(): ServiceError {
  return new ServiceError('too_large', `One request can carry at most ${MAX_REQUEST_BYTES / MB} MB.`, {
    agentMessage: 'The upload is over 90 MB. Publish the site in parts: a first deploy, then patch deploys (JSON with "patch": true) for the rest.',
  });
}

