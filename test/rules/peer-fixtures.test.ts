/**
 * Replays Netlify's and Cloudflare's own test cases for `_redirects` and `_headers` (written down
 * in test/rules/peer-fixtures/, with their source) against Plinth's parser and matcher, with the
 * default caps. A case agrees when Plinth keeps the lines the peer keeps, refuses the lines the
 * peer refuses (a peer skips a refused line with an error; Plinth refuses the deploy and names every
 * such line), reads each kept rule as the peer does (from, to, status, `!`, query conditions;
 * headers set and removed), and answers the case's requests as the peer does. Where the two hosts
 * differ and docs/serving.md names Plinth's choice, the choice decides.
 *
 * Every case within the dialect docs/serving.md claims must agree; of each host's cases outside
 * visitor conditions and proxying, at least 95 % must.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  compileHeaders,
  compileRedirects,
  headersFor,
  resolveSitePath,
  withRequestQuery,
  type CompiledHeaders,
  type CompiledPattern,
  type CompiledRedirects,
  type RulesFileLimits,
} from '../../src/rules/index.js';
import { CLOUDFLARE_CASES } from './peer-fixtures/cloudflare.js';
import { NETLIFY_CASES } from './peer-fixtures/netlify.js';
import type { PeerCase, PeerRequest } from './peer-fixtures/types.js';

const { siteRules } = loadConfig({}).deploy;
const common = { maxFileBytes: siteRules.maxRulesFileBytes, maxPatternSegments: siteRules.maxPatternSegments, maxInnerSplats: siteRules.maxInnerSplats };
const REDIRECT_LIMITS: RulesFileLimits = {
  ...common,
  maxEntries: siteRules.maxRedirectRules,
  maxLineChars: siteRules.maxRedirectLineChars,
  maxConditions: siteRules.maxRedirectConditions,
};
const HEADER_LIMITS: RulesFileLimits = {
  ...common,
  maxEntries: siteRules.maxHeaderBlocks,
  maxLineChars: siteRules.maxHeaderLineChars,
  maxHeaderLines: siteRules.maxHeaderLines,
};
/** Plinth's status for a rule written without one (Netlify's; Cloudflare's is 302). */
const DEFAULT_STATUS = 301;

interface Outcome {
  /** Kept and refused lines as the peer's. */
  verdict: boolean;
  /** Each kept rule read as the peer reads it. */
  parsed: boolean;
  /** Each request answered as the peer answers it (true when the case has none). */
  served: boolean;
  /** What differs, for the report. */
  differences: string[];
}

