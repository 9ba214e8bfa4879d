import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { bucketOptionsOf, moveToCluster } from '../store/index.js';

export interface MigrateCommandOptions {
  /** The arguments after `migrate`. */
  args: readonly string[];
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

const USAGE = 'Usage: plinth admin migrate --to-cluster   (PLINTH_DATA_DIR: the stopped install; PLINTH_DATABASE_URL and PLINTH_S3_*: the cluster)';

/**
 * `plinth admin migrate --to-cluster` moves the embedded install at $PLINTH_DATA_DIR (server
 * stopped) into the cluster its settings name: blobs into the bucket, records into an empty
 * PostgreSQL, each verified. Prints a JSON report. Exit 2 for wrong arguments, 1 for a refusal.
 */
export async function migrateCommand(options: MigrateCommandOptions): Promise<number> {
  let toCluster: boolean | undefined;
  try {
    const parsed = parseArgs({ args: [...options.args], options: { 'to-cluster': { type: 'boolean' } }, strict: true, allowPositionals: false });
    toCluster = parsed.values['to-cluster'];
  } catch (err) {
    options.err(`plinth: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (!toCluster) {
    options.err(`plinth: admin migrate needs --to-cluster\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(options.env);
  const bucket = bucketOptionsOf(config);
  if (config.databaseUrl === undefined && bucket === undefined) {
    options.err('plinth: set PLINTH_DATABASE_URL (records) and PLINTH_S3_BUCKET (blobs), or either one, to the cluster to move into.');
    return 1;
  }
  try {
    const report = await moveToCluster(config.dataDir, { databaseUrl: config.databaseUrl, bucket });
    options.out(JSON.stringify({ moved: config.dataDir, ...report }, null, 2));
    options.err(
      `Done. Start the nodes with the same PLINTH_DATABASE_URL${bucket ? ' and PLINTH_S3_*' : ''} settings; this data directory can serve as one node's (its replica is rebuilt at start-up), and no longer starts without them.`,
    );
    return 0;
  } catch (err) {
    options.err(`plinth: migrate failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
