import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { siteUrl } from '../config.js';
import { recordsSilentError, refusalError, ServiceError } from '../errors.js';
import { isBrotliName, type FileReference, type JsonDeployFields, type RejudgedContent, type SiteFile, type UnpackResult } from '../ingest/index.js';
import {
  ANONYMOUS_LIFETIME_MS,
  isHtmlType,
  isRulesFile,
  MAX_UNPACKED_BYTES,
  PLAN_LIMITS,
  randomSiteName,
  type Plan,
  type RevisionExtras,
} from '../rules/index.js';
import { hashToken, type FileEntry, type ManifestPart, type ManifestRecord } from '../store/index.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { deployDecisions, type Decision } from './deploy-decision.js';
import { checkTier, compactEntry, sitesLimitError } from './limits.js';
import { entryAt, manifestOperations, reusableContents, type ManifestInput, type ManifestView } from './manifest.js';
import { previewLinks } from './preview-links.js';
import { claimKeyFor } from './sealed-token.js';
import type { DeployView as DeployShape } from '../contract/index.js';
import { deployRevisionView, deploySiteView, iso, warningsView } from './views.js';

export interface DeployRequest {
  caller: Caller;
  /** The caller's network (IPv4 /24, IPv6 /64), for the anonymous caps. */
  network: string;
  /** `json`: the body is SPEC 4.2's inline files; `archive`: tar, tgz or zip, told apart by bytes. */
  bodyKind: 'archive' | 'json';
  /**
   * The site and base revision named outside the body (`?site=`, `X-Base-Revision`): archives name
   * them only there; JSON bodies name them inside, and may name them here instead.
   */
  site?: string;
  baseRevision?: string;
  /** Finishes a digest deploy: the body holds only the contents its manifest listed as missing. */
  manifest?: string;
  /** An anonymous manifest's secret (`X-Manifest-Secret`), which every request for it must send. */
  manifestSecret?: string;
  /** `false` (query `publish=false`): store a draft, do not make it live. JSON bodies may say so inside. */
  publish?: boolean;
}

/**
 * The request body: spooled to a file the caller deletes afterwards, or (a body small enough to
 * be received into memory) its bytes, which the ingest worker takes over.
 */
export type DeployBody = {
  bytes: number;
  /** How long the body took to arrive, for the timing log. */
  uploadMs?: number;
} & ({ spoolPath: string; data?: undefined } | { data: Uint8Array; spoolPath?: undefined });

/** The SPEC 4.1 response body. */
export type DeployView = DeployShape;

export type DeployOutcome =
  /** Published: the new revision is live. */
  | { status?: 201; view: DeployView; revisionId: string }
  /** A part of a digest deploy's upload arrived; contents are still missing, nothing is live yet. */
  | { status: 202; view: ManifestView; revisionId?: undefined };

/** A deploy admitted before its body is read: `finish` unpacks, checks and publishes it. */
export interface PendingDeploy {
  finish(body: DeployBody, signal?: AbortSignal): Promise<DeployOutcome>;
}

type Published = Extract<DeployOutcome, { revisionId: string }>;

export interface DeployOperations {
  /**
   * Admits a deploy: decides what an archive deploy will do (create or update, 401/403/404/409
   * before any byte is read) and counts it against the anonymous caps. Nothing is published
   * until `finish`'s single store transaction, so a refused deploy changes nothing.
   */
  begin(request: DeployRequest): Promise<PendingDeploy>;
  /** First half of a digest deploy: the whole site by hash; answers what must be uploaded. */
  manifest(caller: Caller, network: string, input: ManifestInput): Promise<ManifestView>;
  /** What a digest deploy's upload still lacks (`GET /v1/deploy/manifest/<id>`); `secret` as in `DeployRequest`. */
  manifestStatus(caller: Caller, id: string, secret?: string): ManifestView;
  /** Gives up a digest deploy: its uploaded parts are collected at the next sweep. */
  abandonManifest(caller: Caller, id: string, secret?: string): Promise<void>;
}

