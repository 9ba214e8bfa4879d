import { performance } from 'node:perf_hooks';
import { MessageChannel } from 'node:worker_threads';
import type { DeployView as DeployShape } from '../contract/index.js';
import { recordsSilentError, refusalError, ServiceError } from '../errors.js';
import { copiedJournal, type AnnouncementMessage, type ByteRange, type JsonDeployFields, type UnpackResult } from '../ingest/index.js';
import { MAX_UNPACKED_BYTES, PLAN_LIMITS, type RevisionExtras } from '../rules/index.js';
import type { BlobPublisher, ManifestPart, ManifestRecord, SiteRecord } from '../store/index.js';
import type { Caller } from './callers.js';
import { analysisLimits, analyzedInUnpack, analyzeSite } from './deploy-analyze.js';
import { assembleFiles, contentsToRejudge } from './deploy-assemble.js';
import { decideDeploy, takeAnonymousTokens, type Decision } from './deploy-decision.js';
import { compressAfterPublish, publishRevision, type Published } from './deploy-publish.js';
import type { OperationsDeps } from './deps.js';
import { resolveSite } from './authorization.js';
import { actorOf, recordEvent } from './events.js';
import { checkTier } from './limits.js';
import {
  abandonManifest,
  assembleManifest,
  createManifest,
  keepPublishedManifest,
  loadManifest,
  manifestStatus,
  manifestStatusView,
  publishedManifest,
  receiveParts,
  refuseManifest,
  releaseManifest,
  remainingContents,
  takeManifest,
  type ManifestInput,
  type ManifestView,
} from './manifest.js';

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
  /** MCP: the arguments may carry `idempotency_key`, which the tool honoured; REST refuses it in a body (it is a header there). */
  idempotencyKeyInBody?: boolean;
}

/**
 * The request body: spooled to a file the caller deletes afterwards (`range`: only those bytes of
 * it, as for a large MCP call's arguments), or (a body small enough to be received into memory)
 * its bytes, which the ingest worker takes over.
 */
export type DeployBody = {
  bytes: number;
  /** How long the body took to arrive, for the timing log. */
  uploadMs?: number;
} & ({ spoolPath: string; range?: ByteRange; data?: undefined } | { data: Uint8Array; spoolPath?: undefined });

/** The SPEC 4.1 response body. */
export type DeployView = DeployShape;

export type DeployOutcome =
  /** Published: the new revision is live (or stored as a draft). */
  | Published
  /** A part of a digest deploy's upload arrived; contents are still missing, nothing is live yet. */
  | { status: 202; view: ManifestView; revisionId?: undefined; replayed?: undefined };

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
  /** First half of a digest deploy: the whole site by hash; answers what must be uploaded. */
  manifest(caller: Caller, network: string, input: ManifestInput): Promise<ManifestView>;
  /**
   * What a digest deploy's upload still lacks (`GET /v1/deploy/manifest/<id>`); `secret` as in
   * `DeployRequest`. Once published, for a day: what it published.
   */
  manifestStatus(caller: Caller, id: string, secret?: string): ManifestView | DeployView;
  /** Gives up a digest deploy: its uploaded parts are collected at the next sweep. */
  abandonManifest(caller: Caller, id: string, secret?: string): Promise<void>;
}

/** `POST /v1/deploy` (SPEC 4.1, 4.2) and the MCP `deploy_site` tool. */
export function deployOperations(deps: OperationsDeps): DeployOperations {
  return {
    begin: (request) => beginDeploy(deps, request),
    manifest: (caller, network, input) => createManifest(deps, caller, network, input),
    manifestStatus: (caller, id, secret) => manifestStatus(deps, caller, id, secret),
    abandonManifest: (caller, id, secret) => abandonManifest(deps, caller, id, secret),
  };
}

/**
 * Admits a deploy, then (in `finish`) runs its steps in order: unpack the body in the pool,
 * decide what it does, assemble the site, analyse it, publish it, compress after.
 */
