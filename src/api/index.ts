/** The REST API on the API host (SPEC 4). */
import type { Config } from '../config.js';
import type { IngestPool } from '../ingest/index.js';
import type { Logger } from '../log.js';
import type { UploadPacer } from '../upload-pacer.js';
import type { Store } from '../store/index.js';
import type { HttpRequest, HttpResponse } from '../uws.js';
import { createDeployHandler } from './deploy.js';
import { createRouter } from './router.js';

export interface ApiOptions {
  store: Store;
  ingest: IngestPool;
  /** Paces uploads while the thread is busy serving. */
  pacer?: UploadPacer;
  config: Readonly<Config>;
  log: Logger;
  now?: () => number;
}

export interface Api {
  handle(res: HttpResponse, req: HttpRequest): void;
}

export function createApi(options: ApiOptions): Api {
  const now = options.now ?? Date.now;
  const deploy = createDeployHandler({ ...options, now });
  const handle = createRouter([{ method: 'POST', pattern: /^\/v1\/deploy\/?$/, handle: deploy }], options.log);
  return { handle };
}
