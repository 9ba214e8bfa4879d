import { siteUrl } from '../config.js';
import { ACCOUNT_PLANS, PLAN_LIMITS, PLAN_TITLES, type AccountPlan } from '../rules/index.js';
import type { AccountRecord } from '../store/index.js';
import { requireAccount } from './authorization.js';
import type { Caller } from './callers.js';
import type { OperationsDeps } from './deps.js';
import { sitesLimitOf } from './limits.js';
import type { MeView as MeShape } from '../contract/index.js';

export type MeView = MeShape;

export interface PlanRow {
  id: AccountPlan;
  title: string;
  sites: number;
  files_per_site: number;
  bytes_per_file: number;
  bytes_per_site: number;
  history_days: number;
}

/** Usage against every limit of SPEC 8, for the billing page. */
export interface UsageView {
  plan: PlanRow;
  sites: { used: number; limit: number };
  /** Owned sites with their live revision's size against the per-site limits. */
  owned: Array<{ name: string; url: string; files: number; bytes: number }>;
  /** Bytes of every owned site's live revision together. */
  storage_bytes: number;
  plans: PlanRow[];
}

const DAY_MS = 24 * 3600_000;

export interface AccountOperations {
  /** `GET /v1/me` (SPEC 4.4). */
  me(caller: Caller): MeView;
  usage(caller: Caller): UsageView;
  /** The plan table every page that explains plans uses. */
  plans(): PlanRow[];
}

export function accountOperations(deps: OperationsDeps): AccountOperations {
  const { store, config } = deps;

  const planRow = (plan: AccountPlan): PlanRow => {
    const limits = PLAN_LIMITS[plan];
    return {
      id: plan,
      title: PLAN_TITLES[plan],
      sites: config.api.sitesLimit[plan],
      files_per_site: limits.maxFiles,
      bytes_per_file: limits.maxFileBytes,
      bytes_per_site: limits.maxSiteBytes,
      history_days: Math.round(limits.historyReachMs / DAY_MS),
    };
  };

  function ownedSites(account: AccountRecord): UsageView['owned'] {
    const owned: UsageView['owned'] = [];
    let after: string | undefined;
    do {
      const page = store.listSitesOf(account.id, { after, limit: 200 });
      for (const { site, role } of page.sites) {
        if (role !== 'owner') continue;
        const live = site.liveRevision ? store.getRevision(site.liveRevision) : undefined;
        owned.push({ name: site.name, url: siteUrl(config.publicUrls, site.name), files: live?.files ?? 0, bytes: live?.bytes ?? 0 });
      }
      after = page.nextAfter;
    } while (after !== undefined);
    return owned;
  }

  return {
    me(caller) {
      const account = requireAccount(caller, 'GET /v1/me');
      return { email: account.email, plan: account.plan, sites_used: store.countOwnedSites(account.id), sites_limit: sitesLimitOf(config, account) };
    },
    usage(caller) {
      const account = requireAccount(caller, 'viewing usage');
      const owned = ownedSites(account);
      return {
        plan: planRow(account.plan),
        sites: { used: owned.length, limit: sitesLimitOf(config, account) },
        owned,
        storage_bytes: owned.reduce((sum, site) => sum + site.bytes, 0),
        plans: ACCOUNT_PLANS.map(planRow),
      };
    },
    plans: () => ACCOUNT_PLANS.map(planRow),
  };
}
