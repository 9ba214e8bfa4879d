// What placing the badge costs on the HTTP thread, the first time a page of an Anonymous or Free
// site is served (site-server.ts then caches the result per page and site). Pages of 20 KB,
// 200 KB, 1 MB (the Anonymous site limit) and 5 MB (the Free limit): a well-formed page, one with
// a <noscript> (checked with scripting on and off), one with a <select> (placed from a recorded
// parse, then checked), and a hostile one (an element left open that hides its content).
// Usage: npm run bench:badge [-- --rounds 5]
// Result: the badge section of bench/RESULTS.md.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'parse5';
import { injectBadge } from '../dist/badge/index.js';
import { machineInfo, writeResultsFile } from './lib/report.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(values.rounds);
const root = fileURLToPath(new URL('..', import.meta.url));
const OPTIONS = { siteName: 'bench-site', reportUrl: 'http://app.localhost:8080/report/bench-site' };

const ROW =
  '<div class="row"><p>Lorem ipsum <b>dolor</b> sit amet, <a href="/x">consectetur</a> adipiscing elit &amp; more text.</p><img src="a.png" alt=""></div>\n';
function page(bytes, { extra = '', tail = '' } = {}) {
  let body = '';
  while (body.length < bytes) body += ROW;
  return Buffer.from(`<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body>${extra}${body}${tail}</body></html>\n`);
}

const KINDS = {
  'well-formed': (bytes) => page(bytes),
  'with `<noscript>`': (bytes) => page(bytes, { extra: '<noscript><p>Turn on JavaScript</p></noscript>' }),
  'with `<select>`': (bytes) => page(bytes, { extra: '<form><select><option>a<option>b</select></form>' }),
  'hostile (unclosed `<div hidden>`)': (bytes) => page(bytes, { tail: '<div hidden><p>' }),
};
const SIZES = [
  ['20 KB', 20_000],
  ['200 KB', 200_000],
  ['1 MB', 1_000_000],
  ['5 MB', 5_000_000],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn) {
  const samples = [];
  for (let i = 0; i < 3; i++) fn(); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

const rows = [];
for (const [label, bytes] of SIZES) {
  const plain = page(bytes);
  const parseMs = time(() => parse(plain.toString('latin1')));
  const cells = Object.values(KINDS).map((make) => {
    const html = make(bytes);
    return time(() => injectBadge(html, OPTIONS));
  });
  rows.push([label, parseMs, ...cells]);
  console.log(label, parseMs.toFixed(1), cells.map((c) => c.toFixed(1)).join(' '));
}

const machine = await machineInfo(root);
const f = (n) => `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`;
const section = [
  '## Badge placement (`npm run bench:badge`)',
  '',
  `Run ${machine.date}, commit \`${machine.commit}\`, ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, load average at the end ${loadavg()
    .map((n) => n.toFixed(2))
    .join(', ')}. Median of ${ROUNDS} rounds after three warm-up runs, in one process.`,
  '',
  'Time for `injectBadge` on one page, paid on the HTTP thread the first time the page is served to a visitor of an Anonymous or Free site (the result is cached per page and site). One parse with parse5 is the unit: a well-formed page needs one, a page with `<noscript>` two (scripting on and off), one with `<select>` two (a recorded parse, then the check), one with both three, a hostile page three (the one-parse try, the recorded parse, the check) and at most 16 or 16 MB of parsing (badge.ts).',
  '',
  `| Page | One parse5 parse | ${Object.keys(KINDS).join(' | ')} |`,
  `|---|--:|${Object.keys(KINDS)
    .map(() => '--:')
    .join('|')}|`,
  ...rows.map(([label, ...ms]) => `| ${label} | ${ms.map(f).join(' | ')} |`),
  '',
  '### Commands',
  '',
  '```',
  `npm run bench:badge -- --rounds ${ROUNDS}`,
  '```',
].join('\n');
writeResultsFile(join(root, 'bench', 'RESULTS.md'), section, 'badge');