/** `%7B` → `{`; an escape that is not one stays as written. */
function unescape(text: string): string {
  return text.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** A path pattern as written, without what is not significant (scheme, query, empty segments, escapes). */
function normalPattern(path: string): string {
  const url = /^https?:\/\/([^/?#]*)(.*)$/i.exec(path);
  if (url !== null) return `//${url[1]!.toLowerCase()}${normalPattern(url[2]!.startsWith('/') ? url[2]! : `/${url[2]!}`)}`;
  const segments = path
    .split('?')[0]!
    .split('/')
    .map((segment) => unescape(segment.trimEnd()))
    .filter((segment) => segment !== '');
  return `/${segments.join('/')}`;
}

function writtenPattern(pattern: CompiledPattern): string {
  const parts = pattern.parts.map((part) => (typeof part === 'string' ? part : `${part.prefix ?? ''}:${part.p}${part.suffix ?? ''}`));
  if (pattern.splat) parts.push(pattern.glob === undefined ? '*' : `${pattern.glob.prefix}*${pattern.glob.suffix}`);
  const host = pattern.host?.map((label) => (typeof label === 'string' ? label : 'p' in label ? `:${label.p}` : '*')).join('.');
  return `${host === undefined ? '' : `//${host}`}/${parts.join('/')}`;
}

/** A target as written: escapes decoded, a host-only address with its `/`. */
function normalTarget(to: string): string {
  const text = unescape(to);
  return /^https?:\/\/[^/?#]+$/i.test(text) ? `${text}/` : text;
}

function compiledOf(c: PeerCase): { kept: CompiledRedirects | CompiledHeaders; refused: number[] } {
  const result = c.file === '_redirects' ? compileRedirects(c.text, REDIRECT_LIMITS) : compileHeaders(c.text, HEADER_LIMITS);
  return result.ok ? { kept: result.compiled, refused: [] } : { kept: result.kept, refused: result.lines };
}

function replay(c: PeerCase): Outcome {
  const differences: string[] = [];
  const chosen = new Set((c.chosen ?? []).flatMap((entry) => Array.from({ length: (entry.through ?? entry.line) - entry.line + 1 }, (_, i) => entry.line + i)));
  const { kept, refused } = compiledOf(c);
  const redirects = 'rules' in kept ? kept : undefined;
  const headers = 'blocks' in kept ? kept : undefined;

  // Lines kept and refused.
  const peerKept = (c.peer.redirects ?? c.peer.headers ?? []).map((rule) => rule.line).filter((line) => !chosen.has(line));
  const peerRefused = c.peer.refused.filter((line) => !chosen.has(line));
  const plinthKept = (redirects?.rules ?? headers?.blocks.filter((block) => block.set.length > 0 || block.remove.length > 0) ?? [])
    .map((rule) => rule.line)
    .filter((line) => !chosen.has(line));
  const plinthRefused = refused.filter((line) => !chosen.has(line));
  const sameRefused = JSON.stringify(peerRefused) === JSON.stringify(plinthRefused);
  const sameKept = JSON.stringify(peerKept) === JSON.stringify(plinthKept);
  if (!sameKept) differences.push(`kept ${summary(plinthKept)}, the peer ${summary(peerKept)}`);
  if (!sameRefused) differences.push(`refused ${summary(plinthRefused)}, the peer ${summary(peerRefused)}`);

  // Each kept rule as the peer reads it.
  let parsed = true;
  for (const rule of c.peer.redirects ?? []) {
    const mine = redirects?.rules.find((r) => r.line === rule.line);
    if (mine === undefined || chosen.has(rule.line)) continue;
    const to = mine.to.map((part) => (typeof part === 'string' ? part : `:${part.p}`)).join('');
    const status = rule.defaulted ? DEFAULT_STATUS : rule.status;
    const query =
      mine.query === undefined ? undefined : Object.fromEntries(mine.query.map((q) => [q.key, typeof q.value === 'string' ? q.value : `:${q.value.p}`]));
    const facts = [
      [writtenPattern(mine.from), normalPattern(rule.from), 'from'],
      [normalTarget(to), normalTarget(rule.to), 'to'],
      [mine.status, status, 'status'],
      [mine.force, rule.force ?? false, 'force'],
      [JSON.stringify(query ?? {}), JSON.stringify(rule.query ?? {}), 'query'],
    ] as const;
    for (const [plinth, peer, what] of facts) {
      if (plinth !== peer) {
        parsed = false;
        differences.push(`line ${rule.line} ${what}: ${String(plinth)}, the peer ${String(peer)}`);
      }
    }
  }
  for (const block of c.peer.headers ?? []) {
    const mine = headers?.blocks.find((b) => b.line === block.line);
    if (mine === undefined || chosen.has(block.line)) continue;
    // A name given twice is sent once, its values joined (as headersFor does).
    const joined = new Map<string, string>();
    for (const [name, value] of mine.set)
      joined.set(name.toLowerCase(), joined.has(name.toLowerCase()) ? `${joined.get(name.toLowerCase())}, ${value}` : value);
    const set = JSON.stringify(Object.fromEntries([...joined].sort()));
    const peerSet = JSON.stringify(
      Object.fromEntries(
        Object.entries(block.set)
          .map(([name, value]) => [name.toLowerCase(), value])
          .sort(),
      ),
    );
    const remove = JSON.stringify([...mine.remove].sort());
    const peerRemove = JSON.stringify((block.remove ?? []).map((name) => name.toLowerCase()).sort());
    const facts = [
      [writtenPattern(mine.pattern), normalPattern(block.path), 'path'],
      [set, peerSet, 'headers'],
      [remove, peerRemove, 'removed'],
    ] as const;
    for (const [plinth, peer, what] of facts) {
      if (plinth !== peer) {
        parsed = false;
        differences.push(`line ${block.line} ${what}: ${plinth}, the peer ${peer}`);
      }
    }
  }

  // The requests.
  let served = true;
  for (const request of c.requests ?? []) {
    if (request.choice !== undefined) continue;
    // The site as the peer publishes it: its refused lines left out (Plinth asks for them to be fixed first).
    const answer = c.file === '_redirects' ? redirectAnswer(redirects!, request) : headerAnswer(headers!, request);
    if (answer !== 'same') {
      served = false;
      differences.push(`${request.path}: ${answer}`);
    }
  }
  return { verdict: sameKept && sameRefused, parsed, served, differences };
}

function summary(lines: number[]): string {
  if (lines.length <= 6) return `[${lines.join(', ')}]`;
  return `[${lines.slice(0, 3).join(', ')} … ${lines.slice(-2).join(', ')}] (${lines.length})`;
}

function requestPath(path: string): { segments: string[]; trailingSlash: boolean; query: string } {
  const [pathname, query = ''] = path.split(/\?(.*)/s, 2) as [string, string?];
  const segments = pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => decodeURIComponent(segment));
  return { segments, trailingSlash: segments.length > 0 && pathname.endsWith('/'), query };
}

function redirectAnswer(compiled: CompiledRedirects, request: PeerRequest): string {
  const { segments, trailingSlash, query } = requestPath(request.path);
  const files = new Set(request.files ?? ['index.html']);
  const resolution = resolveSitePath(
    segments.join('/'),
    trailingSlash,
    (path) => files.has(path),
    compiled,
    () => new URLSearchParams(query),
    request.host,
  );
  const location = resolution.kind === 'redirect' ? (resolution.ownQuery ? resolution.location : withRequestQuery(resolution.location, query)) : undefined;
  if (resolution.status !== request.status) return `status ${resolution.status}, the peer ${request.status}`;
  if (request.location !== undefined && location !== request.location) return `Location ${location}, the peer ${request.location}`;
  return 'same';
}

function headerAnswer(compiled: CompiledHeaders, request: PeerRequest): string {
  const { segments } = requestPath(request.path);
  const found = headersFor(compiled, segments, request.host);
  const sent = new Map((found?.set ?? []).map(([name, value]) => [name.toLowerCase(), value]));
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (sent.get(name.toLowerCase()) !== value) return `${name}: ${sent.get(name.toLowerCase())}, the peer ${value}`;
  }
  for (const name of request.absent ?? []) if (sent.has(name.toLowerCase())) return `${name} sent, the peer sends none`;
  return 'same';
}

const HOSTS = [
  ['Netlify', NETLIFY_CASES],
  ['Cloudflare', CLOUDFLARE_CASES],
] as const;

describe('the peers own cases for _redirects and _headers', () => {
  it('are written down with their source, one id each', () => {
    const ids = new Set<string>();
    for (const [, cases] of HOSTS) {
      for (const c of cases) {
        expect(ids.has(c.id), c.id).toBe(false);
        ids.add(c.id);
        expect(c.source.commit).toMatch(/^[0-9a-f]{40}$/);
        expect(c.source.test).toMatch(/^packages\//);
      }
    }
  });

  describe.each(HOSTS)('%s, within the documented dialect', (_, cases) => {
    it.each(cases.filter((c) => c.scope === 'dialect').map((c) => [c.id, c] as const))('%s behaves as on its host', (_, c) => {
      const outcome = replay(c);
      expect(outcome.differences).toEqual([]);
    });
  });

  it.each(HOSTS)('%s: at least 95 percent of the cases outside visitor conditions and proxying behave as on the host', (host, cases) => {
    const counted = cases.filter((c) => c.scope === 'dialect' || c.scope === 'outside');
    const outcomes = counted.map((c) => ({ c, outcome: replay(c) }));
    const share = (ok: (o: Outcome) => boolean, among = outcomes) => ({ n: among.filter(({ outcome }) => ok(outcome)).length, of: among.length });
    const verdict = share((o) => o.verdict);
    const accepted = outcomes.filter(({ c }) => c.peer.refused.length === 0 && (c.requests?.length ?? 0) > 0);
    const served = share((o) => o.served, accepted);
    const all = share((o) => o.verdict && o.parsed && o.served);
    const dialect = share(
      (o) => o.verdict && o.parsed && o.served,
      outcomes.filter(({ c }) => c.scope === 'dialect'),
    );
    const pct = ({ n, of }: { n: number; of: number }) => `${n} of ${of} (${of === 0 ? 100 : Math.round((1000 * n) / of) / 10} %)`;
    const misses = outcomes
      .filter(({ outcome: o }) => !(o.verdict && o.parsed && o.served))
      .map(({ c, outcome }) => `  ${c.id}: ${outcome.differences.join('; ')}`);
    console.log(
      [
        `${host}: ${cases.length} cases, ${counted.length} outside visitor conditions and proxying`,
        `  accepted or refused as on ${host}: ${pct(verdict)}`,
        `  served as on ${host}, of the cases it accepts whole: ${pct(served)}`,
        `  behave as on ${host} in every respect: ${pct(all)}`,
        `  within the documented dialect: ${pct(dialect)}`,
        ...(misses.length > 0 ? ['  differences (listed in docs/serving.md):', ...misses] : []),
      ].join('\n'),
    );
    expect(dialect.n).toBe(dialect.of);
    expect(all.n / all.of).toBeGreaterThanOrEqual(0.95);
    expect(verdict.n / verdict.of).toBeGreaterThanOrEqual(0.95);
  });
});
