import { siteUrl } from '../config.js';
import { ServiceError } from '../errors.js';
import { PLAN_LIMITS } from '../plans.js';
import type { FileEntry, RevisionRecord, SiteRecord } from '../store/index.js';
import { resolveSite } from './access.js';
import { objectBody, type Endpoint, type EndpointDeps } from './handler.js';
import { decodeCursor, encodeCursor, pageLimit } from './paging.js';
import { revisionView, siteView } from './views.js';

export interface RevisionEndpoints {
  list: Endpoint;
  rollback: Endpoint;
}

/**
 * `GET /v1/sites/:name/revisions` and `POST /v1/sites/:name/rollback` (SPEC 4.3). Both see only
 * the plan's history reach: the live revision always, older ones while they are younger than the
 * reach (anonymous sites: the live one only). Revisions past it may still be stored until the
 * sweeper prunes them; they are out of reach all the same.
 */
export function revisionEndpoints(deps: EndpointDeps): RevisionEndpoints {
  const { store, config, log } = deps;

  function inReach(site: SiteRecord, revision: RevisionRecord, now: number): boolean {
    if (revision.siteId !== site.id) return false;
    if (revision.id === site.liveRevision) return true;
    const reach = PLAN_LIMITS[site.plan].historyReachMs;
    return reach > 0 && revision.createdAt >= now - reach;
  }

  return {
    async list({ caller, request }) {
      const now = deps.now();
      const { site } = resolveSite(store, caller, request.params[0]!, 'read', now);
      const limit = pageLimit(request.query);
      const before = decodeCursor(request.query, (position) => /^[1-9]\d{0,15}$/.test(position));
      const revisions: RevisionRecord[] = [];
      let cursor = before === undefined ? undefined : Number(before);
      let more = false;
      // Newest first. The live revision is the newest (deploys and rollbacks both make their
      // revision live), so the first other revision past the reach ends the listing.
      scan: while (true) {
        const page = store.listRevisions(site.id, { before: cursor, limit: limit + 1 });
        for (const revision of page.revisions) {
          if (!inReach(site, revision, now)) break scan;
          if (revisions.length === limit) {
            more = true;
            break scan;
          }
          revisions.push(revision);
        }
        if (page.nextBefore === undefined) break;
        cursor = page.nextBefore;
      }
      const last = revisions.at(-1);
      return {
        status: 200,
        body: {
          revisions: revisions.map(revisionView),
          next_cursor: more && last ? encodeCursor(last.number) : null,
        },
      };
    },

    async rollback({ caller, request, body }) {
      const now = deps.now();
      const { site, role, actor } = resolveSite(store, caller, request.params[0]!, 'deploy', now, { mustBeActive: true });
      const wanted = objectBody(body, '{"revision": "rev_…"}').revision;
      if (typeof wanted !== 'string' || wanted === '') {
        throw new ServiceError('bad_request', 'The body needs "revision", the id of the revision to make live again.', {
          agentMessage: `List the revisions with GET /v1/sites/${site.name}/revisions and send {"revision": "<id>"}.`,
        });
      }
      const target = store.getRevision(wanted);
      if (target === undefined || !inReach(site, target, now)) {
        throw new ServiceError('not_found', `${site.name} has no revision ${wanted} within its history reach.`, {
          agentMessage: `Pick a revision id from GET /v1/sites/${site.name}/revisions; older revisions are beyond this plan's history reach.`,
        });
      }
      const files = new Map<string, FileEntry>();
      for (const file of store.listFiles(target.id)) {
        const entry: FileEntry = { sha256: file.sha256, size: file.size, type: file.type };
        if (file.encodings && Object.keys(file.encodings).length > 0) entry.encodings = file.encodings;
        files.set(file.path, entry);
      }
      const result = await store.commitRevision({
        site: site.name,
        baseRevision: site.liveRevision ?? null,
        files,
        kind: 'rollback',
        createdBy: actor,
        rollbackOf: target.id,
      });
      if (!result.ok) {
        if (result.reason === 'conflict') {
          throw new ServiceError('conflict', `${site.name} changed while rolling back; nothing was changed.`, {
            agentMessage: `Someone published ${site.name} at the same moment. Check GET /v1/sites/${site.name} and retry the rollback if it is still wanted.`,
          });
        }
        throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      }
      log.info({ site: site.name, revision: result.revision.id, rollbackOf: target.id }, 'site.rolled_back');
      return {
        status: 201,
        body: {
          site: siteView(result.site, role, result.revision, config.publicUrls),
          revision: revisionView(result.revision),
          agent_message: `${siteUrl(config.publicUrls, site.name)} now serves the content of revision ${target.number}, published as revision ${result.revision.number}.`,
        },
      };
    },
  };
}
