/** Every plan a site can have; anonymous sites have no account. SPEC 2 names the rest. */
export const PLANS = ['anonymous', 'free', 'prompter', 'builder', 'team', 'company'] as const;
export type Plan = (typeof PLANS)[number];
/** The plans an account can have. */
export type AccountPlan = Exclude<Plan, 'anonymous'>;
export const ACCOUNT_PLANS: readonly AccountPlan[] = PLANS.filter((plan): plan is AccountPlan => plan !== 'anonymous');

/** An account plan named in any case (`Builder`, `builder`), or undefined. */
export function parseAccountPlan(raw: unknown): AccountPlan | undefined {
  const plan = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  return (ACCOUNT_PLANS as readonly string[]).includes(plan) ? (plan as AccountPlan) : undefined;
}

/** Size and count limits of one tier (SPEC 8). */
export interface TierLimits {
  maxFiles: number;
  maxFileBytes: number;
  /** Whole live site after the deploy; on paid plans, all of the plan's storage. */
  maxSiteBytes: number;
  /** Revisions older than this are out of reach; `0` means only the live revision. */
  historyReachMs: number;
}

const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;
const DAY = 24 * 3600 * 1000;

export const PLAN_LIMITS: Readonly<Record<Plan, Readonly<TierLimits>>> = {
  anonymous: { maxFiles: 100, maxFileBytes: 1 * MB, maxSiteBytes: 1 * MB, historyReachMs: 0 },
  free: { maxFiles: 500, maxFileBytes: 5 * MB, maxSiteBytes: 5 * MB, historyReachMs: 7 * DAY },
  prompter: { maxFiles: 1000, maxFileBytes: 50 * MB, maxSiteBytes: 5 * GB, historyReachMs: 90 * DAY },
  builder: { maxFiles: 2000, maxFileBytes: 50 * MB, maxSiteBytes: 25 * GB, historyReachMs: 365 * DAY },
  team: { maxFiles: 3000, maxFileBytes: 50 * MB, maxSiteBytes: 50 * GB, historyReachMs: 365 * DAY },
  company: { maxFiles: 5000, maxFileBytes: 50 * MB, maxSiteBytes: 150 * GB, historyReachMs: 730 * DAY },
};

/** A JSON request body other than a deploy (rename, rollback, invite…) is at most this large. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/** A digest deploy's manifest: the largest plan's 5,000 files with long paths fit in a few MB. */
export const MAX_MANIFEST_BODY_BYTES = 8 * MB;

/** One request carries at most this much (SPEC 8 rule 2); through MCP, less. */
export const MAX_REQUEST_BYTES = 90 * MB;
export const MAX_MCP_REQUEST_BYTES = 40 * MB;

/** Decompressed bytes one request may unpack, whatever the plan: bounds a zip bomb's disk use. */
export const MAX_UNPACKED_BYTES = 1 * GB;

/** Unclaimed anonymous sites live this long. */
export const ANONYMOUS_LIFETIME_MS = 72 * 3600 * 1000;

/** Plans shown to people, in SPEC spelling. */
export const PLAN_TITLES: Readonly<Record<Plan, string>> = {
  anonymous: 'No account',
  free: 'Free',
  prompter: 'Prompter',
  builder: 'Builder',
  team: 'Team',
  company: 'Company',
};

/** Plans whose pages carry the badge. */
export function hasBadge(plan: Plan): boolean {
  return plan === 'anonymous' || plan === 'free';
}
