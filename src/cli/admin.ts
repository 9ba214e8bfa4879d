import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import { createLogger } from '../log.js';
import { ACCOUNT_PLANS, PLAN_TITLES } from '../rules/index.js';
import { createMailer } from '../outbound/index.js';
import { operatorOperations, type OperatorOperations } from '../sites/index.js';
import { connectStore, type Store } from '../store/index.js';
import { backupCommand } from './backup.js';
import { clusterBackupCommand } from './cluster-backup.js';
import { bucketCommand } from './bucket.js';
import { migrateCommand } from './migrate.js';
import { UsageError } from './usage.js';

export const ADMIN_USAGE = `Usage: plinth admin <command>   (works on $PLINTH_DATA_DIR directly, also while the server runs)
  account create --email E [--plan P]     create an account (default plan Free); prints it as JSON
  account set-plan --email E --plan P     change an account's plan; prints it as JSON
  token create --email E [--name N]       create an API token (pl_…); prints it once
  member add --site S --email E --role R  add an existing account to a site (viewer, editor, owner)
  site takedown <name>                    take a site down for abuse (serving answers 451)
  site restore <name>                     make a taken-down site active again
  report list [--status open|resolved|all]
                                          abuse reports as JSON lines, oldest first (default: open)
  report resolve <id> [--note TEXT]       mark a report resolved; prints it as JSON
  backup <dir>                            copy a consistent snapshot (index + blobs) into an empty folder
  restore <dir>                           restore a backup into an empty PLINTH_DATA_DIR (server stopped)
  migrate --to-cluster                    move this install (server stopped) into the PostgreSQL and bucket
                                          of PLINTH_DATABASE_URL and PLINTH_S3_*, verified; prints a report
  backup-cluster <dir>                    copy a cluster's records (pg_dump) and bucket into a new folder,
                                          while the nodes run
  restore-cluster <dir>                   put a cluster backup back (every node stopped; pg_restore)
  bucket adopt                            mark the bucket of PLINTH_S3_* as this installation's (the cluster
                                          of PLINTH_DATABASE_URL, else this install), whoever it belonged to

Plans: ${ACCOUNT_PLANS.map((plan) => PLAN_TITLES[plan]).join(', ')} (any case).`;

