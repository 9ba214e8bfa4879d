import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { siteUrl } from '../config.js';
import type { DeployView } from '../contract/index.js';
import { ServiceError } from '../errors.js';
import { ANONYMOUS_LIFETIME_MS, randomSiteName, type RevisionExtras } from '../rules/index.js';
import { hashToken, type EventActor, type FileEntry, type JournaledBlob, type KnownBlob, type PackedBlobs, type PackRows } from '../store/index.js';
import { deployConflict, type Decision } from './deploy-decision.js';
import type { OperationsDeps } from './deps.js';
import { eventRecorded, newEvent } from './events.js';
import { sitesLimitError } from './limits.js';
import { previewLinks } from './preview-links.js';
import { claimKeyFor } from './sealed-token.js';
import { deployRevisionView, deploySiteView, iso, warningsView } from './views.js';

/** A checked, analysed site ready to become a revision. */
export interface NewRevision {
  decision: Decision;
  files: Map<string, FileEntry>;
  /** Paths left out on purpose (the answer names them). */
  skipped: string[];
  patch: boolean;
  extras: RevisionExtras;
  /** `false`: store a draft, do not make it live. */
  live: boolean;
  /** `blobs.publish` of these files, started already (see deploy.ts); started here if not. */
  uploads?: Promise<PackedBlobs>;
  /**
   * Where `uploads` puts the packed blobs, known before they are in the bucket
   * (`BlobPublisher.places`): the commit is then prepared while they go up (`CommitInput.uploads`).
   */
  places?: Promise<PackedBlobs>;
  /** Once `uploads` resolved: rows of its packs for the commit to write (`CommitInput.packRows`). */
  packRows?: () => PackRows | undefined;
  /** Who deploys, for the audit log; by default, as the decision names the author. */
  actor?: EventActor;
  /** The blobs' bytes, for the commit to make durable with the revision (`CommitInput.journal`). */
  journal?: readonly JournaledBlob[];
}

/** A deploy that went through: its answer and the new revision. */
export interface Published {
  status?: 201;
  view: DeployView;
  revisionId: string;
  /** The answer of an earlier request, given again: nothing was published by this one. */
  replayed?: true;
}

const NAME_ATTEMPTS = 8;

/** Commits the revision (creating the site when asked); `live: false` stores a draft. */
export async function publishRevision(deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'now'>, revision: NewRevision): Promise<Published> {
  const { store, config, log } = deps;
  const { decision, skipped, patch, extras, live, journal } = revision;
  const actor = revision.actor ?? authorAsActor(decision.createdBy);
  if (!live && decision.mode === 'create') {
    throw new ServiceError('bad_request', 'A draft (publish: false) is a new revision of an existing site; a new site is published live.', {
      agentMessage: 'Deploy the first version without publish=false (it goes live), then send drafts with "site", "base_revision" and publish=false.',
    });
  }
  const checked = warningsView(extras);
  const note = skippedNote(skipped) + warningsNote(extras);
  // With a blob bucket, every blob the revision references is in it before the commit, which
  // alone takes the cluster's write lock: no bucket request is made while it is held. Where the
  // blobs' places are known before they are up, the commit is prepared meanwhile and takes the
  // lock once they are (`CommitInput.uploads`), its pack rows read then.
  const uploads = revision.uploads ?? store.blobs.publish(Array.from(revision.files.values(), (entry) => entry.sha256));
  const files = withPackPlaces(revision.files, await (revision.places ?? uploads));
  const packRows = revision.packRows === undefined ? undefined : revision.places === undefined ? revision.packRows() : revision.packRows;
  const inFlight = revision.places !== undefined ? { uploads } : {};
  if (decision.mode === 'update') {
    const result = await store.commitRevision({
      site: decision.site.name,
      baseRevision: decision.base,
      files,
      kind: patch ? 'patch' : 'deploy',
      createdBy: decision.createdBy,
      extras,
      ...(live ? {} : { publish: false }),
      ...(journal !== undefined ? { journal } : {}),
      ...(packRows !== undefined ? { packRows } : {}),
      ...inFlight,
      event: (site, committed) =>
        newEvent(actor, {
          kind: live ? 'deploy.published' : 'deploy.draft',
          site,
          details: { revision: committed.id, number: committed.number, files: files.size, ...(patch ? { patch: true } : {}) },
        }),
    });
    if (!result.ok) {
      if (result.reason === 'conflict') throw deployConflict(store.getSite(decision.site.name) ?? decision.site);
      throw new ServiceError('not_found', `There is no site named ${decision.site.name}.`);
    }
    log.info({ site: result.site.name, revision: result.revision.id, files: files.size, kind: result.revision.kind }, 'deploy.published');
    await eventRecorded(deps, result.event!, result.site);
    const url = siteUrl(config.publicUrls, result.site.name);
    // A draft's preview_url is a preview link while the site keeps its previews to members.
    const revision = deployRevisionView(result.revision, result.site, config.publicUrls, live ? undefined : await previewLinks(deps).of(result.site));
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
      ...(journal !== undefined ? { journal } : {}),
      ...(packRows !== undefined ? { packRows } : {}),
      ...inFlight,
      event: (site, committed) =>
        newEvent(actor, { kind: 'deploy.published', site, details: { revision: committed.id, number: committed.number, files: files.size, created: true } }),
    });
    if (!result.ok && result.reason === 'over_limit') {
      const account = store.getAccount(decision.accountId!)!;
      throw sitesLimitError(config, account, store.countOwnedSites(account.id), 'create');
    }
    if (!result.ok) continue; // `name_taken`: another deploy took the name
    log.info({ site: name, revision: result.revision.id, files: files.size, anonymous }, 'deploy.created');
    await eventRecorded(deps, result.event!, result.site);
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

