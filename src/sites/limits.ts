import type { Config } from '../config.js';
import { ServiceError } from '../errors.js';
import { accountAllowsMore, PLAN_LIMITS, PLAN_TITLES, siteTooLarge, type TierLimits } from '../rules/index.js';
import type { AccountRecord, FileEntry, Store } from '../store/index.js';

const MB = 1024 * 1024;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** Sites an account's plan allows it to own (SPEC 8 rule 4; `PLINTH_SITES_LIMIT_*`). */
export function sitesLimitOf(config: Readonly<Config>, account: AccountRecord): number {
  return config.api.sitesLimit[account.plan];
}

/** The refusal when an account owns all the sites its plan allows. */
export function sitesLimitError(config: Readonly<Config>, account: AccountRecord, used: number, action: 'create' | 'claim'): ServiceError {
  const limit = sitesLimitOf(config, account);
  const plan = PLAN_TITLES[account.plan];
  const what = action === 'create' ? 'no new site was created' : 'the site was not claimed';
  return new ServiceError('limit', `The ${plan} plan allows ${limit} sites and this account owns ${used}.`, {
    agentMessage: `This account already has ${used} of the ${limit} sites its ${plan} plan allows, so ${what}. Update an existing site instead (send "site" and its live revision), delete one with DELETE /v1/sites/<name>, or ask the operator of this service for a larger plan (usage and plans: ${config.publicUrls.app}/billing ).`,
    details: { sites_used: used, sites_limit: limit },
  });
}

/**
 * The plan's number of owned sites, checked before an upload is read so a refused create costs
 * no upload; the commit counts again inside its transaction, so racing creates cannot pass it.
 */
export function checkSitesLimit(store: Store, config: Readonly<Config>, account: AccountRecord): void {
  const used = store.countOwnedSites(account.id);
  if (used >= sitesLimitOf(config, account)) throw sitesLimitError(config, account, used, 'create');
}

/** SPEC 8 rules 1 and 3: the whole resulting site against the tier's file and byte limits. */
export function checkTier(files: ReadonlyMap<string, FileEntry>, tier: TierLimits): void {
  const anonymous = tier === PLAN_LIMITS.anonymous;
  if (files.size > tier.maxFiles) {
    throw new ServiceError('too_large', `The site would have ${files.size} files; the limit is ${tier.maxFiles}.`, {
      agentMessage: `This plan allows ${tier.maxFiles} files per site. Remove files${anonymous ? '' : ' or publish with a larger plan'}.${anonymous ? accountAllowsMore('files') : ''}`,
    });
  }
  let total = 0;
  for (const [path, entry] of files) {
    if (entry.size > tier.maxFileBytes) {
      throw new ServiceError('too_large', `${path} is larger than ${formatBytes(tier.maxFileBytes)}.`, {
        agentMessage: `This plan allows files up to ${formatBytes(tier.maxFileBytes)}. Shrink ${path}${anonymous ? '' : ' or publish with a larger plan'}.${anonymous ? accountAllowsMore('file') : ''}`,
        details: { file: path },
      });
    }
    total += entry.size;
  }
  if (total > tier.maxSiteBytes) {
    // Name the largest files of the whole resulting site, as the ingest refusal does.
    const words = siteTooLarge(
      [...files].map(([file, entry]) => ({ file, size: entry.size })),
      tier.maxSiteBytes,
      { anonymous, complete: true },
    );
    throw new ServiceError('too_large', words.message, { agentMessage: words.agentMessage, details: words.details });
  }
}

/** A path-index row without empty fields, as a new revision stores it. */
export function compactEntry(file: FileEntry): FileEntry {
  const entry: FileEntry = { sha256: file.sha256, size: file.size, type: file.type };
  if (file.encodings && Object.keys(file.encodings).length > 0) entry.encodings = file.encodings;
  // Where its blob is packed: a rollback's or a patch's records must say it as the first did.
  if (file.pack !== undefined) entry.pack = file.pack;
  return entry;
}

/** `5 MB`, `1.5 GB`, `730 KB`, `54 bytes` — sizes as people read them (1 MB = 1024 × 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < MB) {
    const kb = bytes / 1024;
    return `${kb < 10 && !Number.isInteger(kb) ? kb.toFixed(1) : Math.round(kb)} KB`;
  }
  const mb = bytes / MB;
  if (mb >= 1024) {
    const gb = mb / 1024;
    return `${Number.isInteger(gb) ? gb : gb.toFixed(1)} GB`;
  }
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** `1 hour`, `30 days`, `1 year` — lifetimes and reaches as the docs and the API reference quote them. */
export function formatDuration(ms: number): string {
  if (ms === 0) return 'the live revision only';
  if (ms % (365 * DAY) === 0) return ms === 365 * DAY ? '1 year' : `${ms / (365 * DAY)} years`;
  if (ms % DAY === 0) return ms === DAY ? '1 day' : `${ms / DAY} days`;
  if (ms % HOUR === 0) return ms === HOUR ? '1 hour' : `${ms / HOUR} hours`;
  return ms === 60_000 ? '1 minute' : `${ms / 60_000} minutes`;
}
