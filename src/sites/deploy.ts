import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import type { JsonDeployFields, UnpackResult } from '../ingest/index.js';
import { ANONYMOUS_LIFETIME_MS, MAX_UNPACKED_BYTES, PLAN_LIMITS } from '../plans.js';
import { hashToken, type FileEntry, type Plan, type SiteRecord } from '../store/index.js';
import { resolveSite } from './access.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { checkSitesLimit, checkTier, compactEntry } from './limits.js';
import { cap, HOUR_MS, takeOrRefuse } from './rate.js';
import { claimKeyFor } from './sealed-token.js';
import { randomSiteName } from './site-names.js';
import { deployRevisionView, deploySiteView, iso, type DeploySiteView } from './views.js';

/** What a deploy will do, decided from the caller, the site and the base revision. */
type Decision =
  | { mode: 'create'; plan: Plan; accountId?: string; createdBy: string }
  | { mode: 'update'; site: SiteRecord; base: string; createdBy: string };

export interface DeployRequest {
  caller: Caller;
  /** The caller's network (IPv4 /24, IPv6 /64), for the anonymous caps. */
  network: string;
  /** `json`: the body is SPEC 4.2's inline files; `archive`: tar, tgz or zip, told apart by bytes. */
  bodyKind: 'archive' | 'json';
  /** For archives, the site and base revision named outside the body; JSON bodies name them inside. */
  site?: string;
  baseRevision?: string;
}

/** The request body, spooled to a file the caller deletes afterwards. */
export interface DeployBody {
  spoolPath: string;
  bytes: number;
}

/** The SPEC 4.1 response body. */
export interface DeployView {
  site: DeploySiteView;
  revision: { id: string; number: number; files: number; bytes: number };
  site_token?: string;
  claim_url?: string;
  skipped: string[];
  agent_message: string;
}

export interface DeployOutcome {
  view: DeployView;
  revisionId: string;
}

/** A deploy admitted before its body is read: `finish` unpacks, checks and publishes it. */
export interface PendingDeploy {
  finish(body: DeployBody, signal?: AbortSignal): Promise<DeployOutcome>;
}

export interface DeployOperations {
  /**
   * Admits a deploy: decides what an archive deploy will do (create or update, 401/403/404/409
   * before any byte is read) and counts it against the anonymous caps. Nothing is published
   * until `finish`'s single store transaction, so a refused deploy changes nothing.
   */
  begin(request: DeployRequest): Promise<PendingDeploy>;
}

const NAME_ATTEMPTS = 8;

