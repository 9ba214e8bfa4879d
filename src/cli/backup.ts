import { resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { backupDataDir, restoreDataDir } from '../store/index.js';

export interface BackupCommandOptions {
  command: 'backup' | 'restore';
  /** The positional arguments after the command. */
  args: readonly string[];
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

/**
 * `plinth admin backup <dir>` copies a consistent snapshot of $PLINTH_DATA_DIR (the LMDB index and
 * the blobs it references) while the server runs; `plinth admin restore <dir>` puts one into an
 * empty $PLINTH_DATA_DIR. Both print a JSON report. Exit 2 for wrong arguments, 1 for a refusal
 * (among them any use with a blob bucket, whose blobs are not in the data directory).
 */
export async function backupCommand(options: BackupCommandOptions): Promise<number> {
  if (options.args.length !== 1 || options.args[0]!.startsWith('-')) {
    options.err(`plinth: admin ${options.command} takes exactly one folder\nUsage: plinth admin ${options.command} <dir>`);
    return 2;
  }
  const dir = resolve(options.args[0]!);
  const { dataDir, databaseUrl, blobs } = loadConfig(options.env);
  if (databaseUrl !== undefined) {
    // A node's data directory is a replica and a cache; the records are in PostgreSQL.
    options.err(
      `plinth: admin ${options.command} is for the embedded store. In a cluster, use plinth admin ${options.command}-cluster (deploy/${options.command}-cluster.sh), or PostgreSQL's point-in-time recovery and the bucket's versioning; see docs/operating.md.`,
    );
    return 1;
  }
  if (blobs.bucket !== undefined) {
    // The data directory holds only this node's cache of the blobs; a copy of it would not be
    // a backup, and a restore would put back an index whose blobs it does not have.
    options.err(
      `plinth: admin ${options.command} works on a data directory that holds every blob, but with PLINTH_S3_BUCKET set the blobs live in the bucket "${blobs.bucket}". ` +
        "Back up the blobs with the bucket's own tools: versioning, and replication to another bucket or region.",
    );
    return 1;
  }
  try {
    if (options.command === 'backup') {
      const report = await backupDataDir({ dataDir, target: dir });
      options.out(JSON.stringify({ backup: dir, ...report }, null, 2));
    } else {
      const report = await restoreDataDir({ backup: dir, dataDir });
      options.out(JSON.stringify({ restored: dataDir, from: dir, ...report }, null, 2));
    }
    return 0;
  } catch (err) {
    options.err(`plinth: ${options.command} failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