export async function beginDeploy(deps: OperationsDeps, request: DeployRequest): Promise<PendingDeploy> {
  const { store, log } = deps;
  // A deploy unpacks, checks and uploads before its one write: while the cluster's records
  // database is known not to answer, it is refused at once rather than after all that.
  if (store.cluster !== undefined && !store.cluster.answering()) throw recordsSilentError();
  if (request.manifest !== undefined) return beginFromManifest(deps, request, request.manifest);
  const { caller, network } = request;
  // Archives name their site outside the body: decide before reading it.
  const early = request.bodyKind === 'archive' ? await decideNoting(deps, caller, request.site, request.baseRevision) : undefined;
  await takeAnonymousTokens(deps, caller, network, { deploy: true, site: early?.mode === 'create' });

  let decided: Decision | undefined = early;
  const pending: PendingDeploy = {
    async finish(body, signal) {
      if (body.bytes === 0) {
        throw new ServiceError('bad_request', 'The request body is empty.', {
          agentMessage: 'Send the site as a .tar.gz, .tar or .zip archive in the body, or as JSON {"files": [...]} with Content-Type: application/json.',
        });
      }
      const started = performance.now();
      // With a bucket, each blob goes up as soon as the worker has stored it (a refused deploy
      // leaves what went up unreferenced, for garbage collection); the commit waits for them all.
      // Its packs' rows are written by the commit (`PublisherOptions.rowsToCommit`).
      const publisher = store.blobs.publisher({ rowsToCommit: true });
      const bucketed = store.blobs.bucket !== undefined;
      const result = await unpackBody(deps, caller, body, request.bodyKind, signal, undefined, bucketed ? publisher : undefined, {
        threads: deps.ingest.threads,
        journalMaxBytes: journalBound(deps, publisher),
      });
      const unpacked = performance.now();
      if (!result.ok) {
        throw refusalError(result.error);
      }
      const fields = result.json ?? {};
      refuseKeyInBody(request, fields);
      const decision = early ?? (await decideJson(deps, caller, withOutsideNames(fields, request), network));
      decided = decision;
      const files = assembleFiles(deps, decision, result, fields.patch === true ? (fields.deleted ?? []) : undefined);
      const plan = decision.mode === 'create' ? decision.plan : decision.site.plan;
      const reused = contentsToRejudge(store, decision.mode === 'update' ? decision.base : undefined, result.references ?? []);
      // The rest (blobs the site already had, and any announcement still on its way) go up while
      // the site is analysed.
      const uploads = publisher.finish(Array.from(files.values(), (entry) => entry.sha256));
      uploads.catch(() => undefined);
      // A whole small site was analysed by the worker as it unpacked it (the same site: no patch,
      // no references); otherwise by the pool now.
      const whole = result.analysis !== undefined && fields.patch !== true && result.references === undefined;
      const extras = whole ? analyzedInUnpack(result.analysis!) : await analyzeSite(deps, files, signal, { contents: reused, plan });
      const analyzed = performance.now();
      const live = request.publish !== false && fields.publish !== false;
      // With a bucket, the journal carries a small site's bytes only to its files, written after
      // the answer (`filesDeferred`): the bucket holds them before it, and the commit does not
      // carry them. Until they are written this thread reads them from memory, other threads
      // and nodes from the bucket.
      const release = bucketed && result.filesDeferred !== undefined ? store.blobs.holdUnwritten?.(result.journal!) : undefined;
      let outcome: Published;
      try {
        outcome = await publishRevision(deps, {
          decision,
          files,
          skipped: result.skipped,
          patch: fields.patch === true,
          extras,
          live,
          actor: actorOf(caller, network),
          uploads,
          ...(publisher.places !== undefined ? { places: publisher.places() } : {}),
          ...(publisher.rowsForCommit !== undefined ? { packRows: () => publisher.rowsForCommit!() } : {}),
          ...(result.journal !== undefined && !bucketed ? { journal: result.journal } : {}),
        });
      } catch (err) {
        release?.();
        throw err;
      }
      publisher.rowsCommitted?.();
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
          // Blobs whose bytes the commit carried instead of a sync of their files first, or (with a
          // bucket) whose files are written after the answer.
          ...(result.journal !== undefined && !bucketed ? { journaled: result.journal.length } : {}),
          ...(release !== undefined ? { filesAfterAnswer: result.filesDeferred } : {}),
        },
        'deploy.timing',
      );
      // The variants of small blobs go to the bucket now; until they are there, a node asked
      // for one makes it from its blob.
      deps.followUps.track(publisher.afterAnswer().catch((err: unknown) => log.warn({ err, revision: outcome.revisionId }, 'deploy.variants_upload_failed')));
      // A small site's files were not written before the answer: the compressor writes them first
      // (readers meanwhile take them from the journal, or with a bucket from memory), and the
      // settle then syncs them (with a bucket, the compressor's own sync does).
      const sizes = new Map(result.files.map((file) => [file.sha256, file.size]));
      if (release !== undefined) {
        // The compressor takes the buffer it is given (pool.ts) while this thread reads its own
        // meanwhile: the copy is made once the answer is on its way, not before it.
        const journal = result.journal!;
        const deferred = new Promise<void>((resolve) =>
          setImmediate(() => {
            const compressed = compressAfterPublish(deps, outcome.revisionId, result.pendingVariants, sizes, copiedJournal(journal));
            resolve((compressed ?? Promise.resolve()).finally(release));
          }),
        );
        deps.followUps.track(deferred);
        return outcome;
      }
      const compressed = compressAfterPublish(deps, outcome.revisionId, result.pendingVariants, sizes, result.filesDeferred ? result.journal : undefined);
      if (result.journal !== undefined && !bucketed) settleJournalAfter(deps, compressed);
      return outcome;
    },
  };
  return {
    async finish(body, signal) {
      try {
        return await pending.finish(body, signal);
      } catch (err) {
        if (decided?.mode === 'update') await noteRefusedDeploy(deps, caller, decided.site, err);
        throw err;
      }
    },
  };
}

