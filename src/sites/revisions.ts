import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { isInHistoryReach, PLAN_LIMITS } from '../rules/index.js';
import type { FileEntry, RevisionRecord, SiteRecord } from '../store/index.js';
import { permissionsOf, resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { actorOf, recordEvent } from './events.js';
import { compactEntry } from './limits.js';
import { decodeCursor, encodeCursor, pageLimit, type PageRequest } from './paging.js';
import { previewLinks } from './preview-links.js';
import type { PromoteView, RevisionDeletedView, RevisionListView, RollbackView } from '../contract/index.js';
import { previewUrl, revisionView, siteView, warningsView } from './views.js';
import { anonymousRollbackAdvice, reachWords } from './history-words.js';

export type RevisionList = RevisionListView;

export type RollbackResult = RollbackView;
export type PromoteResult = PromoteView;
export type RevisionDeleted = RevisionDeletedView;

export interface RevisionOperations {
  /** Newest first; while the site keeps its previews to members, each `preview_url` is a preview link. */
  list(caller: Caller, name: string, page?: PageRequest): Promise<RevisionList>;
  rollback(caller: Caller, name: string, revisionId: unknown): Promise<RollbackResult>;
  /** The link check of the live revision, as its deploy answered it. */
  liveWarnings(caller: Caller, name: string): LinkWarnings;
  /** Makes a stored revision (a draft, or an earlier one in reach) live as it is, guarded by `base_revision`. */
  promote(caller: Caller, name: string, revisionId: unknown, baseRevision: unknown): Promise<PromoteResult>;
  /**
   * Deletes a revision that is not live (owners; the site token of an unclaimed site, its only
   * owner), by id or number: its preview and files stop being served at once, its blobs are
   * collected once nothing else uses them, and its number is never used again.
   */
  delete(caller: Caller, name: string, revision: unknown): Promise<RevisionDeleted>;
}

export type LinkWarnings = ReturnType<typeof warningsView>;

/** Whether a revision's files are exactly `files`: the same paths with the same contents. */
function sameFiles(files: ReadonlyMap<string, FileEntry>, other: Iterable<{ path: string; sha256: string }>): boolean {
  let count = 0;
  for (const file of other) {
    if (files.get(file.path)?.sha256 !== file.sha256) return false;
    count += 1;
  }
  return count === files.size;
}

/**
 * Revision history and rollback (SPEC 4.3). Both see only the plan's history reach: the live
 * revision always, older ones while they are younger than the reach (anonymous sites: the live
 * one only). Revisions past it may still be stored until the sweeper prunes them; they are out
 * of reach all the same.
 */
export function revisionOperations(deps: OperationsDeps): RevisionOperations {
  const { store, config, log } = deps;
  const links = previewLinks(deps);

  const inReach = (site: SiteRecord, revision: RevisionRecord, now: number): boolean => isInHistoryReach(site, revision, now);

  return {
    liveWarnings(caller, name) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      return warningsView(site.liveRevision === undefined ? undefined : store.getRevisionExtras(site.liveRevision));
    },

    async list(caller, name, page = {}) {
      const now = deps.now();
      const { site } = resolveSite(store, caller, name, 'read', now);
      const limit = pageLimit(page.limit);
      const before = decodeCursor(page.cursor, (position) => /^[1-9]\d{0,15}$/.test(position));
      const revisions: RevisionRecord[] = [];
      let cursor = before === undefined ? undefined : Number(before);
      let more = false;
      // Newest first. Numbers grow with time, so below the live revision the first one past the
      // reach ends the listing; above it (drafts) one past the reach is only left out.
      scan: while (true) {
        const found = store.listRevisions(site.id, { before: cursor, limit: limit + 1 });
        for (const revision of found.revisions) {
          if (!inReach(site, revision, now)) {
            if (revision.number > site.liveNumber) continue;
            break scan;
          }
          if (revisions.length === limit) {
            more = true;
            break scan;
          }
          revisions.push(revision);
        }
        if (found.nextBefore === undefined) break;
        cursor = found.nextBefore;
      }
      const last = revisions.at(-1);
      const previewUrlOf = await links.of(site);
      return {
        revisions: revisions.map((revision) => revisionView(revision, site, config.publicUrls, previewUrlOf)),
        next_cursor: more && last ? encodeCursor(last.number) : null,
      };
    },

    async rollback(caller, name, wanted) {
      const now = deps.now();
      const { site, role, actor } = resolveSite(store, caller, name, 'rollback', now);
      if (typeof wanted !== 'string' || wanted === '') {
        throw new ServiceError('bad_request', 'The body needs "revision", the id of the revision to make live again.', {
          agentMessage: `List the revisions with GET /v1/sites/${site.name}/revisions and send {"revision": "<id>"}.`,
        });
      }
      const target = store.getRevision(wanted);
      if (target === undefined || !inReach(site, target, now)) {
        throw new ServiceError('not_found', `${site.name} has no revision ${wanted} within its history reach.`, {
          agentMessage:
            site.plan === 'anonymous'
              ? anonymousRollbackAdvice(site.name)
              : `Pick a revision id from GET /v1/sites/${site.name}/revisions; older revisions are beyond this plan's history reach (${reachWords(PLAN_LIMITS[site.plan].historyReachMs)}).`,
        });
      }
      const files = new Map<string, FileEntry>();
      for (const file of store.listFiles(target.id)) files.set(file.path, compactEntry(file));
      // A repeated rollback (or one to what is live already) changes nothing: no copy is made.
      const live = site.liveRevision === undefined ? undefined : store.getRevision(site.liveRevision);
      if (live !== undefined && sameFiles(files, store.listFiles(live.id))) {
        const previewUrlOf = await links.of(site);
        const asLive = target.id === live.id ? '' : ` (live as revision ${live.number})`;
        return {
          site: siteView(site, role, permissionsOf(caller, site, role), live, config.publicUrls),
          revision: revisionView(live, site, config.publicUrls, previewUrlOf),
          unchanged: true,
          agent_message: `${siteUrl(config.publicUrls, site.name)} already serves the content of revision ${target.number}${asLive}, so nothing was changed and no revision was made.`,
        };
      }
      // The rules and link warnings follow the files: they were compiled from these very files.
      const extras = store.getRevisionExtras(target.id);
      const result = await store.commitRevision({
        site: site.name,
        baseRevision: site.liveRevision ?? null,
        files,
        kind: 'rollback',
        createdBy: actor,
        rollbackOf: target.id,
        ...(extras !== undefined ? { extras } : {}),
      });
      if (!result.ok) {
        if (result.reason === 'conflict') {
          throw new ServiceError('conflict', `${site.name} changed while rolling back; nothing was changed.`, {
            agentMessage: `Someone published ${site.name} at the same moment. Check GET /v1/sites/${site.name} and retry the rollback if it is still wanted.`,
          });
        }
        if (result.reason === 'no_revision')
          throw new ServiceError('not_found', `Revision ${target.number} of ${site.name} was deleted meanwhile; nothing was changed.`);
        throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      }
      log.info({ site: site.name, revision: result.revision.id, rollbackOf: target.id }, 'site.rolled_back');
      await recordEvent(deps, actorOf(caller), {
        kind: 'site.rolled_back',
        site: result.site,
        details: { revision: result.revision.id, number: result.revision.number, rollback_of: target.id, rollback_of_number: target.number },
      });
      return {
        site: siteView(result.site, role, permissionsOf(caller, result.site, role), result.revision, config.publicUrls),
        revision: revisionView(result.revision, result.site, config.publicUrls, await links.of(result.site)),
        agent_message: `${siteUrl(config.publicUrls, site.name)} now serves the content of revision ${target.number}, published as revision ${result.revision.number}.`,
      };
    },

    async promote(caller, name, wanted, base) {
      const now = deps.now();
      const { site, role } = resolveSite(store, caller, name, 'promote', now);
      if (typeof wanted !== 'string' || wanted === '' || typeof base !== 'string' || base === '') {
        throw new ServiceError('bad_request', 'The body needs "revision" (the revision to make live) and "base_revision" (the live revision id).', {
          agentMessage: `Send {"revision": "<id>", "base_revision": "<live revision id>"}; GET /v1/sites/${site.name}/revisions lists both (the live one has "live": true).`,
        });
      }
      const target = store.getRevision(wanted);
      if (target === undefined || !inReach(site, target, now)) {
        throw new ServiceError('not_found', `${site.name} has no revision ${wanted} within its history reach.`, {
          agentMessage: `Pick a revision id from GET /v1/sites/${site.name}/revisions; older revisions are beyond this plan's history reach.`,
        });
      }
      const result = await store.promoteRevision(site.id, target.id, base);
      if (!result.ok) {
        if (result.reason === 'conflict') {
          throw new ServiceError('conflict', `The live revision of ${site.name} is not ${base}; nothing was changed.`, {
            agentMessage: `${site.name} changed since you looked${result.liveRevision ? ` (live now: ${result.liveRevision})` : ''}. Check GET /v1/sites/${site.name}/revisions, then promote again with the current live revision as "base_revision" if it is still wanted.`,
            details: result.liveRevision ? { live_revision: result.liveRevision } : undefined,
          });
        }
        if (result.reason === 'no_revision') throw new ServiceError('not_found', `${site.name} has no revision ${wanted}.`);
        throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      }
      log.info({ site: site.name, revision: result.revision.id, number: result.revision.number }, 'site.promoted');
      await recordEvent(deps, actorOf(caller), {
        kind: 'revision.promoted',
        site: result.site,
        details: { revision: result.revision.id, number: result.revision.number },
      });
      return {
        site: siteView(result.site, role, permissionsOf(caller, result.site, role), result.revision, config.publicUrls),
        revision: revisionView(result.revision, result.site, config.publicUrls, await links.of(result.site)),
        agent_message: `${siteUrl(config.publicUrls, site.name)} now serves revision ${result.revision.number}.`,
      };
    },

    async delete(caller, name, wanted) {
      const now = deps.now();
      const { site, actor } = resolveSite(store, caller, name, 'delete_revision', now);
      const listing = `GET /v1/sites/${site.name}/revisions`;
      if (typeof wanted !== 'string' && typeof wanted !== 'number') {
        throw new ServiceError('bad_request', 'Name the revision to delete by its id (rev_…) or its number.', {
          agentMessage: `Pick the revision from ${listing}.`,
        });
      }
      // A number names the revision as previews and listings show it; anything else is an id.
      const byNumber = /^[1-9]\d{0,8}$/.test(String(wanted));
      const target = byNumber ? store.getRevisionByNumber(site.id, Number(wanted)) : store.getRevision(String(wanted));
      if (target === undefined || target.deletedAt !== undefined || !inReach(site, target, now)) {
        throw new ServiceError('not_found', `${site.name} has no revision ${String(wanted)} within its history reach.`, {
          agentMessage: `Pick a revision from ${listing}; deleted revisions and those beyond the plan's history reach are not listed.`,
        });
      }
      const liveConflict = (): ServiceError =>
        new ServiceError('conflict', `Revision ${target.number} is the live revision of ${site.name}; the live revision cannot be deleted.`, {
          agentMessage: `Make another revision live first: roll back to an earlier one (POST /v1/sites/${site.name}/rollback) or promote a draft (POST /v1/sites/${site.name}/promote), then delete revision ${target.number}.`,
          details: { live_revision: target.id },
        });
      if (target.id === site.liveRevision) throw liveConflict();
      const result = await store.deleteRevision(site.id, target.id, actor);
      if (!result.ok) {
        if (result.reason === 'live') throw liveConflict();
        if (result.reason === 'no_revision')
          throw new ServiceError('not_found', `${site.name} has no revision ${String(wanted)}; it may have been deleted meanwhile.`);
        throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      }
      log.info({ site: site.name, revision: target.id, number: target.number }, 'revision.deleted');
      await recordEvent(deps, actorOf(caller), { kind: 'revision.deleted', site, details: { revision: target.id, number: target.number } });
      return {
        revision: { id: target.id, number: target.number },
        deleted: true,
        agent_message: `Revision ${target.number} of ${site.name} is deleted: its preview address ${previewUrl(config.publicUrls, site.name, target.number)} answers 410 and its files are no longer served. Its number is not used again.`,
      };
    },
  };
}
