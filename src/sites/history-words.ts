import { ACCOUNT_PLANS, PLAN_LIMITS, PLAN_TITLES, type Plan } from '../rules/index.js';

/**
 * What agents are told about revision history: an unclaimed site reaches only its live revision,
 * and its replaced revisions are deleted by the sweeper's next pass (hourly by default); once
 * claimed, those not deleted yet come back within the account's plan's reach.
 */

const DAY_MS = 24 * 3600_000;

/** `7 days`, `1 year`, `2 years`. */
export function reachWords(ms: number): string {
  if (ms === 0) return 'the live revision only';
  const years = ms / (365 * DAY_MS);
  if (Number.isInteger(years)) return years === 1 ? '1 year' : `${years} years`;
  const days = Math.round(ms / DAY_MS);
  return days === 1 ? '1 day' : `${days} days`;
}

/** "Free 7 days, Prompter 90 days, …" for every account plan. */
export function reachByPlan(): string {
  return ACCOUNT_PLANS.map((plan) => `${PLAN_TITLES[plan]} ${reachWords(PLAN_LIMITS[plan].historyReachMs)}`).join(', ');
}

/** The sentence a claim poll adds: which earlier revisions the account's plan brings back. */
export function historyAfterClaim(name: string, plan: Plan): string {
  const reach = PLAN_LIMITS[plan].historyReachMs;
  if (reach === 0) return '';
  return ` Its earlier revisions that the periodic clean-up had not yet deleted are back within reach under the account's ${PLAN_TITLES[plan]} plan (${reachWords(reach)} of history): with an API token of the account, GET /v1/sites/${name}/revisions lists them and POST /v1/sites/${name}/rollback makes one live again.`;
}

/** The way out when an unclaimed site is asked to roll back: it has nothing earlier in reach. */
export function anonymousRollbackAdvice(name: string): string {
  return (
    `${name} is not claimed, and an unclaimed site keeps only its live revision, so there is nothing earlier to roll back to. ` +
    `To go back now, deploy the earlier files again with the live revision as the base revision. ` +
    `Or ask your user to claim the site soon with its claim link: in an account, its earlier revisions that the periodic clean-up has not yet deleted come back within the plan's history reach (${reachByPlan()}), and the rollback then works with an API token of that account.`
  );
}