/**
 * `decideDeploy`, with an update refused after its caller was let in (no base revision, a stale
 * one) noted in the site's log like a refusal of its content.
 */
async function decideNoting(deps: OperationsDeps, caller: Caller, siteName: string | undefined, base: string | undefined): Promise<Decision> {
  try {
    return decideDeploy(deps, caller, siteName, base);
  } catch (err) {
    if (siteName === undefined || siteName === '' || !REFUSALS_LOGGED.has(String((err as { code?: unknown }).code))) throw err;
    let site: SiteRecord | undefined;
    try {
      site = resolveSite(deps.store, caller, siteName, 'deploy', deps.now()).site;
    } catch {
      // Not let in: nothing of this site's is the caller's to note.
    }
    if (site) await noteRefusedDeploy(deps, caller, site, err);
    throw err;
  }
}

/** What a refused update of a site records in its log (and tells its `deploy.failed` webhooks). */
const REFUSALS_LOGGED: ReadonlySet<string> = new Set(['bad_request', 'too_large', 'blocked_secret', 'conflict']);

async function noteRefusedDeploy(deps: OperationsDeps, caller: Caller, site: SiteRecord, err: unknown): Promise<void> {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !REFUSALS_LOGGED.has(code)) return;
  const details = (err as ServiceError).details as Record<string, unknown> | undefined;
  await recordEvent(deps, actorOf(caller), {
    kind: 'deploy.failed',
    site,
    details: {
      code,
      message: (err as Error).message.slice(0, 500),
      // Where a secret was found, never the secret itself.
      ...(typeof details?.file === 'string' ? { file: details.file } : {}),
      ...(typeof details?.kind === 'string' ? { secret_kind: details.kind } : {}),
    },
  });
}

/**
 * A part of a digest deploy's upload (SPEC 4.1 with `?manifest=`): any number of parts, each an
 * archive or JSON body within the request limit, in any order. Access and the base revision are
 * checked again for each part (a 409 comes before the part is read); the anonymous caps counted
 * the manifest already. The part that brings the last missing content publishes the site, as one
 * revision, with every check of a deploy applied to the whole; the others answer 202 with what
 * is still missing. A secret in any part refuses the whole deploy for good.
 */