const NAME_ATTEMPTS = 8;

/** `POST /v1/deploy` (SPEC 4.1, 4.2) and the MCP `deploy_site` tool. */
export function deployOperations(deps: OperationsDeps): DeployOperations {
  const { store, config, log } = deps;
  const links = previewLinks(deps);
  const { decide, conflict, takeAnonymousTokens } = deployDecisions(deps);
  const manifests = manifestOperations(deps);

  async function begin(request: DeployRequest): Promise<PendingDeploy> {
    // A deploy unpacks, checks and uploads before its one write: while the cluster's records
    // database is known not to answer, it is refused at once rather than after all that.
    if (store.cluster !== undefined && !store.cluster.answering()) throw recordsSilentError();
    if (request.manifest !== undefined) return beginFromManifest(request, request.manifest);
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
        const result = await unpack(caller, body, request.bodyKind, signal);
        const unpacked = performance.now();
        if (!result.ok) {
          throw refusalError(result.error);
        }
        const fields = result.json ?? {};
        const decision = early ?? (await decideJson(caller, withOutsideNames(fields, request), network));
        const files = assemble(decision, result, fields.patch === true ? (fields.deleted ?? []) : undefined);
        const plan = decision.mode === 'create' ? decision.plan : decision.site.plan;
        const reused = contentsToRejudge(decision.mode === 'update' ? decision.base : undefined, result.references ?? []);
        const extras = await analyze(files, signal, { contents: reused, plan });
        const analyzed = performance.now();
        const live = request.publish !== false && fields.publish !== false;
        const outcome = await publish(decision, files, result.skipped, fields.patch === true, extras, live);
        const ms = (from: number, to: number): number => Math.round(to - from);
        log.info(
          {
            revision: outcome.revisionId,
            bytes: body.bytes,
            files: files.size,
            uploadMs: body.uploadMs,
            unpackMs: ms(started, unpacked),
            analyzeMs: ms(unpacked, analyzed),
            commitMs: ms(analyzed, performance.now()),
          },
          'deploy.timing',
        );
        compressAfterPublish(outcome.revisionId, result.pendingVariants);
        return outcome;
      },
    };
  }

  /**
   * A part of a digest deploy's upload (SPEC 4.1 with `?manifest=`): any number of parts, each an
   * archive or JSON body within the request limit, in any order. Access and the base revision are
   * checked again for each part (a 409 comes before the part is read); the anonymous caps counted
   * the manifest already. The part that brings the last missing content publishes the site, as one
   * revision, with every check of a deploy applied to the whole; the others answer 202 with what
   * is still missing. A secret in any part refuses the whole deploy for good.
   */
  function beginFromManifest(request: DeployRequest, id: string): PendingDeploy {
    const { record, decision } = manifests.load(request.caller, id, request.manifestSecret);
    return {
      async finish(body, signal) {
        const started = performance.now();
        let parts: Map<string, ManifestPart>;
        let uploaded = 0;
        if (body.bytes > 0) {
          const result = await unpack(request.caller, body, request.bodyKind, signal, publishedPaths(record));
          if (!result.ok) {
            const error = refusalError(result.error);
            // Content with a secret keeps its sha256, so the manifest could never be finished.
            if (error.code === 'blocked_secret') await manifests.refuse(id, error);
            throw error;
          }
          const json = result.json ?? {};
          if (json.site !== undefined || json.base_revision !== undefined || json.patch !== undefined || json.deleted !== undefined) {
            throw new ServiceError('bad_request', 'With a manifest, the site and base revision come from the manifest; send only "files".');
          }
          if (json.manifest !== undefined && json.manifest !== id) {
            throw new ServiceError('bad_request', `The body names manifest ${json.manifest}, but the request is for ${id}.`);
          }
          if (result.references !== undefined) {
            throw new ServiceError('bad_request', 'The upload of a manifest carries contents only; the manifest already names the rest by sha256.');
          }
          const compress = new Set(result.pendingVariants);
          uploaded = result.files.length;
          parts = await manifests.receive(
            id,
            record,
            result.files.map((file) => ({ path: file.path, sha256: file.sha256, size: file.size, compress: compress.has(file.sha256) })),
          );
          // With a blob bucket, each part is in it as soon as it is recorded: any node may publish.
          await store.blobs.publish(result.files.map((file) => file.sha256));
        } else {
          parts = store.listManifestParts(id);
        }
        const remaining = manifests.remaining(record, parts);
        if (remaining.length > 0) {
          if (body.bytes === 0) manifests.assemble(record, parts); // throws: says what is missing
          log.info({ manifest: id, uploaded, remaining: remaining.length, ms: Math.round(performance.now() - started) }, 'deploy.part');
          return { status: 202, view: manifests.statusView(id, record, parts) };
        }
        const files = manifests.assemble(record, parts);
        checkTier(files, PLAN_LIMITS[record.plan]);
        // Uploaded contents were judged as every path of the manifest (`publishedAs`); reused ones
        // are judged here. A bad _redirects or _headers leaves the manifest for a corrected upload,
        // like any refusal here; a secret in reused content refuses it for good, like one in a part.
        const uploadedContents = new Set(record.missing);
        const reused = contentsToRejudge(
          record.baseRevision,
          record.files.filter((file) => !uploadedContents.has(file.sha256)),
        );
        let extras: RevisionExtras;
        try {
          extras = await analyze(files, signal, { contents: reused, plan: record.plan });
        } catch (err) {
          if ((err as { code?: unknown }).code === 'blocked_secret') await manifests.refuse(id, err as ServiceError);
          throw err;
        }
        // Until here a refused part leaves the manifest for a corrected one; from here it is spent.
        await manifests.take(id);
        let outcome: Published;
        try {
          outcome = await publish(decision, files, record.skipped, false, extras, request.publish !== false);
        } catch (err) {
          await manifests.release(id, err);
          throw err;
        }
        await manifests.release(id);
        log.info(
          { revision: outcome.revisionId, uploaded, parts: parts.size, files: files.size, ms: Math.round(performance.now() - started) },
          'deploy.digest',
        );
        compressAfterPublish(
          outcome.revisionId,
          [...parts].filter(([, part]) => part.compress).map(([sha256]) => sha256),
        );
        return outcome;
      },
    };
  }

  /** A JSON body names its site and base inside; decided once the worker has parsed it. */
  async function decideJson(caller: Caller, fields: JsonDeployFields, network: string): Promise<Decision> {
    if (fields.manifest !== undefined) {
      throw new ServiceError('bad_request', '"manifest" in the body needs the request to name it too.', {
        agentMessage: `Send a part of a digest deploy to POST /v1/deploy?manifest=${fields.manifest} (over MCP, deploy_site with "manifest" does that).`,
      });
    }
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

  /**
   * Unpacks and checks a body in the pool. `publishedAs`: the body is a manifest's part, and
   * these are the paths each content it may carry is published at.
   */
  async function unpack(
    caller: Caller,
    body: DeployBody,
    bodyKind: DeployRequest['bodyKind'],
    signal?: AbortSignal,
    publishedAs?: Record<string, string[]>,
  ): Promise<UnpackResult> {
    // The caller's tier bounds the work (a zip bomb stops at it); the target site's tier is
    // checked on the assembled site afterwards.
    const anonymous = caller.kind === 'anonymous' || caller.kind === 'site_token';
    const tier = PLAN_LIMITS[caller.kind === 'account' ? caller.account.plan : 'anonymous'];
    return deps.ingest.unpack(
      {
        ...(body.data !== undefined ? { body: body.data } : { spoolPath: body.spoolPath }),
        dataDir: config.dataDir,
        bodyKind,
        limits: { maxFiles: tier.maxFiles, maxFileBytes: tier.maxFileBytes, maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES) },
        blockExecutables: anonymous,
        ...(publishedAs !== undefined ? { partial: true, publishedAs } : {}),
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
    for (const [path, entry] of resolveReferences(decision, result.references ?? [])) files.set(path, entry);

    checkTier(files, PLAN_LIMITS[decision.mode === 'create' ? decision.plan : decision.site.plan]);
    if (!files.has('index.html')) {
      throw new ServiceError('bad_request', 'The site has no index.html at its root.', {
        agentMessage: 'Every site needs an index.html at the top level of the upload (or inside its single top-level folder).',
      });
    }
    return files;
  }

  /**
   * Files sent by size and sha256 only (a one-request digest deploy): each must be content of
   * this site's own recent revisions, so a reference never confirms what others have stored.
   */
  function resolveReferences(decision: Decision, references: readonly FileReference[]): Map<string, FileEntry> {
    const entries = new Map<string, FileEntry>();
    if (references.length === 0) return entries;
    const known = decision.mode === 'update' ? reusableContents(store, decision.site, deps.now()) : {};
    const missing: string[] = [];
    for (const reference of references) {
      const had = known[reference.sha256];
      if (!had) {
        missing.push(reference.path);
        continue;
      }
      if (had.size !== reference.size) {
        throw new ServiceError('bad_request', `${reference.path}: size ${reference.size} does not match the content with that sha256 (${had.size} bytes).`, {
          details: { file: reference.path },
        });
      }
      entries.set(reference.path, entryAt(reference.path, reference.sha256, had));
    }
    if (missing.length > 0) {
      const shown = missing.slice(0, 10).join(', ');
      throw new ServiceError('bad_request', `${missing.length} files were sent by sha256 only, but this site has no such content, for example ${missing[0]}.`, {
        agentMessage: `Send these files with their content instead of sha256 and size: ${shown}${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}. Only contents of this site's own recent revisions can be sent by sha256.`,
        details: { file: missing[0], missing: missing.slice(0, 100) },
      });
    }
    return entries;
  }

  /**
   * Reused contents (sent by sha256, or kept by a manifest) that the new revision publishes at a
   * path the leak guard reads differently from its name when it was checked, a `.br` path: each
   * is read again as those paths before anything is published. One the base revision already has
   * at that very path was judged as it then, so a redeploy of unchanged files reads nothing again.
   */
  function contentsToRejudge(base: string | undefined, files: Iterable<{ path: string; sha256: string }>): RejudgedContent[] {
    const paths = new Map<string, string[]>();
    for (const file of files) {
      if (!isBrotliName(file.path)) continue;
      if (base !== undefined && store.getFile(base, file.path)?.sha256 === file.sha256) continue;
      const list = paths.get(file.sha256) ?? [];
      paths.set(file.sha256, list);
      list.push(file.path);
    }
    return Array.from(paths, ([sha256, list]) => ({ sha256, paths: list }));
  }

  /**
   * The assembled site's `_redirects` and `_headers` compiled (a bad line refuses the deploy
   * with 400) and its links checked, in an ingest worker. Its pages and rules files are read
   * from the blob store, so a patch or digest deploy is judged as the whole resulting site.
   * Reused contents in `rejudge` pass the leak guard first, within the target plan's limits.
   */
  async function analyze(files: Map<string, FileEntry>, signal?: AbortSignal, rejudge?: { contents: RejudgedContent[]; plan: Plan }): Promise<RevisionExtras> {
    const site: SiteFile[] = [];
    const read: string[] = rejudge?.contents.map((content) => content.sha256) ?? [];
    for (const [path, entry] of files) {
      site.push({ path, sha256: entry.sha256, size: entry.size, type: entry.type });
      if (isRulesFile(path) || isHtmlType(entry.type) || entry.type.startsWith('text/css')) read.push(entry.sha256);
    }
    site.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    // With a bucket, content a patch keeps may not be on this node yet.
    await Promise.all([...new Set(read)].map((sha256) => store.blobs.fetch(sha256)));
    const { siteRules } = config.deploy;
    const ruleLimits = (maxEntries: number, maxLineChars: number) => ({
      maxEntries,
      maxLineChars,
      maxFileBytes: siteRules.maxRulesFileBytes,
      maxPatternSegments: siteRules.maxPatternSegments,
    });
    const limits = {
      redirects: { ...ruleLimits(siteRules.maxRedirectRules, siteRules.maxRedirectLineChars), maxConditions: siteRules.maxRedirectConditions },
      headers: { ...ruleLimits(siteRules.maxHeaderBlocks, siteRules.maxHeaderLineChars), maxHeaderLines: siteRules.maxHeaderLines },
      maxWarnings: siteRules.maxLinkWarnings,
    };
    const shares = linkCheckShares(site, deps.ingest.threads);
    const tier = rejudge && PLAN_LIMITS[rejudge.plan];
    // One share is enough to read the reused contents again.
    const rejudged =
      rejudge && tier && rejudge.contents.length > 0
        ? {
            rejudge: { contents: rejudge.contents, limits: { maxFileBytes: tier.maxFileBytes, maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES) } },
          }
        : {};
    const results = await Promise.all(
      shares.map((checkPaths, index) =>
        deps.ingest.analyze({ dataDir: config.dataDir, files: site, limits, ...(checkPaths ? { checkPaths } : {}), ...(index === 0 ? rejudged : {}) }, signal),
      ),
    );
    // Every share compiled the same rules files, so a refusal is the same in each (a secret in
    // reused content is found by the first share alone, and it is the first looked at).
    const refused = results.find((result) => !result.ok);
    if (refused !== undefined && !refused.ok) {
      throw refusalError(refused.error);
    }
    const extras = results.map((result) => (result.ok ? result.extras : {}));
    const merged: RevisionExtras = { ...extras[0] };
    delete merged.warnings;
    delete merged.warningsTotal;
    // Shares are consecutive runs of the sorted paths: their warnings joined are in path order.
    const warnings = extras.flatMap((share) => share.warnings ?? []);
    const total = extras.reduce((sum, share) => sum + (share.warningsTotal ?? 0), 0);
    if (total > 0) {
      merged.warnings = siteRules.maxLinkWarnings === 0 ? warnings : warnings.slice(0, siteRules.maxLinkWarnings);
      merged.warningsTotal = total;
    }
    return merged;
  }

  /**
   * The site is live before its text files have compressed variants: they are made by the pool
   * right after, recorded on the revision, and picked up by serving threads then.
   */
  function compressAfterPublish(revisionId: string, sha256s: string[]): void {
    if (sha256s.length === 0) return;
    const started = performance.now();
    const work = deps.ingest
      .compress({ dataDir: config.dataDir, sha256s })
      .then((made) => store.blobs.publish(Object.keys(made)).then(() => store.recordEncodings(revisionId, new Map(Object.entries(made)))))
      .then(
        (files) => log.info({ revision: revisionId, files, compressMs: Math.round(performance.now() - started) }, 'deploy.compressed'),
        (err: unknown) => log.warn({ err, revision: revisionId }, 'deploy.compress_failed'),
      );
    deps.followUps.track(work);
  }

  /** Commits the revision (creating the site when asked); `live: false` stores a draft. */
  async function publish(
    decision: Decision,
    files: Map<string, FileEntry>,
    skipped: string[],
    patch: boolean,
    extras: RevisionExtras,
    live = true,
  ): Promise<Published> {
    if (!live && decision.mode === 'create') {
      throw new ServiceError('bad_request', 'A draft (publish: false) is a new revision of an existing site; a new site is published live.', {
        agentMessage: 'Deploy the first version without publish=false (it goes live), then send drafts with "site", "base_revision" and publish=false.',
      });
    }
    const checked = warningsView(extras);
    const note = skippedNote(skipped) + warningsNote(extras);
    // With a blob bucket, every blob the revision references is in it before the commit.
    await store.blobs.publish(Array.from(files.values(), (entry) => entry.sha256));
    if (decision.mode === 'update') {
      const result = await store.commitRevision({
        site: decision.site.name,
        baseRevision: decision.base,
        files,
        kind: patch ? 'patch' : 'deploy',
        createdBy: decision.createdBy,
        extras,
        ...(live ? {} : { publish: false }),
      });
      if (!result.ok) {
        if (result.reason === 'conflict') throw conflict(store.getSite(decision.site.name) ?? decision.site);
        throw new ServiceError('not_found', `There is no site named ${decision.site.name}.`);
      }
      log.info({ site: result.site.name, revision: result.revision.id, files: files.size, kind: result.revision.kind }, 'deploy.published');
      const url = siteUrl(config.publicUrls, result.site.name);
      // A draft's preview_url is a preview link while the site keeps its previews to members.
      const revision = deployRevisionView(result.revision, result.site, config.publicUrls, live ? undefined : await links.of(result.site));
      const view: DeployView = {
        site: deploySiteView(result.site, config.publicUrls),
        revision,
        skipped,
        ...checked,
        agent_message: live
          ? `Published revision ${result.revision.number} of ${url} (${files.size} ${files.size === 1 ? 'file' : 'files'}).${note}`
          : `Stored draft revision ${result.revision.number} of ${url} (${files.size} ${files.size === 1 ? 'file' : 'files'}); it is not live. Check it at ${revision.preview_url} , then make it live with POST /v1/sites/${result.site.name}/promote {"revision": "${result.revision.id}", "base_revision": "${result.site.liveRevision}"}.${note}`,
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
          ...(decision.maxOwnedSites !== undefined ? { maxOwnedSites: decision.maxOwnedSites } : {}),
          expiresAt,
          siteTokenHash: siteToken && hashToken(siteToken),
          claimTokenHash: claimToken && hashToken(claimToken),
          claimKey: siteToken && claimKeyFor(siteToken),
        },
        baseRevision: null,
        files,
        kind: 'deploy',
        createdBy: decision.createdBy,
        extras,
      });
      if (!result.ok && result.reason === 'over_limit') {
        const account = store.getAccount(decision.accountId!)!;
        throw sitesLimitError(config, account, store.countOwnedSites(account.id), 'create');
      }
      if (!result.ok) continue; // `name_taken`: another deploy took the name
      log.info({ site: name, revision: result.revision.id, files: files.size, anonymous }, 'deploy.created');
      const url = siteUrl(config.publicUrls, name);
      const base = { site: deploySiteView(result.site, config.publicUrls), revision: deployRevisionView(result.revision, result.site, config.publicUrls) };
      if (anonymous) {
        const claimUrl = `${config.publicUrls.app}/claim/${claimToken}`;
        const view: DeployView = {
          ...base,
          site_token: siteToken,
          claim_url: claimUrl,
          skipped,
          ...checked,
          agent_message:
            `Your site is live at ${url} . It is temporary: it will be deleted on ${iso(expiresAt!)} (72 hours from now) unless you claim it. ` +
            `To keep it, open ${claimUrl} and sign in. To update it later, keep the site_token (save it with the site name in .service.json, and keep that file out of version control).` +
            note,
        };
        return { view, revisionId: result.revision.id };
      }
      return { view: { ...base, skipped, ...checked, agent_message: `Your site is live at ${url} .${note}` }, revisionId: result.revision.id };
    }
    throw new Error('could not find an unused site name');
  }

  return {
    begin,
    manifest: (caller, network, input) => manifests.create(caller, network, input),
    manifestStatus: (caller, id, secret) => manifests.status(caller, id, secret),
    abandonManifest: (caller, id, secret) => manifests.abandon(caller, id, secret),
  };
}

