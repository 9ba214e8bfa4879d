import { resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { backupCluster, bucketOptionsOf, restoreCluster } from '../store/index.js';

export interface ClusterBackupCommandOptions {
  command: 'backup-cluster' | 'restore-cluster';
  /** The arguments after the command. */
  args: readonly string[];
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * `plinth admin backup-cluster <dir>` copies a cluster's records (pg_dump) and bucket into a new
 * folder while the nodes run; `plinth admin restore-cluster <dir>` puts one back, with every node
 * stopped. deploy/backup-cluster.sh and deploy/restore-cluster.sh run them with the nodes'
 * settings. Both print a JSON report. Exit 2 for wrong arguments, 1 for a refusal or a failure.
 */
export async function clusterBackupCommand(options: ClusterBackupCommandOptions): Promise<number> {
  const { command } = options;
  if (options.args.length !== 1 || options.args[0]!.startsWith('-')) {
    options.err(`plinth: admin ${command} takes exactly one folder\nUsage: plinth admin ${command} <dir>`);
    return 2;
  }
  const dir = resolve(options.args[0]!);
  const config = loadConfig(options.env);
  const bucket = bucketOptionsOf(config);
  if (config.databaseUrl === undefined || bucket === undefined) {
    options.err(
      `plinth: admin ${command} works on a cluster: set PLINTH_DATABASE_URL and PLINTH_S3_* as the nodes have them. An embedded install uses plinth admin ${command === 'backup-cluster' ? 'backup' : 'restore'}.`,
    );
    return 1;
  }
  const note = (line: string): void => options.err(line);
  try {
    if (command === 'backup-cluster') {
      const report = await backupCluster({ databaseUrl: config.databaseUrl, bucket, target: dir, note });
      options.out(JSON.stringify({ backup: dir, ...report }, null, 2));
    } else {
      const report = await restoreCluster({ databaseUrl: config.databaseUrl, bucket, source: dir, note });
      options.out(JSON.stringify({ restored: dir, ...report }, null, 2));
      options.err('Done. Start the nodes: a node whose replica is ahead of the restored records rebuilds it at start-up.');
    }
    return 0;
  } catch (err) {
    options.err(`plinth: ${command} failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
