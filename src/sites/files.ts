import { ServiceError } from '../errors.js';
import { packedRangeOf, type FileEntry, type SiteRecord } from '../store/index.js';
import { resolveSite } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import type { FileListView } from '../contract/index.js';

export type FileList = FileListView;

/** One file of the live revision: its row, and where its bytes are. */
export interface LiveFile {
  revision: string;
  path: string;
  entry: FileEntry;
  /** Absolute path of the blob on disk (read it, or stream it for large files). */
  blobPath: string;
}

export interface FileOperations {
  list(caller: Caller, name: string): FileList;
  /** The file, its blob on this node's disk (fetched from the bucket when there is one). */
  find(caller: Caller, name: string, path: string): Promise<LiveFile>;
}

/** The live revision's files, read back (SPEC 4.3). */
export function fileOperations(deps: OperationsDeps): FileOperations {
  const { store } = deps;

  const liveRevision = (site: SiteRecord): string => {
    if (site.liveRevision === undefined) throw new ServiceError('not_found', `${site.name} has no published revision yet.`);
    return site.liveRevision;
  };

  return {
    list(caller, name) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      const revision = liveRevision(site);
      const files = store.listFiles(revision).map((file) => ({ path: file.path, size: file.size, sha256: file.sha256 }));
      return { revision, files };
    },

    async find(caller, name, path) {
      const { site } = resolveSite(store, caller, name, 'read', deps.now());
      const revision = liveRevision(site);
      const entry = store.getFile(revision, path);
      if (entry === undefined) {
        throw new ServiceError('not_found', `The live revision of ${site.name} has no file ${path}.`, {
          agentMessage: `List the files with GET /v1/sites/${site.name}/files; paths are relative to the site root, without a leading slash.`,
        });
      }
      await store.blobs.fetch(entry.sha256, undefined, packedRangeOf(entry));
      return { revision, path, entry, blobPath: store.blobs.pathOf(entry.sha256) };
    },
  };
}
