import type { Config } from '../config.js';
import type { IngestPool } from '../ingest/index.js';
import type { Logger } from '../log.js';
import type { ClientMetadataFetcher, Mailer, TxtLookup, WebhookTransport } from '../outbound/index.js';
import type { Store } from '../store/index.js';
import type { FollowUps } from './follow-ups.js';

/**
 * What every operation is built with; edges pass their thread's store and pool, and the process
 * wiring the outbound adapters (mail, client metadata documents, DNS), so no operation opens a
 * connection of its own.
 */
export interface OperationsDeps {
  store: Store;
  ingest: IngestPool;
  config: Readonly<Config>;
  log: Logger;
  now: () => number;
  mailer: Mailer;
  /** Work started and not awaited; the server waits for it before closing the store. */
  followUps: FollowUps;
  /** Fetches OAuth client metadata documents (the fenced https fetcher). */
  fetchClientMetadata: ClientMetadataFetcher;
  /** Looks up the TXT records that prove a custom domain. */
  lookupTxt: TxtLookup;
  /** Checks webhook targets and sends deliveries to them (the fenced sender). */
  webhookTransport: WebhookTransport;
}
