/**
 * The deploy's look at the whole assembled site, after its files are known and before it is
 * published: `_redirects` and `_headers` compiled (a bad line refuses the deploy), and the link
 * check, which asks of every internal reference in the site's HTML and CSS whether the serving
 * rules lead it anywhere. Runs in an ingest worker; `read` gives a file's bytes.
 */
import {
  compileHeaders,
  compileRedirects,
  describeRuleErrors,
  MAX_LISTED_RULE_ERRORS,
  isHtmlType,
  resolveSitePath,
  type CompiledRedirects,
  type LinkWarning,
  type RevisionExtras,
  type RuleLineError,
  type RulesFileResult,
} from '../rules/index.js';
import { cssRefs, pageRefs, type PageRefs } from './link-refs.js';
import type { AnalyzeResult, IngestError, SiteFile, SiteRulesLimits } from './types.js';

const ORIGIN = 'http://site.invalid';
// References that are not files of the site: other schemes, other hosts, the page itself, and
// template syntax that a build step was meant to fill in.
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const TEMPLATE = /\{\{|\{%|\$\{|<%/;
// Answers that lead somewhere (a file, a folder's redirect, a rule's redirect, the single-page-app
// shell); a 404 page, a rule's 404 or 410, or nothing count as nowhere.
const LEADS_SOMEWHERE = new Set(['file', 'folder', 'redirect', 'spa']);
// A page without any of these words refers to nothing (every reference attribute holds one:
// `href`, `src`, `srcset`, `poster`, or CSS `url(` and `@import`), and the many pages that have
// no reference at all are not read further. The page is lowered once and searched for each word:
// several times faster than one case-blind pattern where the first reference is far down the
// page. A style sheet is searched by cssRefs' own patterns alone.
const REFERRING_WORDS = ['href', 'src', 'url(', 'poster', '@import'];
const mayRefer = (page: string): boolean => {
  // Lowering may also make a non-ASCII letter ASCII (`\u212A`, Kelvin, is `k`): at worst a page is read for nothing.
  const lower = page.toLowerCase();
  return REFERRING_WORDS.some((word) => lower.includes(word));
};

export function analyzeSite(
  files: readonly SiteFile[],
  read: (file: SiteFile) => Buffer,
  limits: SiteRulesLimits,
  checkPaths?: readonly string[],
): AnalyzeResult {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const extras: RevisionExtras = {};

  // Both files are read whatever the first holds, so one answer lists every refused line.
  const refused: RuleLineError[] = [];
  let refusedTotal = 0;
  const compileFile = <T>(path: '_redirects' | '_headers', compile: (text: string) => RulesFileResult<T>): T | undefined => {
    const file = byPath.get(path);
    if (file === undefined) return undefined;
    const fileLimits = path === '_redirects' ? limits.redirects : limits.headers;
    // Too large to be worth reading: refused by its size alone.
    if (fileLimits.maxFileBytes > 0 && file.size > fileLimits.maxFileBytes) {
      refused.push(tooLarge(path, file.size, fileLimits.maxFileBytes));
      refusedTotal++;
      return undefined;
    }
    const result = compile(read(file).toString('utf8'));
    if (result.ok) return result.compiled;
    refused.push(...result.errors.slice(0, Math.max(0, MAX_LISTED_RULE_ERRORS - refused.length)));
    refusedTotal += result.total;
    return undefined;
  };

  const redirects = compileFile('_redirects', (text) => compileRedirects(text, limits.redirects));
  const headers = compileFile('_headers', (text) => compileHeaders(text, limits.headers));
  if (refusedTotal > 0) return { ok: false, error: ruleError(refused, refusedTotal) };
  if (redirects !== undefined && redirects.rules.length > 0) extras.redirects = redirects;
  if (headers !== undefined && headers.blocks.length > 0) extras.headers = headers;

  const checked = checkPaths === undefined ? files : checkPaths.map((path) => byPath.get(path)).filter((file) => file !== undefined);
  const { warnings, total } = checkLinks(checked, byPath, read, redirects, limits.maxWarnings);
  if (total > 0) {
    extras.warnings = warnings;
    extras.warningsTotal = total;
  }
  return { ok: true, extras };
}

function tooLarge(file: '_redirects' | '_headers', size: number, max: number): RuleLineError {
  return { file, line: 0, reason: 'file_too_large', text: '', hint: `it is ${size} bytes, more than the ${max} bytes allowed on every plan` };
}

/** `details` keeps the first refused line's `file`, `line` and `reason` at the top and lists them all in `lines`. */
function ruleError(errors: readonly RuleLineError[], total: number): IngestError {
  const { message, agentMessage } = describeRuleErrors(errors, total);
  const first = errors[0]!;
  return {
    code: 'bad_request',
    message,
    agentMessage,
    details: {
      file: first.file,
      line: first.line,
      reason: first.reason,
      lines: errors.map((error) => ({ file: error.file, line: error.line, reason: error.reason })),
      ...(total > errors.length ? { lines_total: total } : {}),
    },
  };
}

function checkLinks(
  files: readonly SiteFile[],
  byPath: ReadonlyMap<string, SiteFile>,
  read: (file: SiteFile) => Buffer,
  redirects: CompiledRedirects | undefined,
  maxWarnings: number,
): { warnings: LinkWarning[]; total: number } {
  const warnings: LinkWarning[] = [];
  let total = 0;
  const has = (path: string): boolean => byPath.has(path);
  // Pages of one site point at the same few files again and again.
  const known = new Map<string, boolean>();
  const leadsSomewhere = (url: URL): boolean => {
    const key = `${url.pathname}${url.search}`;
    let found = known.get(key);
    if (found === undefined) {
      found = resolves(url, has, redirects);
      known.set(key, found);
    }
    return found;
  };

  // And the pages of one folder write the same references: what each leads to, by base and
  // reference as written, spares parsing it as a URL again.
  const brokenByBase = new Map<string, Map<string, boolean>>();

  for (const file of files) {
    const html = isHtmlType(file.type);
    if (!html && !file.type.startsWith('text/css')) continue;
    const { refs, base: baseHref } = refsOf(file, html, read);
    if (refs.length === 0) continue;
    const folder = `${ORIGIN}/${file.path.slice(0, file.path.lastIndexOf('/') + 1)}`;
    let base: URL | undefined = new URL(folder);
    if (baseHref !== undefined) base = baseOf(baseHref, base);
    // A page whose <base> is another site refers to that site: nothing here to check.
    if (base === undefined) continue;
    let brokenByRef = brokenByBase.get(base.href);
    if (brokenByRef === undefined) brokenByBase.set(base.href, (brokenByRef = new Map()));
    for (const { ref, line } of refs) {
      let broken = brokenByRef.get(ref);
      if (broken === undefined) {
        const url = internalUrl(ref, base);
        broken = url !== undefined && !leadsSomewhere(url);
        brokenByRef.set(ref, broken);
      }
      if (!broken) continue;
      total++;
      if (maxWarnings === 0 || warnings.length < maxWarnings) warnings.push({ file: file.path, line, ref: ref.trim(), kind: 'broken_link' });
    }
  }
  return { warnings, total };
}

// What a content refers to depends on its bytes alone, so a worker keeps it by sha256: a redeploy
// (a patch, a digest deploy) reads and tokenizes only the pages that changed. Bounded by entries
// and by references held, oldest first out.
const MAX_CACHED_CONTENTS = 20_000;
const MAX_CACHED_REFS = 200_000;
const NO_REFS: PageRefs = { refs: [] };
const refsByContent = new Map<string, PageRefs>();
let cachedRefs = 0;

function refsOf(file: SiteFile, html: boolean, read: (file: SiteFile) => Buffer): PageRefs {
  const key = `${html ? 'h' : 'c'}${file.sha256}`;
  const known = refsByContent.get(key);
  if (known !== undefined) return known;
  const text = read(file).toString('utf8');
  const found = !html ? { refs: cssRefs(text) } : mayRefer(text) ? pageRefs(text) : NO_REFS;
  refsByContent.set(key, found);
  cachedRefs += found.refs.length;
  for (const [oldest, value] of refsByContent) {
    if (refsByContent.size <= MAX_CACHED_CONTENTS && cachedRefs <= MAX_CACHED_REFS) break;
    refsByContent.delete(oldest);
    cachedRefs -= value.refs.length;
  }
  return found;
}

function baseOf(href: string, folder: URL): URL | undefined {
  try {
    const base = new URL(href.trim(), folder);
    return base.origin === ORIGIN ? base : undefined;
  } catch {
    return folder;
  }
}

/** The reference as a URL of this site, or undefined when it is not one (or not to be checked). */
function internalUrl(raw: string, base: URL): URL | undefined {
  // Browsers strip leading and trailing whitespace and read `\` as `/` in http(s) URLs.
  const ref = raw.trim().replace(/\\/g, '/');
  if (ref === '' || ref.startsWith('#') || ref.startsWith('?') || ref.startsWith('//') || SCHEME.test(ref) || TEMPLATE.test(ref)) return undefined;
  try {
    const url = new URL(ref, base);
    return url.origin === ORIGIN ? url : undefined;
  } catch {
    return undefined;
  }
}

function resolves(url: URL, has: (path: string) => boolean, redirects: CompiledRedirects | undefined): boolean {
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    // The server answers a malformed escape with 400.
    return false;
  }
  if (/[\u0000-\u001f\u007f]/.test(pathname)) return false;
  const segments = pathname.split('/').filter((segment) => segment !== '');
  const trailingSlash = segments.length > 0 && pathname.endsWith('/');
  const resolution = resolveSitePath(segments.join('/'), trailingSlash, has, redirects, () => url.searchParams);
  return LEADS_SOMEWHERE.has(resolution.kind);
}

// Below this many bytes of pages and style sheets one worker checks the links alone: a share of
// its own would cost more in the hand-over than it saves.
const SHARE_MIN_BYTES = 1024 * 1024;

/**
 * The pages and style sheets of a large site, one share per ingest thread, so that their links
 * are checked side by side; `[undefined]` (one task, all of them) for a small site or a single
 * thread. A byte of a page costs several times a byte of a style sheet to read (its tags against
 * a few `(`), so each kind is cut into consecutive runs of about equal bytes on its own and the
 * runs are paired in opposite orders: one share per pair, its paths in order, so that each share
 * lists its first warnings by path.
 */
export function linkCheckShares(site: readonly SiteFile[], threads: number): Array<string[] | undefined> {
  const pages = site.filter((file) => isHtmlType(file.type));
  const sheets = site.filter((file) => file.type.startsWith('text/css'));
  const bytes = [...pages, ...sheets].reduce((sum, file) => sum + file.size, 0);
  const count = Math.min(threads, Math.floor(bytes / SHARE_MIN_BYTES), pages.length + sheets.length);
  if (count <= 1) return [undefined];
  const pageRuns = runsOf(pages, count);
  const sheetRuns = runsOf(sheets, count).reverse();
  return pageRuns.map((run, i) => [...run, ...sheetRuns[i]!].map((file) => file.path).sort()).filter((share) => share.length > 0);
}

/** `files` cut into `count` consecutive runs of about equal bytes (the last ones empty when there are too few files). */
function runsOf(files: readonly SiteFile[], count: number): SiteFile[][] {
  const bytes = files.reduce((sum, file) => sum + file.size, 0);
  const runs: SiteFile[][] = [];
  let current: SiteFile[] = [];
  let taken = 0;
  for (const file of files) {
    current.push(file);
    taken += file.size;
    if (runs.length < count - 1 && taken >= (bytes * (runs.length + 1)) / count) {
      runs.push(current);
      current = [];
    }
  }
  if (current.length > 0) runs.push(current);
  while (runs.length < count) runs.push([]);
  return runs;
}
