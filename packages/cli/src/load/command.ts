import { randomInt } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeRegression, findRegressions } from './baseline.js';
import { cleanCorpus } from './clean.js';
import { createAgent, parseAddress } from './client.js';
import { readCorpus } from './corpus.js';
import { runLoad } from './engine.js';
import { exportCorpus } from './export.js';
import { renderHtmlReport } from './html-report.js';
import { DEFAULT_MIX } from './mix.js';
import { parseCount, parseDuration, parseShare, UsageProblem } from './options.js';
import { prepareCorpus } from './prepare.js';
import { buildReport, type LoadReport } from './report.js';
import { summaryText } from './summary-text.js';

export const LOAD_USAGE = `Usage: plinth load <command>   (traffic shaped like a publishing host's, against any Plinth)
  prepare --api URL --token pl_… [--sites 1000] [--corpus FILE] [--scale 1] [--seed N] [--concurrency 4]
          [--timeout 2m]
        publish a corpus of sites through the API (an account token) and record every file in FILE
        (default load-corpus.json); --scale 0.01 makes every file a hundredth of its size; a deploy
        not answered within --timeout is sent again with the same Idempotency-Key
  run --corpus FILE [--duration 60s] [--rate N | --connections N] [--deploys-per-minute N]
      [--connect HOST:PORT | --compare HOST:PORT,HOST:PORT…] [--json FILE] [--html FILE]
      [--baseline FILE [--threshold 10]] [--threads N] [--round 10s] [--check 0.05] [--seed N]
        drive the traffic: --rate N requests/s open loop (latency from the intended send time),
        or --connections N closed loop (default 64 connections); --connect sends every request
        to one address with each site's Host header; --compare visits several in turn (A, B, A, B…)
  clean --corpus FILE [--token pl_…] [--api URL]
        ask the API to delete the corpus's sites (each deletion waits for a person's approval)
  export --corpus FILE --out DIR [--listen 127.0.0.1:8081]
        write the corpus as a folder tree and an nginx configuration serving it with Plinth's headers

Options: --api defaults to the corpus's API, then $PLINTH_API_URL; --token to $PLINTH_TOKEN.
Exit status: 0 done, 1 failed (the reason is printed), 2 wrong usage, 3 a regression against --baseline.`;

export interface LoadCommandIo {
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  out: (line: string) => void;
  err: (line: string) => void;
  /** Rewrites the live progress line; only given when stdout is a terminal. */
  progress?: (line: string | undefined) => void;
}

const OPTIONS = {
  api: { type: 'string' },
  token: { type: 'string' },
  sites: { type: 'string' },
  corpus: { type: 'string' },
  scale: { type: 'string' },
  seed: { type: 'string' },
  concurrency: { type: 'string' },
  duration: { type: 'string' },
  rate: { type: 'string' },
  connections: { type: 'string' },
  'deploys-per-minute': { type: 'string' },
  'hot-sites': { type: 'string' },
  connect: { type: 'string' },
  compare: { type: 'string' },
  json: { type: 'string' },
  html: { type: 'string' },
  baseline: { type: 'string' },
  threshold: { type: 'string' },
  threads: { type: 'string' },
  round: { type: 'string' },
  check: { type: 'string' },
  timeout: { type: 'string' },
  out: { type: 'string' },
  listen: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const ALLOWED: Record<string, ReadonlyArray<keyof typeof OPTIONS>> = {
  prepare: ['api', 'token', 'sites', 'corpus', 'scale', 'seed', 'concurrency', 'timeout'],
  run: [
    'corpus',
    'duration',
    'rate',
    'connections',
    'deploys-per-minute',
    'hot-sites',
    'connect',
    'compare',
    'json',
    'html',
    'baseline',
    'threshold',
    'threads',
    'round',
    'check',
    'timeout',
    'seed',
    'api',
    'token',
  ],
  clean: ['corpus', 'api', 'token', 'concurrency'],
  export: ['corpus', 'out', 'listen'],
};

export async function loadCommand(io: LoadCommandIo): Promise<number> {
  const [command, ...rest] = io.args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.out(LOAD_USAGE);
    return 0;
  }
  const usage = (message: string): number => {
    io.err(`plinth load: ${message}\n\n${LOAD_USAGE}`);
    return 2;
  };
  if (!Object.hasOwn(ALLOWED, command)) return usage(`unknown command "${command}"`);
  let values: Values;
  try {
    const parsed = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true });
    if (parsed.positionals.length > 0) return usage(`unexpected argument "${parsed.positionals[0]}"`);
    values = parsed.values;
  } catch (err) {
    return usage((err as Error).message);
  }
  if (values.help) {
    io.out(LOAD_USAGE);
    return 0;
  }
  const stray = Object.keys(values).find((key) => key !== 'help' && !ALLOWED[command]!.includes(key as keyof typeof OPTIONS));
  if (stray) return usage(`--${stray} is not an option of plinth load ${command}`);
  try {
    switch (command) {
      case 'prepare':
        return await prepare(io, values);
      case 'run':
        return await run(io, values);
      case 'clean':
        return await clean(io, values);
      default:
        return exportCommand(io, values);
    }
  } catch (err) {
    io.progress?.(undefined);
    if (err instanceof UsageProblem) return usage(err.message);
    io.err(`plinth load: ${(err as Error).message}`);
    return 1;
  }
}

