import { ServiceError } from '../errors.js';
import { ACCOUNT_PLANS, normaliseEmail, parseAccountPlan, parseRole, PLAN_TITLES, ROLES, type AccountPlan, type Role } from '../rules/index.js';
import { hashToken, type AccountRecord, type ReportRecord, type SiteRecord } from '../store/index.js';
import type { OperationsDeps } from './deps.js';
import { recordEvent } from './events.js';
import { reportOperations } from './reports.js';
import { newApiToken, parseTokenName } from './tokens.js';
import { iso } from './views.js';

/**
 * What the operator of an installation does from the command line (`plinth admin`): accounts,
 * plans, tokens, members, takedowns and abuse reports. The operator is trusted, so there is no
 * caller to check; every other rule (e-mail syntax, plan and role names, a deleted site staying
 * deleted) is the one the other operations use.
 */
export interface OperatorOperations {
  createAccount(input: { email: unknown; plan?: unknown }): Promise<AccountView>;
  setPlan(input: { email: unknown; plan: unknown }): Promise<AccountView>;
  /** A new API token for the account; the token is in the answer only, never stored. */
  createToken(input: { email: unknown; name?: unknown }): Promise<{ token: string }>;
  /** Makes an existing account a member of a site (or changes its role). */
  addMember(input: { site: unknown; email: unknown; role: unknown }): Promise<{ site: string; email: string; role: Role }>;
  /** Takes a site down for abuse (serving answers 451) or makes it active again. */
  setSiteState(name: unknown, state: 'active' | 'taken_down'): Promise<SiteStateView>;
  listReports(status: 'open' | 'resolved' | 'all'): ReportView[];
  resolveReport(id: unknown, note?: unknown): Promise<ReportView>;
}

export interface AccountView {
  id: string;
  email: string;
  plan: AccountPlan;
  created_at: string;
}

export interface SiteStateView {
  name: string;
  state: SiteRecord['state'];
  state_changed_at: string;
}

export interface ReportView {
  id: string;
  site: string;
  reason: ReportRecord['reason'];
  details: string;
  contact: string | null;
  network: string;
  status: ReportRecord['status'];
  created_at: string;
  resolved_at?: string;
  note?: string;
}

const accountView = (account: AccountRecord): AccountView => ({
  id: account.id,
  email: account.email,
  plan: account.plan as AccountPlan,
  created_at: iso(account.createdAt),
});

function reportView(report: ReportRecord): ReportView {
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

function emailOf(raw: unknown): string {
  const email = normaliseEmail(raw);
  if (email === undefined) throw new ServiceError('bad_request', `"${String(raw ?? '')}" is not a valid e-mail address.`, { details: { field: 'email' } });
  return email;
}

function planOf(raw: unknown): AccountPlan {
  const plan = parseAccountPlan(raw);
  if (plan === undefined) {
    throw new ServiceError('bad_request', `Unknown plan "${String(raw ?? '')}"; plans: ${ACCOUNT_PLANS.map((p) => PLAN_TITLES[p]).join(', ')}.`, {
      details: { field: 'plan' },
    });
  }
  return plan;
}

function roleOf(raw: unknown): Role {
  const role = parseRole(raw);
  if (role === undefined)
    throw new ServiceError('bad_request', `Unknown role "${String(raw ?? '')}"; roles: ${ROLES.join(', ')}.`, { details: { field: 'role' } });
  return role;
}

const OPERATOR = { kind: 'operator' } as const;

export function operatorOperations(deps: Pick<OperationsDeps, 'store' | 'config' | 'log' | 'mailer' | 'now'>): OperatorOperations {
  const { store, log } = deps;
  const reports = reportOperations(deps);

  function findAccount(raw: unknown): AccountRecord {
    const email = emailOf(raw);
    const account = store.getAccountByEmail(email);
    if (!account) throw new ServiceError('not_found', `There is no account with e-mail ${email}.`);
    return account;
  }

  function findSite(raw: unknown): SiteRecord {
    const name = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    const site = name === '' ? undefined : store.getSite(name);
    if (!site) throw new ServiceError('not_found', `There is no site named ${String(raw ?? '')}.`);
    return site;
  }

  return {
    async createAccount(input) {
      const email = emailOf(input.email);
      const plan = input.plan === undefined ? 'free' : planOf(input.plan);
      const account = await store.createAccount({ email, plan });
      if (!account) throw new ServiceError('conflict', `An account with e-mail ${email} already exists.`);
      log.info({ account: account.id, plan }, 'operator.account_created');
      return accountView(account);
    },

    async setPlan(input) {
      const account = findAccount(input.email);
      const plan = planOf(input.plan);
      const updated = await store.setAccountPlan(account.id, plan);
      if (!updated) throw new ServiceError('not_found', `There is no account with e-mail ${account.email}.`);
      log.info({ account: account.id, plan }, 'operator.plan_set');
      return accountView(updated);
    },

    async createToken(input) {
      const account = findAccount(input.email);
      const name = parseTokenName(input.name === undefined || input.name === '' ? 'cli' : input.name);
      const token = newApiToken();
      const info = await store.addApiToken({ accountId: account.id, tokenHash: hashToken(token), name });
      log.info({ account: account.id }, 'operator.token_created');
      await recordEvent(deps, OPERATOR, { kind: 'token.created', accountId: account.id, details: { token: info.id, name } });
      return { token };
    },

    async addMember(input) {
      const site = findSite(input.site);
      const account = findAccount(input.email);
      const role = roleOf(input.role);
      if (site.state === 'deleted') throw new ServiceError('gone', `The site ${site.name} was deleted.`);
      const before = store.getRole(site.id, account.id);
      await store.setMember(site.id, account.id, role);
      await recordEvent(deps, OPERATOR, {
        kind: before === undefined ? 'member.joined' : 'member.role_changed',
        site,
        accountId: account.id,
        details: { email: account.email, role, ...(before !== undefined ? { from: before } : {}) },
      });
      log.info({ site: site.name, account: account.id, role }, 'operator.member_set');
      return { site: site.name, email: account.email, role };
    },

    async setSiteState(raw, state) {
      const site = findSite(raw);
      const result = await store.setSiteState(site.name, state);
      // A deleted site stays deleted: restoring it would bring back a site its owner removed.
      if (!result.ok && result.reason === 'deleted') throw new ServiceError('gone', `The site ${site.name} was deleted.`);
      if (!result.ok) throw new ServiceError('not_found', `There is no site named ${site.name}.`);
      log.info({ site: site.name, state }, 'operator.site_state');
      await recordEvent(deps, OPERATOR, { kind: state === 'taken_down' ? 'site.taken_down' : 'site.restored', site: result.site, details: { state } });
      return { name: result.site.name, state: result.site.state, state_changed_at: iso(result.site.stateChangedAt ?? deps.now()) };
    },

    listReports(status) {
      return reports.list(status === 'all' ? {} : { status }).map(reportView);
    },

    async resolveReport(id, note) {
      const text = typeof note === 'string' && note.trim() !== '' ? note.trim() : undefined;
      return reportView(await reports.resolve(String(id ?? '').trim(), text));
    },
  };
}