/** `POST /v1/deploy` (SPEC 4.1, 4.2) and the MCP `deploy_site` tool. */
export function deployOperations(deps: OperationsDeps): DeployOperations {
  const { store, config, log } = deps;

  async function begin(request: DeployRequest): Promise<PendingDeploy> {
    const { caller, network } = request;
    // Archives name their site outside the body: decide before reading it.
    const early = request.bodyKind === 'archive' ? decide(caller, request.site, request.baseRevision) : undefined;
    await takeAnonymousTokens(caller, network, { deploy: true, site: early?.mode === 'create' });

    return {
      async finish(body, signal) {
        if (body.bytes === 0) {
          throw new ServiceError('bad_request', 'The request body is empty.', {
            agentMessage: 'Send the site as a .tar.gz, .tar or .zip archive in the body, or as JSON {"files": [...]} with Content-Type: application/json.',
          });
        }
        const started = performance.now();
        const result = await unpack(caller, body.spoolPath, request.bodyKind, signal);
        const unpacked = performance.now();
        if (!result.ok) {
          throw new ServiceError(result.error.code, result.error.message, { agentMessage: result.error.agentMessage, details: result.error.details });
        }
        const fields = result.json ?? {};
        const decision = early ?? (await decideJson(caller, fields, network));
        const files = assemble(decision, result, fields.patch === true ? fields.deleted ?? [] : undefined);
        const outcome = await publish(decision, files, result.skipped, fields.patch === true);
        const ms = (from: number, to: number): number => Math.round(to - from);
        log.info({ revision: outcome.revisionId, bytes: body.bytes, files: files.size, unpackMs: ms(started, unpacked), commitMs: ms(unpacked, performance.now()) }, 'deploy.timing');
        compressAfterPublish(outcome.revisionId, result.pendingVariants);
        return outcome;
      },
    };
  }

  /** A JSON body names its site and base inside; decided once the worker has parsed it. */
  async function decideJson(caller: Caller, fields: JsonDeployFields, network: string): Promise<Decision> {
    if (fields.deleted && !fields.patch) throw new ServiceError('bad_request', '"deleted" is only allowed with "patch": true.');
    if (fields.patch && fields.site === undefined) {
      throw new ServiceError('bad_request', '"patch": true needs "site" and "base_revision".', {
        agentMessage: 'A patch changes an existing site: send "site" and "base_revision" (the live revision id from GET /v1/sites/<name>).',
      });
    }
    const decision = decide(caller, fields.site, fields.base_revision);
    // The deploy itself was counted on admission; a create also counts as a site.
    if (decision.mode === 'create') await takeAnonymousTokens(caller, network, { deploy: false, site: true });
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
        checkSitesLimit(store, config, caller.account);
        return { mode: 'create', plan: caller.account.plan, accountId: caller.account.id, createdBy: caller.account.email };
      }
      return { mode: 'create', plan: 'anonymous', createdBy: 'anonymous' };
    }
    // The same access rules as every other site operation: 401, 404, 410, then 403.
    const { site, actor } = resolveSite(store, caller, siteName, 'deploy', deps.now(), { mustBeActive: true });
    if (base === undefined || base === '') {
      throw new ServiceError('bad_request', 'An update needs the revision it is based on.', {
        agentMessage: `Get the live revision with GET /v1/sites/${site.name} (field live_revision.id) and send it as the X-Base-Revision header (archives) or "base_revision" (JSON), then retry.`,
      });
    }
    if (base !== site.liveRevision) throw conflict(site);
    return { mode: 'update', site, base, createdBy: actor };
  }

  async function takeAnonymousTokens(caller: Caller, network: string, count: { deploy: boolean; site: boolean }): Promise<void> {
    if (caller.kind !== 'anonymous' && caller.kind !== 'site_token') return;
    await takeOrRefuse(
      store,
      [
        count.deploy ? cap(`anon-deploys:${network}`, config.deploy.anonDeploysPerHour, HOUR_MS) : undefined,
        count.site ? cap(`anon-sites:${network}`, config.deploy.anonSitesPerHour, HOUR_MS) : undefined,
      ],
      (seconds) => ({
        message: 'Too many anonymous deploys from your network this hour.',
        agentMessage: `Anonymous publishing is capped per network. Try again in ${Math.ceil(seconds / 60)} minutes, or sign in and deploy with an API token.`,
      }),
    );
  }

  async function unpack(caller: Caller, spoolPath: string, bodyKind: DeployRequest['bodyKind'], signal?: AbortSignal): Promise<UnpackResult> {
    // The caller's tier bounds the work (a zip bomb stops at it); the target site's tier is
    // checked on the assembled site afterwards.
    const anonymous = caller.kind === 'anonymous' || caller.kind === 'site_token';
    const tier = PLAN_LIMITS[caller.kind === 'account' ? caller.account.plan : 'anonymous'];
    return deps.ingest.unpack(
      {
        spoolPath,
        dataDir: config.dataDir,
        bodyKind,
        limits: { maxFiles: tier.maxFiles, maxFileBytes: tier.maxFileBytes, maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES) },
        blockExecutables: anonymous,
      },
      signal,
    );
  }

  /** The complete file set of the new revision, checked against the target site's tier. */
  function assemble(decision: Decision, result: Extract<UnpackResult, { ok: true }>, deleted: string[] | undefined): Map<string, FileEntry> {
    const files = new Map<string, FileEntry>();
    if (deleted !== undefined && decision.mode === 'update') {
      for (const file of store.listFiles(decision.base)) files.set(file.path, compactEntry(file));
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

  function conflict(site: SiteRecord): ServiceError {
    return new ServiceError('conflict', `The site ${site.name} changed since the base revision you sent; nothing was published.`, {
      agentMessage: `Someone published ${site.name} after your base revision. Fetch the live revision with GET /v1/sites/${site.name}, merge your changes onto it, and retry with it as the base revision.`,
      details: site.liveRevision ? { live_revision: site.liveRevision } : undefined,
    });
  }

  /** Commits the revision (creating the site when asked). */
  async function publish(decision: Decision, files: Map<string, FileEntry>, skipped: string[], patch: boolean): Promise<DeployOutcome> {
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
      const view: DeployView = {
        site: deploySiteView(result.site, config.publicUrls),
        revision: deployRevisionView(result.revision),
        skipped,
        agent_message: `Published revision ${result.revision.number} of ${url} (${files.size} files).${skippedNote(skipped)}`,
      };
      return { view, revisionId: result.revision.id };
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
          claimKey: siteToken && claimKeyFor(siteToken),
        },
        baseRevision: null,
        files,
        kind: 'deploy',
        createdBy: decision.createdBy,
      });
      if (!result.ok) continue; // only `name_taken` can happen here: another deploy took the name
      log.info({ site: name, revision: result.revision.id, files: files.size, anonymous }, 'deploy.created');
      const url = siteUrl(config.publicUrls, name);
      const base = { site: deploySiteView(result.site, config.publicUrls), revision: deployRevisionView(result.revision) };
      if (anonymous) {
        const claimUrl = `${config.publicUrls.app}/claim/${claimToken}`;
        const view: DeployView = {
          ...base,
          site_token: siteToken,
          claim_url: claimUrl,
          skipped,
          agent_message:
            `Your site is live at ${url} . It is temporary: it will be deleted on ${iso(expiresAt!)} (72 hours from now) unless you claim it. ` +
            `To keep it, open ${claimUrl} and sign in. To update it later, keep the site_token (save it with the site name in .service.json, and keep that file out of version control).` +
            skippedNote(skipped),
        };
        return { view, revisionId: result.revision.id };
      }
      return { view: { ...base, skipped, agent_message: `Your site is live at ${url} .${skippedNote(skipped)}` }, revisionId: result.revision.id };
    }
    throw new Error('could not find an unused site name');
  }

  return { begin };
}

function skippedNote(skipped: readonly string[]): string {
  if (skipped.length === 0) return '';
  const shown = skipped.slice(0, 5).join(', ');
  return ` Left out on purpose (never published): ${shown}${skipped.length > 5 ? ` and ${skipped.length - 5} more` : ''}.`;
}
