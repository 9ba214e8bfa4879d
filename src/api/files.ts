import { ServiceError } from '../errors.js';
import { sendResponse, streamFile, type Headers } from '../http.js';
import type { SiteRecord } from '../store/index.js';
import { resolveSite } from './access.js';
import type { Endpoint, EndpointDeps } from './handler.js';

export interface FileEndpoints {
  list: Endpoint;
  read: Endpoint;
}

/** `GET /v1/sites/:name/files` and `GET /v1/sites/:name/files/<path>` (SPEC 4.3): the live revision, read back. */
export function fileEndpoints(deps: EndpointDeps): FileEndpoints {
  const { store, config, log } = deps;

  const liveRevision = (site: SiteRecord): string => {
    if (site.liveRevision === undefined) throw new ServiceError('not_found', `${site.name} has no published revision yet.`);
    return site.liveRevision;
  };

  return {
    async list({ caller, request }) {
      const { site } = resolveSite(store, caller, request.params[0]!, 'read', deps.now());
      const revision = liveRevision(site);
      const files = store.listFiles(revision).map((file) => ({ path: file.path, size: file.size, sha256: file.sha256 }));
      return { status: 200, body: { revision, files } };
    },

    async read({ caller, request, res }) {
      const { site } = resolveSite(store, caller, request.params[0]!, 'read', deps.now());
      const revision = liveRevision(site);
      const path = request.params[1]!;
      const file = store.getFile(revision, path);
      if (file === undefined) {
        throw new ServiceError('not_found', `The live revision of ${site.name} has no file ${path}.`, {
          agentMessage: `List the files with GET /v1/sites/${site.name}/files; paths are relative to the site root, without a leading slash.`,
        });
      }
      const headers: Headers = {
        'Content-Type': file.type,
        'X-Revision': revision,
        ETag: `"${file.sha256}"`,
        'Cache-Control': 'no-store',
        // Uploaded content read back on the API host must never run there.
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
      };
      if (file.size <= config.serve.streamThresholdBytes) {
        sendResponse(res, 200, headers, store.blobs.readSync(file.sha256));
      } else {
        streamFile(res, { path: store.blobs.pathOf(file.sha256), start: 0, end: file.size - 1, status: 200, headers, log });
      }
      return undefined;
    },
  };
}