/**
 * With a bucket, the bytes of the variants a compression made come back to this thread (at most
 * this many, moved rather than copied), so their upload need not read their files here.
 */
const VARIANT_BYTES_BACK_MAX = 16 * 1024 * 1024;

/**
 * The site is live before its text files have compressed variants: they are made by the pool
 * right after, recorded on the revision, and picked up by serving threads then. With a bucket
 * they go up given their sizes (and the blobs' own, `sizes`) and their bytes, so this thread
 * neither looks for nor reads their files.
 */
export function compressAfterPublish(
  deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'ingest' | 'followUps'>,
  revisionId: string,
  sha256s: string[],
  sizes?: ReadonlyMap<string, number>,
  /** Blobs whose files wait in the blob journal (`UnpackResult.filesDeferred`): the same task writes them first. */
  write?: readonly JournaledBlob[],
): Promise<void> | undefined {
  const { store, config, log } = deps;
  if (sha256s.length === 0 && write === undefined) return undefined;
  const started = performance.now();
  const work = deps.ingest
    .compress({
      dataDir: config.dataDir,
      sha256s,
      ...(store.blobs.bucket !== undefined ? { variantBytesMax: VARIANT_BYTES_BACK_MAX } : {}),
      ...(write !== undefined ? { write: [...write] } : {}),
    })
    .then(({ sizes: made, bytes }) => {
      const known = new Map(Object.entries(made).map(([sha256, encodings]) => [sha256, { size: sizes?.get(sha256), encodings } as KnownBlob]));
      for (const [sha256, encoding, variant] of bytes ?? []) {
        const blob = known.get(sha256);
        if (blob !== undefined) blob.variantBytes = { ...blob.variantBytes, [encoding]: variant };
      }
      return store.blobs.publish([], known).then(() => store.recordEncodings(revisionId, new Map(Object.entries(made))));
    })
    .then(
      (files) => log.info({ revision: revisionId, files, compressMs: Math.round(performance.now() - started) }, 'deploy.compressed'),
      (err: unknown) => log.warn({ err, revision: revisionId }, 'deploy.compress_failed'),
    );
  deps.followUps.track(work);
  return work;
}

/** The author a revision records, as the audit log names an actor. */
function authorAsActor(createdBy: string): EventActor {
  if (createdBy === 'anonymous') return { kind: 'anonymous' };
  if (createdBy === 'site_token') return { kind: 'site_token' };
  return { kind: 'account', email: createdBy };
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

/**
 * The files with the places of their packed blobs, so that the records every node replicates say
 * where to read them (`FileEntry.pack`). A blob this publish did not report packed keeps the place
 * its entry carried from an earlier revision (a patch's unchanged files): that pack stays while
 * any revision references the blob.
 */
function withPackPlaces(files: Map<string, FileEntry>, packed: PackedBlobs): Map<string, FileEntry> {
  if (packed.size === 0) return files;
  const placed = new Map<string, FileEntry>();
  for (const [path, entry] of files) {
    const pack = packed.get(entry.sha256);
    placed.set(path, pack === undefined ? entry : { ...entry, pack });
  }
  return placed;
}
