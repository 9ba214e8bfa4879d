import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createS3Bucket, OWNER_KEY, type S3Bucket } from './bucket.js';
import type { Store } from './metadata.js';
import type { BucketOptions, BucketOwner } from './types.js';

/**
 * Which Plinth installation a bucket belongs to. Bucket garbage collection deletes every blob its
 * installation's records do not reference, so a node on someone else's bucket (a cluster node
 * whose database setting was mistyped, running alone) would delete that installation's blobs at
 * its first sweep. The bucket therefore carries a marker, `plinth/owner.json`, naming its owner,
 * and a node starts only on a bucket that is its own; an operator can hand a bucket over on
 * purpose (`plinth admin bucket adopt`).
 */

/** The name under which an embedded install keeps its id (see `ownerOf`). */
export const INSTALL_ID_SECRET = 'install-id';

/** This installation as a bucket's owner: its cluster, or the embedded install of its data directory. */
export async function ownerOf(store: Pick<Store, 'cluster' | 'ensureSecret'>): Promise<BucketOwner> {
  if (store.cluster) return { kind: 'cluster', id: store.cluster.clusterId };
  return { kind: 'install', id: await store.ensureSecret(INSTALL_ID_SECRET, () => randomUUID()) };
}

export const sameOwner = (a: BucketOwner | undefined, b: BucketOwner | undefined): boolean => a?.kind === b?.kind && a?.id === b?.id;

/** `cluster 0b9e…` or `the embedded install 5f3a…`, as messages name them. */
export function describeOwner(owner: BucketOwner): string {
  return owner.kind === 'cluster' ? `the cluster ${owner.id}` : `the embedded install ${owner.id}`;
}

/** Who wrote a marker, for people reading it. */
const writer = (what: string): string => `${what} (pid ${process.pid} on ${hostname()})`;

/**
 * The start-up check of the bucket: that it exists, that the credentials work, and that an
 * object can be written, read back and deleted. Rejects with one sentence naming the bucket and
 * what is wrong (today's alternative: `500 internal` at the first deploy).
 */
export async function checkBucket(options: BucketOptions): Promise<void> {
  const bucket = createS3Bucket(options);
  try {
    await bucket.probe();
  } catch (err) {
    throw new Error(`PLINTH_S3_BUCKET: ${whereOf(options)} cannot be used: ${describeBucketFailure(err, options)}.`, { cause: err });
  } finally {
    bucket.close();
  }
}

/**
 * Makes sure the bucket is `owner`'s before a node uses it: a bucket marked as someone else's is
 * refused; an unmarked one is marked, unless it already holds blobs and this installation has
 * no site (then it may well be another installation's, from before markers). `holdsSites`: whether
 * the installation's records hold a site (asked only of an unmarked bucket). Resolves with what it did.
 */
export async function claimBucket(options: BucketOptions, owner: BucketOwner, holdsSites: () => boolean): Promise<'owned' | 'claimed'> {
  const bucket = createS3Bucket(options);
  try {
    const marked = await bucket.readOwner();
    if (marked !== undefined) {
      if (sameOwner(marked, owner)) return 'owned';
      throw new Error(refusal(options, marked, owner));
    }
    if (!holdsSites() && (await holdsBlobs(bucket))) {
      throw new Error(
        `${whereOf(options)} holds blobs but no marker (${OWNER_KEY}) naming the installation they belong to, and ${describeOwner(owner)} has no site: ` +
          `it may be another installation's, whose blobs this node's sweeps would delete. If the bucket is this installation's, adopt it with \`plinth admin bucket adopt\` (same settings); else name another bucket.`,
      );
    }
    await bucket.writeOwner(owner, writer('the first node to start on it'));
    // Two installations marking one new bucket at once: the one whose marker stayed goes on.
    const kept = await bucket.readOwner();
    if (!sameOwner(kept, owner)) throw new Error(refusal(options, kept!, owner));
    return 'claimed';
  } finally {
    bucket.close();
  }
}

/**
 * Marks the bucket as `owner`'s whoever it belonged to (`plinth admin bucket adopt`): from then
 * on the owner's sweeps delete every blob in it that its records do not reference. Resolves with
 * the previous owner, if the bucket had one.
 */
export async function adoptBucket(options: BucketOptions, owner: BucketOwner): Promise<BucketOwner | undefined> {
  const bucket = createS3Bucket(options);
  try {
    const previous = await bucket.readOwner().catch(() => undefined);
    await bucket.writeOwner(owner, writer('plinth admin bucket adopt'));
    return previous;
  } finally {
    bucket.close();
  }
}

