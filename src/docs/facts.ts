import type { Config } from '../config.js';
import { ERROR_STATUS } from '../errors.js';
import {
  ACCESS_COOKIE_LIFETIME_MS,
  ACCESS_TICKET_LIFETIME_MS,
  ACCOUNT_PLANS,
  ANONYMOUS_LIFETIME_MS,
  hasBadge,
  MAX_JSON_BODY_BYTES,
  MAX_MANIFEST_BODY_BYTES,
  MAX_MCP_REQUEST_BYTES,
  MAX_REQUEST_BYTES,
  PLAN_LIMITS,
  PLAN_TITLES,
  PREVIEW_LINK_LIFETIME_MS,
  REMOVAL_CONFIRM_MS,
  RESERVED_NAMES,
} from '../rules/index.js';
import {
  ACCESS_TOKEN_LIFETIME_MS,
  APPROVAL_LIFETIME_MS,
  AUTHORIZATION_CODE_LIFETIME_MS,
  bodyTooSlow,
  DEFAULT_PAGE,
  DEVICE_CODE_LIFETIME_MS,
  formatDuration,
  INVITE_LIFETIME_MS,
  MANIFEST_LIFETIME_MS,
  MAX_PAGE,
  REPLAY_LIFETIME_MS,
  requestTooLarge,
  SESSION_LIFETIME_MS,
  SIGN_IN_LIFETIME_MS,
  SIGN_IN_MAX_ATTEMPTS,
} from '../sites/index.js';

/**
 * The numbers the guides quote, from the constants and configuration the code runs with: a guide
 * writes `{{max_request_mb}}` and never a number of its own, so a changed limit changes the docs.
 */

const HOUR = 3600_000;
const KB = 1024;
const MB = 1024 * KB;
const GB = 1024 * MB;

export function formatBytes(bytes: number): string {
  if (bytes >= GB && bytes % GB === 0) return `${bytes / GB} GB`;
  if (bytes >= MB && bytes % MB === 0) return `${bytes / MB} MB`;
  if (bytes >= KB && bytes % KB === 0) return `${bytes / KB} KB`;
  return `${bytes} bytes`;
}

// One formatter for every number: `toLocaleString` makes a new one per call, which was most of
// the time the facts took (they are worked out at each server start).
let numbers: Intl.NumberFormat | undefined;
const count = (n: number): string => (numbers ??= new Intl.NumberFormat('en-US')).format(n);
const capOrOff = (n: number, unit: string): string => (n === 0 ? 'no cap' : `${count(n)} ${unit}`);

/**
 * The one rule for an archive's Content-Type, in every guide that sends one (the API tells JSON
 * from an archive by this header alone, api/deploy.ts; the archive's format by its bytes).
 */
const ARCHIVE_CONTENT_TYPE =
  'Any `Content-Type` but a JSON one will do (`application/gzip`, `application/zip`, `application/x-tar`, `application/octet-stream`, or none): ' +
  'the format is recognised by its bytes. A JSON type (`application/json`, or any type ending in `+json`) means the JSON form instead, so an archive sent with one is refused with `400 bad_request`, naming the header.';