export interface AdminCommandOptions {
  args: readonly string[];
  /** Environment for `loadConfig` (PLINTH_DATA_DIR). */
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

interface Command {
  options: ParseArgsConfig['options'];
  positionals?: number;
  run(ops: OperatorOperations, values: Record<string, string | undefined>, positionals: string[]): Promise<Output>;
}

/** What a command prints: `stdout` is the result, `note` goes to stderr for the person. */
interface Output {
  stdout: string;
  note?: string;
}

const json = (value: unknown): Output => ({ stdout: JSON.stringify(value, null, 2) });
const REPORT_STATUSES = ['open', 'resolved', 'all'] as const;

/** Each command parses its arguments and calls one operator operation; the rules live there. */
const COMMANDS: Record<string, Command> = {
  'account create': {
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    run: async (ops, values) => json(await ops.createAccount({ email: required(values.email, '--email'), plan: values.plan })),
  },
  'account set-plan': {
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    run: async (ops, values) => json(await ops.setPlan({ email: required(values.email, '--email'), plan: required(values.plan, '--plan') })),
  },
  'token create': {
    options: { email: { type: 'string' }, name: { type: 'string' } },
    async run(ops, values) {
      const { token } = await ops.createToken({ email: required(values.email, '--email'), name: values.name?.trim() || undefined });
      return { stdout: token, note: 'Keep this token now: only its hash is stored, so it cannot be shown again.' };
    },
  },
  'member add': {
    options: { site: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    run: async (ops, values) =>
      json(await ops.addMember({ site: required(values.site, '--site'), email: required(values.email, '--email'), role: required(values.role, '--role') })),
  },
  'site takedown': {
    options: {},
    positionals: 1,
    run: async (ops, _values, [name]) => json(await ops.setSiteState(name, 'taken_down')),
  },
  'site restore': {
    options: {},
    positionals: 1,
    run: async (ops, _values, [name]) => json(await ops.setSiteState(name, 'active')),
  },
  'report list': {
    options: { status: { type: 'string' } },
    async run(ops, values) {
      const status = (values.status ?? 'open').toLowerCase();
      if (!(REPORT_STATUSES as readonly string[]).includes(status)) throw new UsageError('--status is open, resolved or all');
      const reports = ops.listReports(status as (typeof REPORT_STATUSES)[number]);
      return {
        stdout: reports.map((report) => JSON.stringify(report)).join('\n'),
        note: reports.length === 0 ? `no ${status === 'all' ? '' : `${status} `}reports` : undefined,
      };
    },
  },
  'report resolve': {
    options: { note: { type: 'string' } },
    positionals: 1,
    run: async (ops, values, [id]) => json(await ops.resolveReport(id, values.note)),
  },
};

/**
 * `plinth admin …`: operator commands on the data directory. LMDB allows several processes on one
 * environment, so this works while the server runs; serving threads see a change the next time
 * they check the store's change marks (within a second).
 */
export async function adminCommand(options: AdminCommandOptions): Promise<number> {
  const [group, action, ...rest] = options.args;
  if (group === undefined) return usageError(options, 'admin needs a command');
  if (group === 'help' || group === '--help' || group === '-h') {
    options.out(ADMIN_USAGE);
    return 0;
  }
  if (group === 'backup' || group === 'restore') {
    return backupCommand({ command: group, args: options.args.slice(1), env: options.env, out: options.out, err: options.err });
  }
  if (group === 'backup-cluster' || group === 'restore-cluster') {
    return clusterBackupCommand({ command: group, args: options.args.slice(1), env: options.env, out: options.out, err: options.err });
  }
  if (group === 'migrate') return migrateCommand({ args: options.args.slice(1), env: options.env, out: options.out, err: options.err });
  if (group === 'bucket') {
    return bucketCommand({
      args: options.args.slice(1),
      env: options.env,
      out: options.out,
      err: options.err,
      openStore: (config) => openAdminStore(config, options.err),
    });
  }
  const key = `${group} ${action ?? ''}`;
  const command = COMMANDS[key];
  if (command === undefined) return usageError(options, `unknown admin command "${key.trim()}"`);

  let values: Record<string, string | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs({ args: [...rest], options: command.options, allowPositionals: true, strict: true });
    values = parsed.values as Record<string, string | undefined>;
    positionals = parsed.positionals;
    const wanted = command.positionals ?? 0;
    if (positionals.length !== wanted) {
      throw new UsageError(
        wanted === 0 ? `unexpected argument "${positionals[0]}"` : `admin ${key} takes exactly one ${group === 'report' ? 'report id' : 'site name'}`,
      );
    }
  } catch (err) {
    return usageError(options, err instanceof Error ? err.message : String(err));
  }

  const config = loadConfig(options.env);
  const log = createLogger({ level: 'silent' });
  const store = await openAdminStore(config, options.err);
  if (store === undefined) return 1;
  const ops = operatorOperations({
    store,
    config,
    log,
    // In a cluster, PostgreSQL's time (database-clock.ts), whatever this machine's clock says.
    now: store.now,
    mailer: createMailer({ config: config.mail, dataDir: config.dataDir, log, now: store.now }),
  });
  try {
    const output = await command.run(ops, values, positionals);
    options.out(output.stdout);
    if (output.note !== undefined) options.err(output.note);
    return 0;
  } catch (err: unknown) {
    if (err instanceof UsageError) return usageError(options, err.message);
    // A refusal of the operation (unknown account, duplicate e-mail, a deleted site…): exit 1.
    const code = (err as { code?: string }).code;
    if (code !== undefined && code !== 'internal') {
      options.err(`plinth: ${(err as Error).message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}

/**
 * The store as every admin command opens it: in a cluster the data directory only holds this
 * command's replica and PostgreSQL is the record. `undefined` after saying why it cannot open
 * (PostgreSQL unreachable, or a data directory that cannot serve as this cluster's replica).
 */
export async function openAdminStore(config: Readonly<Config>, err: (line: string) => void): Promise<Store | undefined> {
  try {
    return await connectStore({
      dir: config.dataDir,
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl, bootstrap: true, origin: `${process.pid}/admin` } : {}),
    });
  } catch (error) {
    err(`plinth: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

function usageError(options: AdminCommandOptions, message: string): number {
  options.err(`plinth: ${message}\n${ADMIN_USAGE}`);
  return 2;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value.trim();
}
