import type { Config } from '../config.js';
import type { IngestPool } from '../ingest/index.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import type { ClientMetadataFetcher } from './client-metadata.js';
import type { FollowUps } from './follow-ups.js';
import type { Mailer } from './mailer.js';

/** What every operation is built with; edges pass their thread's store and pool. */
export interface OperationsDeps {
  store: Store;
  ingest: IngestPool;
  config: Readonly<Config>;
  log: Logger;
  now: () => number;
  mailer: Mailer;
  /** Work started and not awaited; the server waits for it before closing the store. */
  followUps: FollowUps;
  /** Fetches OAuth client metadata documents; defaults to the fenced https fetcher. */
  fetchClientMetadata?: ClientMetadataFetcher;
}