/** Every placeholder a guide may use, with its value for this configuration. */
export function docFacts(config: Readonly<Config>): Record<string, string> {
  const anon = PLAN_LIMITS.anonymous;
  const facts: Record<string, string> = {
    anon_lifetime_hours: String(ANONYMOUS_LIFETIME_MS / HOUR),
    anon_max_files: count(anon.maxFiles),
    anon_max_file: formatBytes(anon.maxFileBytes),
    anon_max_site: formatBytes(anon.maxSiteBytes),
    max_request_mb: String(MAX_REQUEST_BYTES / MB),
    max_mcp_request_mb: String(MAX_MCP_REQUEST_BYTES / MB),
    // Sizes are binary (1 MB = 1,048,576 bytes): "90 MB" is 90 MiB, and the guides say so.
    max_request_bytes: count(MAX_REQUEST_BYTES),
    max_mcp_request_bytes: count(MAX_MCP_REQUEST_BYTES),
    manifest_body_mb: String(MAX_MANIFEST_BODY_BYTES / MB),
    archive_content_type: ARCHIVE_CONTENT_TYPE,
    // The refusals' own words, as every edge sends them (sites/body-limits.ts).
    request_too_large: requestTooLarge(MAX_REQUEST_BYTES).message,
    body_deadline: config.deploy.uploadTimeoutMs === 0 ? 'no deadline' : `${config.deploy.uploadTimeoutMs / 1000} seconds`,
    body_too_slow: bodyTooSlow(config.deploy.uploadTimeoutMs).message,
    anon_sites_per_hour: capOrOff(config.deploy.anonSitesPerHour, 'new sites per hour'),
    anon_deploys_per_hour: capOrOff(config.deploy.anonDeploysPerHour, 'deploys per hour'),
    api_rate_per_credential: capOrOff(config.api.ratePerCredentialPerMinute, 'requests per minute'),
    api_rate_per_network: capOrOff(config.api.ratePerNetworkPerMinute, 'requests per minute'),
    site_password_tries: capOrOff(config.serve.access.passwordTriesPerHour, 'tries per hour'),
    site_password_tries_per_site: capOrOff(config.serve.access.passwordTriesPerSitePerHour, 'tries per hour'),
    invites_per_address: capOrOff(config.app.invitesPerAddressPerHour, 'e-mails per hour'),
    invites_per_account: capOrOff(config.app.invitesPerAccountPerHour, 'e-mails per hour'),
    access_cookie_lifetime: formatDuration(ACCESS_COOKIE_LIFETIME_MS),
    access_ticket_lifetime: formatDuration(ACCESS_TICKET_LIFETIME_MS),
    preview_link_lifetime: formatDuration(PREVIEW_LINK_LIFETIME_MS),
    // 0 lifts our cap, not the SDK's: its transport serves at most 100 messages per batch.
    mcp_max_batch: count(config.mcp.maxBatchMessages || 100),
    approval_lifetime: formatDuration(APPROVAL_LIFETIME_MS),
    invite_lifetime: formatDuration(INVITE_LIFETIME_MS),
    removal_confirm: formatDuration(REMOVAL_CONFIRM_MS),
    page_default: String(DEFAULT_PAGE),
    page_max: String(MAX_PAGE),
    json_body_kb: String(MAX_JSON_BODY_BYTES / KB),
    manifest_lifetime: formatDuration(MANIFEST_LIFETIME_MS),
    replay_lifetime: formatDuration(REPLAY_LIFETIME_MS),
    unpublished_cap:
      config.deploy.unpublishedSites === 0
        ? 'no cap'
        : `${count(config.deploy.unpublishedSites)} times the plan's per-site limit (\`PLINTH_UNPUBLISHED_SITES\`)`,
    sign_in_lifetime: formatDuration(SIGN_IN_LIFETIME_MS),
    sign_in_max_attempts: String(SIGN_IN_MAX_ATTEMPTS),
    session_lifetime: formatDuration(SESSION_LIFETIME_MS),
    oauth_access_lifetime: formatDuration(ACCESS_TOKEN_LIFETIME_MS),
    oauth_code_lifetime: formatDuration(AUTHORIZATION_CODE_LIFETIME_MS),
    device_code_lifetime: formatDuration(DEVICE_CODE_LIFETIME_MS),
    device_code_lifetime_s: String(DEVICE_CODE_LIFETIME_MS / 1000),
    device_poll_interval_s: String(config.app.devicePollIntervalS),
    error_codes: Object.keys(ERROR_STATUS).length.toString(),
    plan_limits_table: planLimitsTable(config),
    reserved_names: [...RESERVED_NAMES].map((name) => `\`${name}\``).join(', '),
    history_reach_list: historyReachList(),
    redirects_max_rules: capOrOff(config.deploy.siteRules.maxRedirectRules, 'rules'),
    redirects_max_line: capOrOff(config.deploy.siteRules.maxRedirectLineChars, 'characters'),
    headers_max_blocks: capOrOff(config.deploy.siteRules.maxHeaderBlocks, 'blocks'),
    headers_max_line: capOrOff(config.deploy.siteRules.maxHeaderLineChars, 'characters'),
    rules_max_segments: capOrOff(config.deploy.siteRules.maxPatternSegments, 'segments'),
    redirects_max_conditions: capOrOff(config.deploy.siteRules.maxRedirectConditions, 'conditions'),
    headers_max_lines: capOrOff(config.deploy.siteRules.maxHeaderLines, 'lines'),
    rules_max_inner_splats: capOrOff(config.deploy.siteRules.maxInnerSplats, 'paths'),
    rules_file_max: config.deploy.siteRules.maxRulesFileBytes === 0 ? 'no cap' : formatBytes(config.deploy.siteRules.maxRulesFileBytes),
    link_warnings: capOrOff(config.deploy.siteRules.maxLinkWarnings, 'warnings'),
  };
  for (const plan of ACCOUNT_PLANS) {
    facts[`sites_limit_${plan}`] = count(config.api.sitesLimit[plan]);
    facts[`history_${plan}`] = formatDuration(PLAN_LIMITS[plan].historyReachMs);
    facts[`domains_per_site_${plan}`] = count(config.domains.perSite[plan]);
  }
  return facts;
}

function planLimitsTable(config: Readonly<Config>): string {
  const rows = ['| Plan | Sites | Files per site | Per file | Per site | History reach | Expiry | Badge |', '|---|---|---|---|---|---|---|---|'];
  const anon = PLAN_LIMITS.anonymous;
  rows.push(
    `| No account | 1 per deploy | ${count(anon.maxFiles)} | ${formatBytes(anon.maxFileBytes)} | ${formatBytes(anon.maxSiteBytes)} | ${formatDuration(anon.historyReachMs)} | ${ANONYMOUS_LIFETIME_MS / HOUR} hours unless claimed | ${hasBadge('anonymous') ? 'yes' : 'no'} |`,
  );
  for (const plan of ACCOUNT_PLANS) {
    const limits = PLAN_LIMITS[plan];
    const perSite = plan === 'free' ? formatBytes(limits.maxSiteBytes) : `${formatBytes(limits.maxSiteBytes)} (all its storage)`;
    const badge = hasBadge(plan) ? 'yes' : 'no';
    rows.push(
      `| ${PLAN_TITLES[plan]} | ${count(config.api.sitesLimit[plan])} | ${count(limits.maxFiles)} | ${formatBytes(limits.maxFileBytes)} | ${perSite} | ${formatDuration(limits.historyReachMs)} | none | ${badge} |`,
    );
  }
  return rows.join('\n');
}

function historyReachList(): string {
  return [
    `- No account: ${formatDuration(PLAN_LIMITS.anonymous.historyReachMs)}`,
    ...ACCOUNT_PLANS.map((plan) => `- ${PLAN_TITLES[plan]}: ${formatDuration(PLAN_LIMITS[plan].historyReachMs)}`),
  ].join('\n');
}

/** Replaces `{{name}}` placeholders; an unknown name is an error, so a typo cannot ship. */
export function fillFacts(text: string, facts: Readonly<Record<string, string>>, source: string): string {
  return text.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/g, (_whole, name: string) => {
    const value = facts[name];
    if (value === undefined) throw new Error(`${source}: unknown placeholder {{${name}}}`);
    return value;
  });
}
