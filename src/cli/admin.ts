import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig } from '../config.js';
import { backupCommand } from './backup.js';
import { PLAN_TITLES } from '../rules/index.js';
import { newApiToken } from '../sites/index.js';
import { hashToken, openStore, type AccountRecord, type ReportRecord, type Role, type SiteRecord, type Store } from '../store/index.js';

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

Plans: Free, Prompter, Builder, Team, Company (any case).`;

export interface AdminCommandOptions {
  args: readonly string[];
  /** Environment for `loadConfig` (PLINTH_DATA_DIR). */
  env: Record<string, string | undefined>;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Wrong arguments: the caller prints the usage text and exits 2. */
class UsageError extends Error {}
/** A refused operation (unknown account, duplicate e-mail…): exit 1. */
class AdminError extends Error {}

type AccountPlan = AccountRecord['plan'];
const PLANS = Object.keys(PLAN_TITLES).filter((plan): plan is AccountPlan => plan !== 'anonymous');
const ROLES: readonly Role[] = ['viewer', 'editor', 'owner'];
// Deliberately loose: one @, no spaces, a dot in the domain. Delivery is the real check.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

interface Command {
  options: ParseArgsConfig['options'];
  positionals?: number;
  run(store: Store, values: Record<string, string | undefined>, positionals: string[]): Promise<Output>;
}

/** What a command prints: `stdout` is the result, `note` goes to stderr for the person. */
interface Output {
  stdout: string;
  note?: string;
}

const json = (value: unknown): Output => ({ stdout: JSON.stringify(value, null, 2) });

const COMMANDS: Record<string, Command> = {
  'account create': {
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    async run(store, values) {
      const email = parseEmail(values.email);
      const plan = values.plan === undefined ? 'free' : parsePlan(values.plan);
      const account = await store.createAccount({ email, plan });
      if (!account) throw new AdminError(`an account with e-mail ${email} already exists`);
      return json(accountView(account));
    },
  },
  'account set-plan': {
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    async run(store, values) {
      const account = findAccount(store, values.email);
      const plan = parsePlan(required(values.plan, '--plan'));
      const updated = await store.setAccountPlan(account.id, plan);
      if (!updated) throw new AdminError(`no account with e-mail ${account.email}`);
      return json(accountView(updated));
    },
  },
  'token create': {
    options: { email: { type: 'string' }, name: { type: 'string' } },
    async run(store, values) {
      const account = findAccount(store, values.email);
      const name = values.name?.trim() || 'cli';
      const token = newApiToken();
      await store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name });
      return { stdout: token, note: 'Keep this token now: only its hash is stored, so it cannot be shown again.' };
    },
  },
  'member add': {
    options: { site: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
    async run(store, values) {
      const site = findSite(store, required(values.site, '--site'));
      const account = findAccount(store, values.email);
      const role = parseRole(required(values.role, '--role'));
      if (site.state === 'deleted') throw new AdminError(`site ${site.name} was deleted`);
      await store.setMember(site.id, account.id, role);
      return json({ site: site.name, email: account.email, role });
    },
  },
  'site takedown': {
    options: {},
    positionals: 1,
    run: (store, _values, [name]) => changeSiteState(store, name!, 'taken_down'),
  },
  'site restore': {
    options: {},
    positionals: 1,
    run: (store, _values, [name]) => changeSiteState(store, name!, 'active'),
  },
  'report list': {
    options: { status: { type: 'string' } },
    async run(store, values) {
      const status = (values.status ?? 'open').toLowerCase();
      if (!['open', 'resolved', 'all'].includes(status)) throw new UsageError('--status is open, resolved or all');
      const reports = store.listReports(status === 'all' ? {} : { status: status as 'open' | 'resolved' });
      return { stdout: reports.map((report) => JSON.stringify(reportView(report))).join('\n'), note: reports.length === 0 ? `no ${status === 'all' ? '' : `${status} `}reports` : undefined };
    },
  },
  'report resolve': {
    options: { note: { type: 'string' } },
    positionals: 1,
    async run(store, values, [id]) {
      const report = await store.resolveReport(id!.trim(), values.note?.trim() || undefined);
      if (!report) throw new AdminError(`no report ${id}`);
      return json(reportView(report));
    },
  },
};

/**
 * `plinth admin …`: operator commands on the data directory. LMDB allows several processes on one
 * environment, so this works while the server runs; the serving threads' site cache expires
 * within a second, so a takedown shows there shortly after.
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
      throw new UsageError(wanted === 0 ? `unexpected argument "${positionals[0]}"` : `admin ${key} takes exactly one ${group === 'report' ? 'report id' : 'site name'}`);
    }
  } catch (err) {
    return usageError(options, err instanceof Error ? err.message : String(err));
  }

  const { dataDir } = loadConfig(options.env);
  const store = openStore({ dir: dataDir });
  try {
    const output = await command.run(store, values, positionals);
    options.out(output.stdout);
    if (output.note !== undefined) options.err(output.note);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) return usageError(options, err.message);
    if (err instanceof AdminError) {
      options.err(`plinth: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
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

function parseEmail(raw: string | undefined): string {
  const email = required(raw, '--email').toLowerCase();
  if (email.length > 254 || !EMAIL_PATTERN.test(email)) throw new AdminError(`"${raw}" is not a valid e-mail address`);
  return email;
}

function parsePlan(raw: string): AccountPlan {
  const plan = raw.trim().toLowerCase();
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw new AdminError(`unknown plan "${raw}"; plans: ${PLANS.map((p) => PLAN_TITLES[p]).join(', ')}`);
  }
  return plan as AccountPlan;
}

function parseRole(raw: string): Role {
  const role = raw.toLowerCase();
  if (!(ROLES as readonly string[]).includes(role)) throw new AdminError(`unknown role "${raw}"; roles: ${ROLES.join(', ')}`);
  return role as Role;
}

function findAccount(store: Store, raw: string | undefined): AccountRecord {
  const email = required(raw, '--email');
  const account = store.getAccountByEmail(email);
  if (!account) throw new AdminError(`no account with e-mail ${email}`);
  return account;
}

function findSite(store: Store, name: string): SiteRecord {
  const site = store.getSite(name.trim().toLowerCase());
  if (!site) throw new AdminError(`no site named ${name}`);
  return site;
}

async function changeSiteState(store: Store, name: string, state: 'active' | 'taken_down'): Promise<Output> {
  const site = findSite(store, name);
  // A deleted site stays deleted: restoring it here would bring back a site its owner removed.
  if (site.state === 'deleted') throw new AdminError(`site ${site.name} was deleted`);
  const updated = await store.setSiteState(site.name, state);
  if (!updated) throw new AdminError(`no site named ${name}`);
  return json({ name: updated.name, state: updated.state, state_changed_at: iso(updated.stateChangedAt ?? Date.now()) });
}

function reportView(report: ReportRecord) {
  return {
    id: report.id,
    site: report.site,
    reason: report.reason,
    details: report.details,
    contact: report.contact ?? null,
    network: report.network,
    status: report.status,
    created_at: iso(report.createdAt),
    ...(report.resolvedAt !== undefined ? { resolved_at: iso(report.resolvedAt) } : {}),
    ...(report.note !== undefined ? { note: report.note } : {}),
  };
}

function accountView(account: AccountRecord) {
  return { id: account.id, email: account.email, plan: account.plan, created_at: iso(account.createdAt) };
}

const iso = (ms: number): string => new Date(ms).toISOString();
