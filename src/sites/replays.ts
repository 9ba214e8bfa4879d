import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { ServiceError } from '../errors.js';
import { isIdempotencyKey, MAX_IDEMPOTENCY_KEY_CHARS } from '../rules/index.js';
import type { ReplayRecord } from '../store/index.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';

/**
 * Retries that never do the work twice. A request sent with an `Idempotency-Key` (Stripe's
 * semantics) runs once per key and caller: its answer is kept a day, and the same key with the
 * same request gets that answer back, the same site, revision and credentials, with nothing
 * changed; the same key with another request, or while the first still runs, is a 409.
 *
 * The kept answer may hold an anonymous site's token and claim link, so it is sealed (AES-256-GCM)
 * under a key derived from the caller's scope, the idempotency key and the whole request: the
 * record is found by a hash, and opened only by someone who sends that very request again. The
 * store holds neither the key nor a credential in the clear.
 */

/** How long a first answer is kept for its retries. */
export const REPLAY_LIFETIME_MS = 24 * 3600_000;
/** A claimed key whose request died with its process is free again after this much more than a body may take. */
const PENDING_MARGIN_MS = 5 * 60_000;

/** A request's answer: what is kept and replayed. */
export interface Answer {
  status: number;
  view: unknown;
}

export type Replayed = Answer & { replayed: true };

/** A request that carries an idempotency key. */
export interface KeyedRequest {
  caller: Caller;
  /** The caller's network: an anonymous caller's keys are its network's. */
  network: string;
  key: string;
  /** What the request asks besides its body (method, path, query, the headers that change it), as one string. */
  target: string;
}

/** The key as sent (absent: `undefined`), or 400 for one that is not 1–255 printable ASCII characters. */
export function readIdempotencyKey(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string' && isIdempotencyKey(raw)) return raw;
  throw new ServiceError('bad_request', `An idempotency key is 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters.`, {
    agentMessage:
      'Send a fresh random key for each new deploy, such as a UUID (Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324), and the same key when you retry it.',
  });
}

/** Whose keys these are: an account's, a site token's, or for anonymous callers their network's. */
function scopeOf(caller: Caller, network: string): string {
  if (caller.kind === 'account') return `account:${caller.account.id}`;
  if (caller.kind === 'site_token') return `site_token:${caller.tokenHash}`;
  return `network:${network}`;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Runs `run` once for this key and caller. `bodyHash` is the sha256 of the request's body (the
 * edge hashes it before the body goes to the ingest pool). Only an answer that went through is
 * kept: a refused or failed request frees its key, so a retry after a 503 runs again.
 */
export async function runOnce<T extends Answer>(
  deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'now'>,
  request: KeyedRequest,
  bodyHash: () => Promise<string>,
  run: () => Promise<T>,
): Promise<T | Replayed> {
  const { store, log } = deps;
  const scope = scopeOf(request.caller, request.network);
  const id = sha256(`idempotency\0${scope}\0${request.key}`);
  const material = (hash: string): string => `${scope}\0${request.key}\0${request.target}\0${hash}`;
  const started = deps.now();
  const bodyDeadlineMs = deps.config.deploy.uploadTimeoutMs || 3600_000;
  const existing = await store.claimReplay(id, { createdAt: started, expiresAt: started + bodyDeadlineMs + PENDING_MARGIN_MS });
  if (existing) return replay(existing, request.key, material(await bodyHash()));

  let answer: T;
  let hash: string;
  try {
    answer = await run();
    hash = await bodyHash();
  } catch (err) {
    await store.dropReplay(id).catch((dropErr: unknown) => log.warn({ err: dropErr }, 'replay.drop_failed'));
    throw err;
  }
  const kept = material(hash);
  const at = deps.now();
  // The work is done and answered whatever happens here; a retry then runs again, as without a key.
  await store
    .putReplay(id, {
      fingerprint: fingerprintOf(kept),
      status: answer.status,
      sealed: seal(answer.view, kept),
      createdAt: at,
      expiresAt: at + REPLAY_LIFETIME_MS,
    })
    .catch((err: unknown) => log.warn({ err }, 'replay.keep_failed'));
  return answer;
}