function beginFromManifest(deps: OperationsDeps, request: DeployRequest, id: string): PendingDeploy {
  const { store, log } = deps;
  // The part that published it, sent again (its answer was lost): the same answer, nothing redone.
  const published = publishedManifest(deps, request.caller, id, request.manifestSecret);
  if (published) {
    const view = published.view as DeployView;
    log.info({ manifest: id, revision: view.revision.id }, 'deploy.part_replayed');
    return { finish: async () => ({ status: 201, view, revisionId: view.revision.id, replayed: true }) };
  }
  const { record, decision } = loadManifest(deps, request.caller, id, request.manifestSecret);
  return {
    async finish(body, signal) {
      const started = performance.now();
      let parts: Map<string, ManifestPart>;
      let uploaded = 0;
      if (body.bytes > 0) {
        const result = await unpackBody(deps, request.caller, body, request.bodyKind, signal, publishedPaths(record));
        if (!result.ok) {
          const error = refusalError(result.error);
          // Content with a secret keeps its sha256, so the manifest could never be finished.
          if (error.code === 'blocked_secret') await refuseManifest(deps, id, error);
          throw error;
        }
        const json = result.json ?? {};
        refuseKeyInBody(request, json);
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
        parts = await receiveParts(
          deps,
          id,
          record,
          result.files.map((file) => ({ path: file.path, sha256: file.sha256, size: file.size, compress: compress.has(file.sha256) })),
        );
        // With a blob bucket, each part is in it as soon as it is recorded: any node may publish.
        await store.blobs.publish(result.files.map((file) => file.sha256));
      } else {
        parts = store.listManifestParts(id);
      }
      const remaining = remainingContents(record, parts);
      if (remaining.length > 0) {
        if (body.bytes === 0) assembleManifest(record, parts); // throws: says what is missing
        log.info({ manifest: id, uploaded, remaining: remaining.length, ms: Math.round(performance.now() - started) }, 'deploy.part');
        return { status: 202, view: manifestStatusView(deps, id, record, parts) };
      }
      const files = assembleManifest(record, parts);
      checkTier(files, PLAN_LIMITS[record.plan]);
      // Uploaded contents were judged as every path of the manifest (`publishedAs`); reused ones
      // are judged here. A bad _redirects or _headers leaves the manifest for a corrected upload,
      // like any refusal here; a secret in reused content refuses it for good, like one in a part.
      const uploadedContents = new Set(record.missing);
      const reused = contentsToRejudge(
        store,
        record.baseRevision,
        record.files.filter((file) => !uploadedContents.has(file.sha256)),
      );
      let extras: RevisionExtras;
      try {
        extras = await analyzeSite(deps, files, signal, { contents: reused, plan: record.plan });
      } catch (err) {
        if ((err as { code?: unknown }).code === 'blocked_secret') await refuseManifest(deps, id, err as ServiceError);
        throw err;
      }
      // Until here a refused part leaves the manifest for a corrected one; from here it is spent.
      await takeManifest(deps, id);
      let outcome: Published;
      try {
        outcome = await publishRevision(deps, {
          decision,
          files,
          skipped: record.skipped,
          patch: false,
          extras,
          live: request.publish !== false,
          actor: actorOf(request.caller, request.network),
        });
      } catch (err) {
        await releaseManifest(deps, id, err);
        throw err;
      }
      await keepPublishedManifest(deps, request.caller, id, request.manifestSecret, { status: 201, view: outcome.view });
      await releaseManifest(deps, id);
      log.info({ revision: outcome.revisionId, uploaded, parts: parts.size, files: files.size, ms: Math.round(performance.now() - started) }, 'deploy.digest');
      compressAfterPublish(
        deps,
        outcome.revisionId,
        [...parts].filter(([, part]) => part.compress).map(([sha256]) => sha256),
      );
      return outcome;
    },
  };
}

/** Over REST the key is a header: one in the body would be ignored, and a retry would publish twice. */
function refuseKeyInBody(request: DeployRequest, fields: JsonDeployFields): void {
  if (fields.idempotency_key === undefined || request.idempotencyKeyInBody === true) return;
  throw new ServiceError('bad_request', '"idempotency_key" is not a field of a REST deploy body; nothing was published.', {
    agentMessage: `Send the key as the Idempotency-Key header (Idempotency-Key: ${fields.idempotency_key}) and leave it out of the JSON body.`,
  });
}

/** A JSON body names its site and base inside; decided once the worker has parsed it. */
async function decideJson(deps: OperationsDeps, caller: Caller, fields: JsonDeployFields, network: string): Promise<Decision> {
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
  const decision = await decideNoting(deps, caller, fields.site, fields.base_revision);
  // The deploy itself was counted on admission; a create also counts as a site.
  if (decision.mode === 'create') await takeAnonymousTokens(deps, caller, network, { deploy: false, site: true });
  return decision;
}

/**
 * Unpacks and checks a body in the pool. `publishedAs`: the body is a manifest's part, and
 * these are the paths each content it may carry is published at. `analyzeWith`: a whole small
 * site is also analysed there, while its blobs are flushed (see `UnpackOptions.analyze`).
 */