/** Every path of the manifest for each content still to upload: a part's bytes are judged as these. */
function publishedPaths(record: ManifestRecord): Record<string, string[]> {
  const missing = new Set(record.missing);
  const paths: Record<string, string[]> = {};
  for (const file of record.files) if (missing.has(file.sha256)) (paths[file.sha256] ??= []).push(file.path);
  return paths;
}

function skippedNote(skipped: readonly string[]): string {
  if (skipped.length === 0) return '';
  const shown = skipped.slice(0, 5).join(', ');
  return ` Left out on purpose (never published): ${shown}${skipped.length > 5 ? ` and ${skipped.length - 5} more` : ''}.`;
}

function warningsNote(extras: RevisionExtras): string {
  const total = extras.warningsTotal ?? 0;
  const first = extras.warnings?.[0];
  if (total === 0 || first === undefined) return '';
  const what = total === 1 ? '1 link or asset reference leads' : `${total} link or asset references lead`;
  return ` ${what} nowhere on the site (published all the same), for example ${first.ref} in ${first.file} line ${first.line}; "warnings" lists them. Fix the references or add the missing files, then deploy again.`;
}

// Below this many bytes of pages and style sheets one worker checks the links alone: a share of
// its own would cost more in the hand-over than it saves.
const SHARE_MIN_BYTES = 1024 * 1024;

