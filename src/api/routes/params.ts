import { schema, type Schema } from '../../contract/index.js';
import { MAX_IDEMPOTENCY_KEY_CHARS, SITE_NAME_PATTERN } from '../../rules/index.js';
import { DEFAULT_PAGE, formatDuration, MAX_PAGE, REPLAY_LIFETIME_MS } from '../../sites/index.js';
import { pathParam } from '../route.js';

/** Parameters several routes share, as OpenAPI parameter objects. */

const { int, str } = schema;

/** What every route on one site may answer: the wrong role, no such site (or not this caller's), a deleted one. */
export const SITE_READ = ['forbidden', 'not_found', 'gone'] as const;

export const nameParam: Schema = pathParam('name', 'Site name.', str(undefined, { pattern: SITE_NAME_PATTERN }));

export const manifestParam: Schema = pathParam('id', 'The manifest id (`manifest` of `POST /v1/deploy/manifest`).', str(undefined, { pattern: '^mf_' }));

export const manifestSecretParam: Schema = {
  name: 'X-Manifest-Secret',
  in: 'header',
  required: false,
  description:
    'For a manifest made without a credential: the `manifest_secret` of its first answer, required with every request for it (without it the manifest answers `404`). A credential binds every other manifest to its maker.',
  schema: str(undefined, { pattern: '^ms_' }),
};

export const idempotencyKeyParam: Schema = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    `A key of your choosing (a UUID) that makes a retry safe, as Stripe's: the same key with the same request within ${formatDuration(REPLAY_LIFETIME_MS)} answers the first answer again (same site, revision and credentials, header \`Idempotent-Replayed: true\`) and changes nothing; ` +
    "with another request, or while the first still runs, `409 conflict`. Keys belong to the caller (its API token's account, its site token, or without a credential its network). " +
    `1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters, else \`400\`. Only answers that went through are kept: after an error the key is free again.`,
  schema: str(undefined, { minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS, pattern: '^[\\x20-\\x7e]+$' }),
};

export const pageParams: Schema[] = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Items per page, 1–${MAX_PAGE}.`,
    schema: int(undefined, { minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE }),
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: '`next_cursor` of the previous page, unchanged. Omit for the first page.',
    schema: str(undefined, { pattern: '^[A-Za-z0-9_-]+$' }),
  },
];

export const domainParam: Schema = pathParam(
  'domain',
  'The domain, as the list spells it (lower-case ASCII).',
  str(undefined, { pattern: '^[a-z0-9.-]{3,253}$' }),
);