function need(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageProblem(`${flag} is needed`);
  return value;
}

async function prepare(io: LoadCommandIo, values: Values): Promise<number> {
  const api = need(values.api ?? io.env.PLINTH_API_URL, '--api');
  const token = need(values.token ?? io.env.PLINTH_TOKEN, '--token (an API token pl_…)');
  const sites = parseCount(values.sites ?? '1000', '--sites');
  const corpusFile = values.corpus ?? 'load-corpus.json';
  const scale = parseCount(values.scale ?? '1', '--scale', { min: 0.0001, integer: false });
  const seed = values.seed === undefined ? randomInt(2 ** 31) : parseCount(values.seed, '--seed', { min: 0 });
  const concurrency = parseCount(values.concurrency ?? '4', '--concurrency');
  // A deploy is not what is measured here: a busy deployment may take its time with one.
  const agent = createAgent(concurrency, parseDuration(values.timeout ?? '2m', '--timeout'));
  try {
    const corpus = await prepareCorpus({
      agent,
      api,
      token,
      sites,
      corpusFile,
      seed,
      scale,
      concurrency,
      progress: (done, total) => io.progress?.(`prepare: ${done}/${total} sites published`),
      warn: (text) => io.err(`plinth load: ${text}`),
    });
    io.progress?.(undefined);
    const files = corpus.sites.reduce((sum, site) => sum + site.files.length, 0);
    const bytes = corpus.sites.reduce((sum, site) => sum + site.files.reduce((s, f) => s + f.size, 0), 0);
    io.out(`published ${corpus.sites.length} sites, ${files} files, ${(bytes / 1e6).toFixed(1)} MB; corpus written to ${corpusFile}`);
    return 0;
  } finally {
    await agent.close();
  }
}

async function run(io: LoadCommandIo, values: Values): Promise<number> {
  const corpus = readCorpus(need(values.corpus, '--corpus'));
  if (values.rate !== undefined && values.connections !== undefined) throw new UsageProblem('give --rate (open loop) or --connections (closed loop), not both');
  if (values.connect !== undefined && values.compare !== undefined) throw new UsageProblem('give --connect or --compare, not both');
  const mode = values.rate !== undefined ? 'open' : 'closed';
  const rate = values.rate === undefined ? 0 : parseCount(values.rate, '--rate', { min: 0.1, integer: false });
  const connections = parseCount(values.connections ?? '64', '--connections');
  const durationMs = parseDuration(values.duration ?? '60s', '--duration');
  const addresses = values.compare !== undefined ? values.compare.split(',').filter(Boolean) : values.connect !== undefined ? [values.connect] : [];
  if (values.compare !== undefined && addresses.length < 2) throw new UsageProblem('--compare takes two or more HOST:PORT, comma-separated');
  let targets: Array<{ label: string; origin?: string }>;
  try {
    targets =
      addresses.length > 0
        ? addresses.map(parseAddress).map(({ label, origin }) => ({ label, origin }))
        : [{ label: ownAddressesLabel(corpus.sites.map((site) => new URL(site.url).host)) }];
  } catch (err) {
    throw new UsageProblem((err as Error).message);
  }
  const perMinute =
    values['deploys-per-minute'] === undefined ? 0 : parseCount(values['deploys-per-minute'], '--deploys-per-minute', { min: 0, integer: false });
  const token = values.token ?? io.env.PLINTH_TOKEN;
  if (perMinute > 0 && !token) throw new UsageProblem('--deploys-per-minute needs --token (or $PLINTH_TOKEN), the API token the corpus was prepared with');
  const thresholdPercent = parseCount(values.threshold ?? '10', '--threshold', { min: 0, integer: false });
  const baseline = values.baseline === undefined ? undefined : readBaseline(values.baseline);
  const result = await runLoad({
    corpus,
    targets,
    mode,
    rate,
    connections,
    durationMs,
    roundMs: values.round === undefined ? undefined : parseDuration(values.round, '--round'),
    threads: values.threads === undefined ? undefined : parseCount(values.threads, '--threads'),
    mix: DEFAULT_MIX,
    zipfExponent: 1,
    seed: values.seed === undefined ? corpus.seed : parseCount(values.seed, '--seed', { min: 0 }),
    checkShare: parseShare(values.check ?? '0.05', '--check'),
    timeoutMs: parseDuration(values.timeout ?? '30s', '--timeout'),
    deploys:
      perMinute > 0
        ? {
            perMinute,
            api: values.api ?? corpus.api ?? io.env.PLINTH_API_URL ?? '',
            token: token!,
            hotSites: parseCount(values['hot-sites'] ?? '5', '--hot-sites'),
          }
        : undefined,
    progress: io.progress
      ? (line) =>
          io.progress!(
            `${line.elapsedS.toFixed(0)}/${line.durationS.toFixed(0)} s  ${line.target}  ${line.requestsPerSecond.toLocaleString('en-US')} req/s  p99 ${line.p99Ms} ms  errors ${line.errors}`,
          )
      : undefined,
  });
  io.progress?.(undefined);
  const report = buildReport(result, { mode, rate, connections, sites: corpus.sites.length });
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  if (values.html !== undefined) writeFileSync(values.html, renderHtmlReport(report));
  io.out(summaryText(report));
  if (baseline) {
    const regressions = findRegressions(report, baseline, { percent: thresholdPercent, errorPoints: 1 });
    if (regressions.length > 0) {
      io.err(
        `plinth load: ${regressions.length} regression${regressions.length === 1 ? '' : 's'} against ${values.baseline} (threshold ${thresholdPercent} %):`,
      );
      for (const regression of regressions) io.err(`  ${describeRegression(regression)}`);
      return 3;
    }
    io.out(`no regression against ${values.baseline} (threshold ${thresholdPercent} %)`);
  }
  return 0;
}