/**
 * For `plinth admin migrate --to-cluster`: marks the bucket as `target`'s, when it has no marker
 * or is the migrating install's own (`source`, if it has an id yet: its blobs move with it). Refuses another
 * installation's bucket before anything is copied.
 */
export async function claimBucketForMove(options: BucketOptions, target: BucketOwner, source: BucketOwner | undefined): Promise<void> {
  const bucket = createS3Bucket(options);
  try {
    const marked = await bucket.readOwner();
    if (sameOwner(marked, target)) return;
    if (marked !== undefined && !sameOwner(marked, source)) throw new Error(refusal(options, marked, target));
    await bucket.writeOwner(target, writer('plinth admin migrate --to-cluster'));
  } finally {
    bucket.close();
  }
}

function refusal(options: BucketOptions, marked: BucketOwner, owner: BucketOwner): string {
  const whose = `${whereOf(options)} belongs to ${describeOwner(marked)}, not to ${describeOwner(owner)} (this node's ${owner.kind === 'cluster' ? 'PLINTH_DATABASE_URL' : 'PLINTH_DATA_DIR'})`;
  const harm = "this node's sweeps would delete every blob of it that this node's records do not reference";
  const fix =
    marked.kind === 'cluster' && owner.kind === 'install'
      ? "Set PLINTH_DATABASE_URL to that cluster's database, or name another bucket"
      : 'Point PLINTH_S3_BUCKET and the records (PLINTH_DATABASE_URL, PLINTH_DATA_DIR) at the same installation';
  return `${whose}: ${harm}. ${fix}; if the bucket really is this installation's now, adopt it with \`plinth admin bucket adopt\` (same settings).`;
}

/** Whether any object lies under `blobs/` (one listing page, stopped at the first object). */
async function holdsBlobs(bucket: S3Bucket): Promise<boolean> {
  for await (const _object of bucket.list()) return true;
  return false;
}

/** `the bucket "name" at <endpoint>` (or `in AWS region <region>`). */
function whereOf(options: BucketOptions): string {
  return `the bucket "${options.bucket}" ${options.endpoint !== undefined ? `at ${options.endpoint}` : `in AWS region ${options.region}`}`;
}

interface SdkFailure {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  Code?: unknown;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
  errors?: unknown;
}

/** Error names and codes of the network failing, as the SDK and Node give them. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'TimeoutError']);
const BAD_CREDENTIALS = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken', 'InvalidClientTokenId']);

/** What the bucket's answer (or the lack of one) to the probe means, in words an operator acts on. */
export function describeBucketFailure(err: unknown, options: Pick<BucketOptions, 'bucket' | 'endpoint' | 'region'>): string {
  const failure = (err ?? {}) as SdkFailure;
  const name = String(failure.name ?? failure.Code ?? '');
  const code = String(failure.code ?? '');
  const status = failure.$metadata?.httpStatusCode;
  const words = typeof failure.message === 'string' && failure.message.trim() !== '' ? `: ${failure.message.trim()}` : '';
  if (name === 'NoSuchBucket') return `there is no bucket of that name (NoSuchBucket); create it, or correct PLINTH_S3_BUCKET`;
  if (BAD_CREDENTIALS.has(name)) {
    return `the credentials were refused (${name}${words}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN)`;
  }
  if (name === 'CredentialsProviderError') return `no credentials were found (${failure.message}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
  if (name === 'AccessDenied' || status === 403) {
    return `access was denied (${name || 'HTTP 403'}${words}); the credentials must be allowed to write, read, list and delete objects in it`;
  }
  if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || status === 301) {
    return `the bucket is in another region than PLINTH_S3_REGION (${options.region}) (${name || 'HTTP 301'}${words})`;
  }
  if (code === 'PROBE_MISMATCH') return `an object written to it did not read back the same (${failure.message})`;
  const network = unreachableCause(err);
  if (network !== undefined) {
    return `${options.endpoint ?? 'the endpoint'} cannot be reached (${network}); check PLINTH_S3_ENDPOINT and that the store runs`;
  }
  return `it answered ${name || (status !== undefined ? `HTTP ${status}` : 'an error')}${words}`;
}

/** The network failure under `err`, if that is what it is: its code and words. */
function unreachableCause(err: unknown): string | undefined {
  for (let candidate = err as SdkFailure | undefined, depth = 0; candidate && depth < 5; depth++) {
    const errors = Array.isArray(candidate.errors) ? (candidate.errors as SdkFailure[]) : [];
    for (const failure of [candidate, ...errors]) {
      const code = String(failure.code ?? failure.name ?? '');
      if (UNREACHABLE.has(code)) return typeof failure.message === 'string' && failure.message !== '' ? failure.message : code;
    }
    candidate = candidate.cause as SdkFailure | undefined;
  }
  return undefined;
}
