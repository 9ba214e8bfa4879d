import { loadConfig, type Config } from '../config.js';
import { adoptBucket, bucketOptionsOf, describeOwner, ownerOf, type Store } from '../store/index.js';

export interface BucketCommandOptions {
  /** The arguments after `bucket`. */
  args: readonly string[];
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
  /** The store as every admin command opens it (admin.ts `openAdminStore`); `undefined` once it said why not. */
  openStore: (config: Readonly<Config>) => Promise<Store | undefined>;
}

const USAGE = 'Usage: plinth admin bucket adopt   (with the settings of the installation that is to own PLINTH_S3_BUCKET)';

/**
 * `plinth admin bucket adopt` marks the bucket of `PLINTH_S3_BUCKET` as this installation's (the
 * cluster of PLINTH_DATABASE_URL, else the install in PLINTH_DATA_DIR), whoever it belonged to.
 * Nodes refuse a bucket marked as another installation's; this is the deliberate way past that.
 * Prints the new and the previous owner as JSON. Exit 2 for wrong arguments, 1 for a refusal.
 */
export async function bucketCommand(options: BucketCommandOptions): Promise<number> {
  if (options.args.length !== 1 || options.args[0] !== 'adopt') {
    options.err(`plinth: admin bucket takes one command, adopt\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(options.env);
  const bucket = bucketOptionsOf(config);
  if (bucket === undefined) {
    options.err('plinth: set PLINTH_S3_BUCKET (and the other PLINTH_S3_* settings and credentials) to the bucket to adopt.');
    return 1;
  }
  const store = await options.openStore(config);
  if (store === undefined) return 1;
  try {
    const owner = await ownerOf(store);
    const previous = await adoptBucket(bucket, owner);
    options.out(JSON.stringify({ bucket: bucket.bucket, owner, previous: previous ?? null }, null, 2));
    options.err(
      `The bucket "${bucket.bucket}" belongs to ${describeOwner(owner)} now: its sweeps delete the blobs in it that its records do not reference (once older than PLINTH_BLOB_GRACE_S).`,
    );
    return 0;
  } catch (err) {
    options.err(`plinth: bucket adopt failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await store.close();
  }
}