/**
 * The name of the one target of a run on the sites' own addresses: their common domain with a `*`
 * for the site's label (`*.sites.example.org`), so it does not read as one site of the corpus;
 * the hosts as they are when they share none.
 */
export function ownAddressesLabel(hosts: readonly string[]): string {
  const parents = new Set(hosts.map((host) => host.slice(host.indexOf('.') + 1)));
  const [parent] = parents;
  if (parents.size === 1 && parent !== undefined && hosts.every((host) => host.includes('.'))) return `*.${parent}`;
  return hosts.length === 1 ? hosts[0]! : `${hosts.length} sites' own addresses`;
}

function readBaseline(file: string): LoadReport {
  let parsed: Partial<LoadReport>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LoadReport>;
  } catch (err) {
    throw new Error(`cannot read the baseline ${file}: ${(err as Error).message}`);
  }
  if (parsed.format !== 'plinth-load-result' || !parsed.overall || !Array.isArray(parsed.targets))
    throw new Error(`${file} is not a result written by plinth load run --json`);
  return parsed as LoadReport;
}

async function clean(io: LoadCommandIo, values: Values): Promise<number> {
  const corpus = readCorpus(need(values.corpus, '--corpus'));
  const api = need(values.api ?? corpus.api ?? io.env.PLINTH_API_URL, '--api');
  const token = need(values.token ?? io.env.PLINTH_TOKEN, '--token (an API token pl_…)');
  const agent = createAgent(4);
  try {
    const result = await cleanCorpus({ agent, api, token, corpus, concurrency: parseCount(values.concurrency ?? '4', '--concurrency') });
    if (result.deleted.length > 0) io.out(`deleted ${result.deleted.length} sites`);
    if (result.gone.length > 0) io.out(`${result.gone.length} sites were already gone`);
    if (result.approvals.length > 0) {
      io.out(`${result.approvals.length} deletions wait for a person's approval (Plinth deletes a site only once its owner confirms); open each page:`);
      for (const approval of result.approvals) io.out(`  ${approval.site}  ${approval.approve_url}`);
    }
    for (const failure of result.failed) io.err(`plinth load: ${failure.site}: ${failure.reason}`);
    return result.failed.length > 0 ? 1 : 0;
  } finally {
    await agent.close();
  }
}

function exportCommand(io: LoadCommandIo, values: Values): number {
  const corpus = readCorpus(need(values.corpus, '--corpus'));
  const listen = values.listen ?? '127.0.0.1:8081';
  try {
    parseAddress(listen);
  } catch (err) {
    throw new UsageProblem(`--listen: ${(err as Error).message}`);
  }
  const result = exportCorpus(corpus, { dir: need(values.out, '--out'), listen });
  io.out(`wrote ${result.sites} sites, ${result.files} files, ${(result.bytes / 1e6).toFixed(1)} MB, and ${result.config}`);
  io.out(`serve them with nginx (include ${result.config} in its http context), then: plinth load run --compare <plinth HOST:PORT>,${listen}`);
  return 0;
}