/**
 * The pages and style sheets of a large site, cut into consecutive runs of about equal bytes, one
 * per ingest thread, so that their links are checked side by side; `[undefined]` (one task, all
 * of them) for a small site or a single thread.
 */
export function linkCheckShares(site: readonly SiteFile[], threads: number): Array<string[] | undefined> {
  const checked = site.filter((file) => isHtmlType(file.type) || file.type.startsWith('text/css'));
  const bytes = checked.reduce((sum, file) => sum + file.size, 0);
  const count = Math.min(threads, Math.floor(bytes / SHARE_MIN_BYTES), checked.length);
  if (count <= 1) return [undefined];
  const shares: string[][] = [];
  let current: string[] = [];
  let taken = 0;
  for (const file of checked) {
    current.push(file.path);
    taken += file.size;
    if (shares.length < count - 1 && taken >= (bytes * (shares.length + 1)) / count) {
      shares.push(current);
      current = [];
    }
  }
  if (current.length > 0) shares.push(current);
  return shares;
}

/**
 * A JSON body's site and base revision, taken from outside the body (`?site=`, `X-Base-Revision`)
 * where the body leaves them out. Left out, a `?site=` was ignored and the deploy created a new
 * site; named twice, the two must agree.
 */
function withOutsideNames(fields: JsonDeployFields, outside: { site?: string; baseRevision?: string }): JsonDeployFields {
  const pick = (inside: string | undefined, given: string | undefined, bodyName: string, outsideName: string): string | undefined => {
    if (inside !== undefined && given !== undefined && inside !== given) {
      throw new ServiceError('bad_request', `The body's "${bodyName}" is ${inside}, but ${outsideName} is ${given}.`, {
        agentMessage: `Name the ${bodyName === 'site' ? 'site' : 'base revision'} once: in the JSON body as "${bodyName}", or as ${outsideName}.`,
      });
    }
    return inside ?? given;
  };
  const site = pick(fields.site, outside.site, 'site', '?site=');
  const baseRevision = pick(fields.base_revision, outside.baseRevision, 'base_revision', 'the X-Base-Revision header');
  return { ...fields, ...(site !== undefined ? { site } : {}), ...(baseRevision !== undefined ? { base_revision: baseRevision } : {}) };
}
