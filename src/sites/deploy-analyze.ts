import { refusalError } from '../errors.js';
import { linkCheckShares, type AnalyzeResult, type RejudgedContent, type SiteFile, type SiteRulesLimits } from '../ingest/index.js';
import { isHtmlType, isRulesFile, MAX_UNPACKED_BYTES, PLAN_LIMITS, type Plan, type RevisionExtras } from '../rules/index.js';
import { packedRangeOf, type FileEntry, type PackedRange } from '../store/index.js';
import type { OperationsDeps } from './deps.js';

/**
 * The assembled site's `_redirects` and `_headers` compiled (a bad line refuses the deploy
 * with 400) and its links checked, in an ingest worker. Its pages and rules files are read
 * from the blob store, so a patch or digest deploy is judged as the whole resulting site.
 * Reused contents in `rejudge` pass the leak guard first, within the target plan's limits.
 */
export { linkCheckShares };

/** The caps an analysis applies to `_redirects`, `_headers` and the link check's warnings. */
export function analysisLimits(config: OperationsDeps['config']): SiteRulesLimits {
  const { siteRules } = config.deploy;
  const ruleLimits = (maxEntries: number, maxLineChars: number) => ({
    maxEntries,
    maxLineChars,
    maxFileBytes: siteRules.maxRulesFileBytes,
    maxPatternSegments: siteRules.maxPatternSegments,
    maxInnerSplats: siteRules.maxInnerSplats,
  });
  return {
    redirects: { ...ruleLimits(siteRules.maxRedirectRules, siteRules.maxRedirectLineChars), maxConditions: siteRules.maxRedirectConditions },
    headers: { ...ruleLimits(siteRules.maxHeaderBlocks, siteRules.maxHeaderLineChars), maxHeaderLines: siteRules.maxHeaderLines },
    maxWarnings: siteRules.maxLinkWarnings,
  };
}

/** The analysis the ingest worker did in the unpack task (see `UnpackOptions.analyze`), as `analyzeSite` answers it. */
export function analyzedInUnpack(analysis: AnalyzeResult): RevisionExtras {
  if (!analysis.ok) throw refusalError(analysis.error);
  return analysis.extras;
}

export async function analyzeSite(
  deps: Pick<OperationsDeps, 'store' | 'config' | 'ingest'>,
  files: Map<string, FileEntry>,
  signal?: AbortSignal,
  rejudge?: { contents: RejudgedContent[]; plan: Plan },
): Promise<RevisionExtras> {
  const { store, config } = deps;
  const site: SiteFile[] = [];
  const read: string[] = rejudge?.contents.map((content) => content.sha256) ?? [];
  const packed = new Map<string, PackedRange>();
  for (const [path, entry] of files) {
    site.push({ path, sha256: entry.sha256, size: entry.size, type: entry.type });
    const range = packedRangeOf(entry);
    if (range !== undefined) packed.set(entry.sha256, range);
    if (isRulesFile(path) || isHtmlType(entry.type) || entry.type.startsWith('text/css')) read.push(entry.sha256);
  }
  site.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // With a bucket, content a patch keeps may not be on this node yet.
  await Promise.all([...new Set(read)].map((sha256) => store.blobs.fetch(sha256, undefined, packed.get(sha256))));
  const { siteRules } = config.deploy;
  const limits = analysisLimits(config);
  const shares = linkCheckShares(site, deps.ingest.threads);
  const tier = rejudge && PLAN_LIMITS[rejudge.plan];
  // One share is enough to read the reused contents again.
  const rejudged =
    rejudge && tier && rejudge.contents.length > 0
      ? {
          rejudge: { contents: rejudge.contents, limits: { maxFileBytes: tier.maxFileBytes, maxSiteBytes: Math.min(tier.maxSiteBytes, MAX_UNPACKED_BYTES) } },
        }
      : {};
  const results = await Promise.all(
    shares.map((checkPaths, index) =>
      deps.ingest.analyze({ dataDir: config.dataDir, files: site, limits, ...(checkPaths ? { checkPaths } : {}), ...(index === 0 ? rejudged : {}) }, signal),
    ),
  );
  // Every share compiled the same rules files, so a refusal is the same in each (a secret in
  // reused content is found by the first share alone, and it is the first looked at).
  const refused = results.find((result) => !result.ok);
  if (refused !== undefined && !refused.ok) {
    throw refusalError(refused.error);
  }
  const extras = results.map((result) => (result.ok ? result.extras : {}));
  const merged: RevisionExtras = { ...extras[0] };
  delete merged.warnings;
  delete merged.warningsTotal;
  // Each share lists its first warnings in path order; joined, they are put in path order again
  // (a stable sort keeps each file's in the order of its lines).
  const warnings = extras.flatMap((share) => share.warnings ?? []).sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const total = extras.reduce((sum, share) => sum + (share.warningsTotal ?? 0), 0);
  if (total > 0) {
    merged.warnings = siteRules.maxLinkWarnings === 0 ? warnings : warnings.slice(0, siteRules.maxLinkWarnings);
    merged.warningsTotal = total;
  }
  return merged;
}
