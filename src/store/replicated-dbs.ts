import type { Key } from 'lmdb';
import type { MetadataDbs } from './metadata-dbs.js';

/** One write of a transaction: the database, the key, and the new value (null: removed). */
export type RecordWrite = [db: ReplicatedDb, key: Key, value: unknown];

/** Databases that live in PostgreSQL and are replicated; the rest are this machine's own. */
export const REPLICATED_DBS = [
  'sites',
  'names',
  'revisions',
  'revisionIds',
  'paths',
  'revisionExtras',
  'tokens',
  'accounts',
  'accountEmails',
  'members',
  'memberSites',
  'invites',
  'confirmations',
  'inviteTokens',
  'accountTokens',
  'sessions',
  'signIns',
  'reports',
  'secrets',
  'manifests',
  'manifestParts',
  'replays',
  'oauthClients',
  'oauthCodes',
  'oauthGrants',
  'accountGrants',
  'domains',
  'domainClaims',
  'siteDomains',
  'accessTickets',
  'events',
  'webhooks',
] as const satisfies readonly (keyof MetadataDbs)[];

export type ReplicatedDb = (typeof REPLICATED_DBS)[number];