function replay(record: ReplayRecord, key: string, material: string): Replayed {
  if (record.status === undefined || record.sealed === undefined) {
    throw new ServiceError('conflict', `A request with the idempotency key "${key}" is still running; nothing was done by this one.`, {
      agentMessage: 'Wait a few seconds, then send the same request with the same key again: once the first has finished, you get its answer.',
      details: { idempotency_key: key },
    });
  }
  const view = record.fingerprint === fingerprintOf(material) ? unseal(record.sealed, material) : undefined;
  if (view === undefined) {
    throw new ServiceError('conflict', `The idempotency key "${key}" was used for a different request in the last 24 hours; nothing was done.`, {
      agentMessage:
        'An idempotency key stands for one request: send a new key (a fresh UUID) with each new deploy, and reuse a key only to retry the very same request (same body, address and credential).',
      details: { idempotency_key: key },
    });
  }
  return { status: record.status, view, replayed: true };
}

/**
 * A digest deploy's answer, kept a day after it published, for the manifest's maker: a retried
 * last part and `GET /v1/deploy/manifest/<id>` answer it instead of 404, so a lost answer neither
 * makes a second site nor loses an anonymous site's token and claim link. Sealed under the
 * manifest's secret when it has one (anonymous makers), so only a caller who proves the manifest
 * can read the credentials in it.
 */
export async function keepManifestAnswer(
  deps: Pick<OperationsDeps, 'store' | 'log' | 'now'>,
  manifest: { id: string; owner: string; secret?: string },
  answer: Answer,
): Promise<void> {
  const material = manifestMaterial(manifest);
  const at = deps.now();
  await deps.store
    .putReplay(manifestReplayId(manifest.id), {
      fingerprint: fingerprintOf(material),
      owner: manifest.owner,
      status: answer.status,
      sealed: seal(answer.view, material),
      createdAt: at,
      expiresAt: at + REPLAY_LIFETIME_MS,
    })
    .catch((err: unknown) => deps.log.warn({ err, manifest: manifest.id }, 'replay.keep_failed'));
}

/** The kept answer of a published manifest, if `owner` made it (and, for an anonymous one, `secret` is its secret). */
export function manifestAnswer(deps: Pick<OperationsDeps, 'store'>, manifest: { id: string; owner: string; secret?: string }): Answer | undefined {
  if (typeof manifest.id !== 'string' || !manifest.id.startsWith('mf_')) return undefined;
  const record = deps.store.getReplay(manifestReplayId(manifest.id));
  if (!record || record.owner !== manifest.owner || record.status === undefined || record.sealed === undefined) return undefined;
  const material = manifestMaterial(manifest);
  if (record.fingerprint !== fingerprintOf(material)) return undefined;
  const view = unseal(record.sealed, material);
  return view === undefined ? undefined : { status: record.status, view };
}

const manifestReplayId = (id: string): string => sha256(`manifest\0${id}`);
const manifestMaterial = (manifest: { id: string; owner: string; secret?: string }): string =>
  `manifest\0${manifest.id}\0${manifest.owner}\0${manifest.secret ?? ''}`;

/** sha256 of a deploy body's bytes (a spooled one read from its file, only its range when it has one). */
export async function hashDeployBody(
  body: { data: Uint8Array } | { data?: undefined; spoolPath: string; range?: { start: number; end: number } },
): Promise<string> {
  const hash = createHash('sha256');
  if (body.data !== undefined) return hash.update(body.data).digest('hex');
  const range = body.range ? { start: body.range.start, end: body.range.end - 1 } : {};
  if (body.range && body.range.end <= body.range.start) return hash.digest('hex');
  for await (const chunk of createReadStream(body.spoolPath, range)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

// What is compared is a hash of the material under another label than the sealing key's, so the
// stored fingerprint tells nothing about that key.
const fingerprintOf = (material: string): string => sha256(`fingerprint\0${material}`);
const INFO = Buffer.from('plinth replayed answer');
const sealingKey = (material: string): Buffer => Buffer.from(hkdfSync('sha256', Buffer.from(material, 'utf8'), Buffer.alloc(0), INFO, 32));

/** `iv.ciphertext.tag`, base64url. */
function seal(view: unknown, material: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(material), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(view), 'utf8'), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map((part) => part.toString('base64url')).join('.');
}

function unseal(sealed: string, material: string): unknown {
  const [iv, body, tag] = sealed.split('.');
  if (iv === undefined || body === undefined || tag === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(material), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