async function unpackBody(
  deps: Pick<OperationsDeps, 'ingest' | 'config' | 'store'>,
  caller: Caller,
  body: DeployBody,
  bodyKind: DeployRequest['bodyKind'],
  signal?: AbortSignal,
  publishedAs?: Record<string, string[]>,
  /** Told of each blob as the worker stores it (a node with a bucket starts uploading it). */
  publisher?: BlobPublisher,
  /** A whole site: analysed in the unpack when small enough, and its blobs carried by the commit when within `journalMaxBytes`. */
  analyzeWith?: { threads: number; journalMaxBytes: number },
): Promise<UnpackResult> {
  // The caller's tier bounds the work (a zip bomb stops at it); the target site's tier is
  // checked on the assembled site afterwards.
  const anonymous = caller.kind === 'anonymous' || caller.kind === 'site_token';
  const tier = PLAN_LIMITS[caller.kind === 'account' ? caller.account.plan : 'anonymous'];
  const channel = publisher !== undefined ? new MessageChannel() : undefined;
  let allAnnounced = (): void => undefined;
  const announced = new Promise<void>((resolve) => (allAnnounced = resolve));
  channel?.port1.on('message', (message: AnnouncementMessage) => {
    const last = 'last' in message;
    for (const announcement of last ? message.last : message) publisher!.add(...announcement);
    // The last blobs and the end together: the publisher takes them as the deploy's last burst.
    if (last) {
      publisher!.drain();
      allAnnounced();
    }
  });
  channel?.port1.on('close', allAnnounced);
  try {
    const result = await deps.ingest.unpack(
      {
        ...(body.data !== undefined ? { body: body.data } : { spoolPath: body.spoolPath, ...(body.range ? { range: body.range } : {}) }),
        dataDir: deps.config.dataDir,
        bodyKind,
        limits: {
          maxFiles: tier.maxFiles,
          maxFileBytes: tier.maxFileBytes,
          maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES),
          maxRulesFileBytes: deps.config.deploy.siteRules.maxRulesFileBytes,
        },
        blockExecutables: anonymous,
        ...(publishedAs !== undefined ? { partial: true, publishedAs } : {}),
        ...(analyzeWith !== undefined ? { analyze: { limits: analysisLimits(deps.config), threads: analyzeWith.threads } } : {}),
        ...(analyzeWith !== undefined && analyzeWith.journalMaxBytes > 0 ? { journalMaxBytes: analyzeWith.journalMaxBytes } : {}),
        ...(deps.config.deploy.compressBeforePublishBytes > 0
          ? { compressBeforePublish: { leftBytes: deps.config.deploy.compressBeforePublishBytes, maxFileBytes: COMPRESS_BEFORE_PUBLISH_MAX_BYTES } }
          : {}),
        // Blobs it is handed the bytes of are the only ones whose files may wait for the answer.
        ...(channel !== undefined ? { announce: channel.port2, announceBytesMax: publisher!.bytesWanted, deferMaxBytes: publisher!.bytesWanted } : {}),
        // Where the publisher puts every blob in the bucket before the commit, the local files are a
        // cache: guarded against power loss, they need no sync before the answer. (A manifest's part
        // is recorded before its upload: its files are still synced first.)
        ...(publisher !== undefined && deps.store.blobs.cacheGuarded?.() === true ? { syncBlobs: false } : {}),
      },
      signal,
    );
    // Blobs whose files wait for the answer can go up only from the bytes they were announced
    // with: those still on their way (the port is not ordered with the task's answer) are needed.
    if (channel !== undefined && result.ok && result.filesDeferred !== undefined) await announced;
    return result;
  } finally {
    // Other announcements still on their way are not needed: `finish` is given every blob.
    channel?.port1.close();
  }
}

/**
 * Bytes of a whole site whose blobs' files may wait for the deploy's answer (see
 * `UnpackOptions.journalMaxBytes`). An embedded store's index carries them; a cluster node's
 * publisher uploads them from the bytes it was announced, within what it holds. A single node
 * with a bucket uploads from files: none.
 */
function journalBound(deps: Pick<OperationsDeps, 'store' | 'config'>, publisher: BlobPublisher): number {
  const { journalBytes } = deps.config.deploy;
  if (deps.store.blobs.bucket === undefined) return deps.store.cluster === undefined ? journalBytes : 0;
  return Math.min(journalBytes, publisher.bytesHeld);
}

/**
 * Once a deploy's commit carried its blobs' bytes, a sync of the blob filesystem writes their files
 * out and the bytes leave the index. It waits for the deploy's compression, whose own sync already
 * wrote most of them, rather than running a second sync beside it.
 */
function settleJournalAfter(deps: Pick<OperationsDeps, 'store' | 'ingest' | 'log' | 'followUps'>, compressed: Promise<void> | undefined): void {
  const { store, ingest, log } = deps;
  const settled = (compressed ?? Promise.resolve())
    .then(() => store.settleBlobJournal(() => store.blobs.flush(ingest.runSync)))
    .catch((err: unknown) => log.warn({ err }, 'deploy.journal_settle_failed'));
  deps.followUps.track(settled);
}

/**
 * Text files up to this size are compressed before a deploy's answer (within its time budget);
 * larger ones, rare and slow to compress, after it.
 */
const COMPRESS_BEFORE_PUBLISH_MAX_BYTES = 256 * 1024;

/** Every path of the manifest for each content still to upload: a part's bytes are judged as these. */
function publishedPaths(record: ManifestRecord): Record<string, string[]> {
  const missing = new Set(record.missing);
  const paths: Record<string, string[]> = {};
  for (const file of record.files) if (missing.has(file.sha256)) (paths[file.sha256] ??= []).push(file.path);
  return paths;
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
