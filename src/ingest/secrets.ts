// The leak guard's scanner (SPEC 4.1 rule 6): finds the first secret in a text with the rules of
// secret-patterns.ts. Findings carry only a line and a rule id: the secret never leaves it.
import { SECRET_RULES, isAccepted, type SecretFinding } from './secret-patterns.js';

export { SECRET_RULES, isPlaceholder, type SecretFinding, type SecretRule } from './secret-patterns.js';

// Scanning. Regexes over the whole text are slow here: V8 cannot skip ahead on an alternation of
// many prefixes, nor on a pattern that starts with a character class. On 21 MB of minified web
// files one alternation of all patterns took 0.25 s, Mailchimp's `[0-9a-f]{32}…` alone 0.1 s.
// Instead one plain loop reads a Latin-1 copy of the text 32 bits at a time and looks each pair of
// characters at an even position up in a 64K table of keyword pairs; a pair found there must also
// form one of the keywords' three-character pieces with its neighbour (a bit table). Only where a
// whole keyword is present does its rule's pattern run, anchored (sticky) at the match start that
// the keyword implies. Rules without keywords run their own global regex. The same 21 MB now take
// 27 ms (36 ms in a fresh process), half of it the Discord regex.
//
// The result is the same as scanning with each rule's global regex and taking the earliest first
// accepted match (ties to the first rule): every match of a rule has one of its keywords at its
// offset, so the starts where a rule's pattern is tried include all its matches, in increasing
// order, and after a rejected match a rule resumes at its end as `exec` with `g` would. A pair
// leads to at most a few starts, each tried once, so the scan stays linear.

// A keyword as a set of allowed character codes (all below 128) per position.
interface Keyword {
  rule: number;
  at: number;
  length: number;
  allowed: Uint8Array; // allowed[i * 128 + code] is 1 when `code` may be at position i
}

// At a pair read at an even position, a keyword may start `shift` characters before it.
interface PairEntry {
  keyword: Keyword;
  shift: number;
}

function keywordSets(word: string, ignoreCase: boolean): string[] {
  const sets: string[] = [];
  for (let i = 0; i < word.length; i++) {
    let set = word[i]!;
    if (set === '[') {
      const close = word.indexOf(']', i + 2);
      if (close === -1) throw new Error(`bad keyword ${word}`);
      set = '';
      for (let k = i + 1; k < close; k++) {
        if (word[k + 1] === '-' && k + 2 < close) {
          for (let code = word.charCodeAt(k); code <= word.charCodeAt(k + 2); code++) set += String.fromCharCode(code);
          k += 2;
        } else set += word[k];
      }
      i = close;
    }
    // Without the `u` flag, `i` only folds ASCII letters onto each other.
    if (ignoreCase) set += set.toLowerCase() + set.toUpperCase();
    sets.push([...new Set(set)].join(''));
  }
  if (sets.length < 3 || sets.some((set) => [...set].some((char) => char.charCodeAt(0) >= 128))) throw new Error(`bad keyword ${word}`);
  return sets;
}

// The scan stops at each pair from the table that it meets, so each keyword is entered by its
// least common pairs. Lowercase pairs by frequency in minified JS, most common first, and rough
// counts per million pairs of other kinds (a: lowercase letter, A: uppercase, 0: digit).
const COMMON_PAIRS = (
  're on er st in th es en te or at et de co ti le is se ns ar al nt io ro ct ta ur tr ed od me nd it ra ng pe hi he ' +
  'if as ne ex rt ec tu ue ri nc un to rn an ch am ss li pa ea rr po ge ce va fi ve ul ma op ts ca il ac pt pr rs yp ' +
  'ou ut si ty ll om la na ot lo ke lu no ef so ad ol el ha em qu mp fo id su ck eq ap ic ag xp ls fu im us di lt ow ' +
  'ir ig oc xt ru ie os of da ew pl cl fa mi ho mo ff gt ai ep je sh ay ey nu rc be oo um bj bl sp ry rm sc ab pu ui ' +
  'ni fe ok vi iz bu ld tc gi yn sa rg ba wa cr nf uf au ze tt du ob do ax pp wi iv ee eg nv mb bo up ev rl hr ua'
).split(' ');
const PAIR_COUNTS: Record<string, number> = {
  '-0': 500,
  '00': 450,
  '.a': 370,
  '..': 220,
  'a-': 230,
  '--': 200,
  '/a': 200,
  'a"': 200,
  '"a': 200,
  'a.': 190,
  'a=': 190,
  __: 170,
  '0a': 65,
  a0: 65,
  '-a': 40,
  '.0': 40,
  '0.': 50,
  Aa: 35,
  _a: 35,
  aA: 32,
  AA: 30,
};
function pairCost(first: string, second: string): number {
  const kind = (char: string): string => (/[a-z]/.test(char) ? 'a' : /[A-Z]/.test(char) ? 'A' : /[0-9]/.test(char) ? '0' : char);
  let cost = 0;
  for (const a of first) {
    for (const b of second) {
      const key = kind(a) + kind(b);
      const rank = key === 'aa' ? COMMON_PAIRS.indexOf(a + b) : -1;
      cost += rank !== -1 ? 10000 / (1 + rank / 25) : key === 'aa' ? 300 : (PAIR_COUNTS[key] ?? 20);
    }
  }
  return cost;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const pairIndex = (first: number, second: number): number => (LITTLE_ENDIAN ? first | (second << 8) : (first << 8) | second);
const trigramIndex = (a: number, b: number, c: number): number => ((a & 127) << 14) | ((b & 127) << 7) | (c & 127);

// Per pair: bit 1 when it is checked with the character after it, bit 2 with the one before.
const PAIR_FLAGS = new Uint8Array(65536);
const PAIR_BUCKET = new Uint16Array(65536);
const PAIR_ENTRIES: PairEntry[][] = [[]];
// The keywords' three-character pieces, as a bit per trigram of 7-bit codes.
const TRIGRAMS = new Int32Array((1 << 21) / 32);
const RULE_KEYWORDS: Keyword[][] = SECRET_RULES.map(() => []);
// Per rule: how much earlier than a start found at one pair a start found at a later pair can be
// (when the rule's keywords are entered by pairs at different places).
const RULE_LAG = new Int32Array(SECRET_RULES.length);
const REGEX_RULES: number[] = [];
// A pair read this far past a match start cannot lead to it any more.
let maxLead = 0;

function addPair(first: string, second: string, flag: number, entry: PairEntry): void {
  const pair = pairIndex(first.charCodeAt(0), second.charCodeAt(0));
  if (PAIR_FLAGS[pair] === 0) {
    PAIR_BUCKET[pair] = PAIR_ENTRIES.length;
    PAIR_ENTRIES.push([]);
  }
  PAIR_FLAGS[pair]! |= flag;
  const entries = PAIR_ENTRIES[PAIR_BUCKET[pair]!]!;
  if (!entries.some((other) => other.keyword === entry.keyword && other.shift === entry.shift)) entries.push(entry);
}

SECRET_RULES.forEach((rule, index) => {
  if (rule.keywords === undefined || rule.keywords.length === 0) {
    REGEX_RULES.push(index);
    return;
  }
  const at = rule.keywordAt ?? 0;
  const shifts: number[] = [];
  for (const word of rule.keywords) {
    const sets = keywordSets(word, rule.pattern.flags.includes('i'));
    const allowed = new Uint8Array(sets.length * 128);
    sets.forEach((set, i) => {
      for (const char of set) allowed[i * 128 + char.charCodeAt(0)] = 1;
    });
    const keyword: Keyword = { rule: index, at, length: sets.length, allowed };
    RULE_KEYWORDS[index]!.push(keyword);
    // The scan reads the pairs at even positions: those at even places in a keyword that starts
    // at an even position, those at odd places in one that starts at an odd position. The least
    // common of each is entered, with the character after it (or before it, at the end).
    for (const parity of [0, 1]) {
      let shift = parity;
      for (let u = parity; u + 1 < sets.length; u += 2) {
        if (pairCost(sets[u]!, sets[u + 1]!) < pairCost(sets[shift]!, sets[shift + 1]!)) shift = u;
      }
      shifts.push(shift);
      maxLead = Math.max(maxLead, at + shift);
      const piece = shift + 2 < sets.length ? shift : shift - 1;
      for (const x of sets[piece]!)
        for (const y of sets[piece + 1]!)
          for (const z of sets[piece + 2]!) {
            const trigram = trigramIndex(x.charCodeAt(0), y.charCodeAt(0), z.charCodeAt(0));
            TRIGRAMS[trigram >>> 5]! |= 1 << (trigram & 31);
          }
      for (const x of sets[shift]!) for (const y of sets[shift + 1]!) addPair(x, y, piece === shift ? 1 : 2, { keyword, shift });
    }
  }
  RULE_LAG[index] = Math.max(...shifts) - Math.min(...shifts);
});
// Of a rule's starts at one pair, the earlier is tried first.
for (const entries of PAIR_ENTRIES) entries.sort((x, y) => y.shift + y.keyword.at - (x.shift + x.keyword.at));

const hasTrigram = (trigram: number): boolean => (TRIGRAMS[trigram >>> 5]! & (1 << (trigram & 31))) !== 0;

function hasKeyword(text: string, start: number, keyword: Keyword): boolean {
  if (start < 0 || start + keyword.length > text.length) return false;
  const allowed = keyword.allowed;
  for (let i = 0; i < keyword.length; i++) {
    const code = text.charCodeAt(start + i);
    if (code >= 128 || allowed[i * 128 + code] === 0) return false;
  }
  return true;
}

const STICKY = SECRET_RULES.map((rule) => new RegExp(rule.pattern.source, `${rule.pattern.flags}y`));
const GLOBAL = SECRET_RULES.map((rule) => new RegExp(rule.pattern.source, `${rule.pattern.flags}g`));

// The text is copied to Latin-1 a chunk at a time; characters past U+00FF keep their low byte,
// which can only add pairs that the full check then rejects.
const CHUNK = 1 << 15;
const CHUNK_BYTES = Buffer.allocUnsafeSlow(CHUNK);
const CHUNK_WORDS = new Uint32Array(CHUNK_BYTES.buffer, CHUNK_BYTES.byteOffset, CHUNK / 4);

interface Scan {
  text: string;
  only: number; // a rule index, or -1 for all rules
  resume: Float64Array; // per rule, where its next match may start
  index: number; // the earliest accepted match so far, or -1
  rule: number;
  limit: number; // pairs past it cannot lead to a match before `index`
}

function tryStart(scan: Scan, rule: number, start: number): void {
  const { text, resume } = scan;
  const pattern = STICKY[rule]!;
  pattern.lastIndex = start;
  const match = pattern.exec(text);
  if (match === null) resume[rule] = start + 1;
  else if (!isAccepted(SECRET_RULES[rule]!, text, match)) resume[rule] = start + match[0].length;
  else {
    resume[rule] = Infinity;
    if (scan.index === -1 || start < scan.index || (start === scan.index && rule < scan.rule)) {
      scan.index = start;
      scan.rule = rule;
      scan.limit = start + maxLead;
    }
  }
}

// The characters around a pair, from the chunk or, at its edges, from the text (0 past the text).
function charAfter(text: string, position: number, offset: number, length: number): number {
  if (offset + 2 < length) return CHUNK_BYTES[offset + 2]!;
  return position + 2 < text.length ? text.charCodeAt(position + 2) : 0;
}
function charBefore(text: string, position: number, offset: number): number {
  if (offset > 0) return CHUNK_BYTES[offset - 1]!;
  return position > 0 ? text.charCodeAt(position - 1) : 0;
}

// A pair at `offset` in the chunk (`position` in the text) is in the table.
function checkPair(scan: Scan, position: number, offset: number, length: number): void {
  const text = scan.text;
  const first = CHUNK_BYTES[offset]!;
  const second = CHUNK_BYTES[offset + 1]!;
  const pair = pairIndex(first, second);
  const flags = PAIR_FLAGS[pair]!;
  const inPiece =
    ((flags & 1) !== 0 && hasTrigram(trigramIndex(first, second, charAfter(text, position, offset, length)))) ||
    ((flags & 2) !== 0 && hasTrigram(trigramIndex(charBefore(text, position, offset), first, second)));
  if (!inPiece) return;
  const resume = scan.resume;
  for (const { keyword, shift } of PAIR_ENTRIES[PAIR_BUCKET[pair]!]!) {
    const rule = keyword.rule;
    const start = position - shift - keyword.at;
    if (start < resume[rule]! || (scan.only !== -1 && rule !== scan.only)) continue;
    if (!hasKeyword(text, position - shift, keyword)) continue;
    // Starts of this rule that later pairs will lead to, but that come before this one.
    for (let earlier = Math.max(resume[rule]!, start - RULE_LAG[rule]!); earlier < start; earlier = Math.max(earlier + 1, resume[rule]!)) {
      if (RULE_KEYWORDS[rule]!.some((other) => hasKeyword(text, earlier + other.at, other))) tryStart(scan, rule, earlier);
    }
    if (start >= resume[rule]!) tryStart(scan, rule, start);
  }
}

// The first of the chunk's 32-bit words from `k` on with a pair from the table that is part of a
// piece, or `end`. The first and last words, whose neighbours may lie in other chunks, are left to
// `checkPair`. This is the hot loop: it is kept apart, small and on typed arrays only, so that it
// is optimized within the first file and never loses its optimized code.
function nextWord(k: number, end: number): number {
  for (; k < end; k++) {
    const word = CHUNK_WORDS[k]!;
    if ((PAIR_FLAGS[word & 0xffff]! | PAIR_FLAGS[word >>> 16]!) === 0) continue;
    if (k === 0 || k + 1 === end) return k;
    const offset = 4 * k;
    const c0 = CHUNK_BYTES[offset - 1]!;
    const c1 = CHUNK_BYTES[offset]!;
    const c2 = CHUNK_BYTES[offset + 1]!;
    const c3 = CHUNK_BYTES[offset + 2]!;
    const c4 = CHUNK_BYTES[offset + 3]!;
    const c5 = CHUNK_BYTES[offset + 4]!;
    const first = PAIR_FLAGS[pairIndex(c1, c2)]!;
    const second = PAIR_FLAGS[pairIndex(c3, c4)]!;
    if (
      ((first & 1) !== 0 && hasTrigram(trigramIndex(c1, c2, c3))) ||
      ((first & 2) !== 0 && hasTrigram(trigramIndex(c0, c1, c2))) ||
      ((second & 1) !== 0 && hasTrigram(trigramIndex(c3, c4, c5))) ||
      ((second & 2) !== 0 && hasTrigram(trigramIndex(c2, c3, c4)))
    ) {
      return k;
    }
  }
  return end;
}

// The earliest accepted match of any rule (or of rule `only`) that starts at `from` or later, as
// [index, rule index]. `after`, when given, holds per rule where its matches may start at the
// earliest (a rule already reported on a line is not looked for again on that line).
function firstFinding(text: string, only = -1, from = 0, after?: Float64Array): [number, number] | undefined {
  const resume = new Float64Array(SECRET_RULES.length);
  for (let rule = 0; rule < resume.length; rule++) resume[rule] = Math.max(from, after?.[rule] ?? 0);
  const scan: Scan = { text, only, resume, index: -1, rule: -1, limit: Infinity };
  const n = text.length;
  // The pairs are read at even positions from `from`: every keyword is entered at both parities.
  chunks: for (let base = from; base + 1 < n && base <= scan.limit; base += CHUNK) {
    const length = Math.min(CHUNK, n - base);
    CHUNK_BYTES.write(length === n ? text : text.slice(base, base + length), 0, length, 'latin1');
    const words = length >>> 2;
    for (let k = nextWord(0, words); k < words; k = nextWord(k + 1, words)) {
      const offset = 4 * k;
      if (base + offset > scan.limit) break chunks;
      checkPair(scan, base + offset, offset, length);
      checkPair(scan, base + offset + 2, offset + 2, length);
    }
    if ((length & 2) !== 0) checkPair(scan, base + (length & ~3), length & ~3, length);
  }
  for (const rule of REGEX_RULES) {
    if (only !== -1 && rule !== only) continue;
    const pattern = GLOBAL[rule]!;
    pattern.lastIndex = resume[rule]!;
    for (let match = pattern.exec(text); match !== null && (scan.index === -1 || match.index <= scan.index); match = pattern.exec(text)) {
      if (isAccepted(SECRET_RULES[rule]!, text, match)) {
        if (scan.index === -1 || match.index < scan.index || rule < scan.rule) [scan.index, scan.rule] = [match.index, rule];
        break;
      }
    }
    pattern.lastIndex = 0;
  }
  return scan.index === -1 ? undefined : [scan.index, scan.rule];
}

// For tests: where rule `rule` (an index into SECRET_RULES) has its first accepted match, as the
// scanner finds it, or -1.
export function firstMatchOf(text: string, rule: number): number {
  return firstFinding(text, rule)?.[0] ?? -1;
}

// 1-based; a line ends at LF, CRLF or a lone CR.
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || (code === 13 && text.charCodeAt(i + 1) !== 10)) line++;
  }
  return line;
}

// Returns the earliest finding in the text, or undefined. Never the matched text.
export function scanForSecrets(text: string): SecretFinding | undefined {
  const finding = firstFinding(text);
  return finding && { line: lineAt(text, finding[0]), kind: SECRET_RULES[finding[1]]!.kind };
}

/**
 * Every finding in the text, at most `max`, in order: each kind once per line (a finding names a
 * line, so a second key of the same kind on it adds nothing), but every kind on a line, so that a
 * line holding an AWS key id and its secret key is reported for both and a fix that removes only
 * the id is not mistaken for enough. After a finding the search goes on from its start with that
 * rule skipped to the end of its line; findings are capped, so the rescans stay short.
 */
export function scanAllSecrets(text: string, max: number): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const reported = new Set<string>();
  const after = new Float64Array(SECRET_RULES.length);
  let from = 0;
  let line = 1;
  let counted = 0;
  let lineEnd = -1;
  while (findings.length < max) {
    const found = firstFinding(text, -1, from, after);
    if (!found) break;
    const [at, rule] = found;
    // Lines counted on from the previous finding, as `lineAt` counts them.
    for (; counted < at; counted++) {
      const code = text.charCodeAt(counted);
      if (code === 10 || (code === 13 && text.charCodeAt(counted + 1) !== 10)) line++;
    }
    const kind = SECRET_RULES[rule]!.kind;
    if (!reported.has(`${line} ${kind}`)) {
      reported.add(`${line} ${kind}`);
      findings.push({ line, kind });
    }
    // Findings come in order, so one still before the last line end found is on that line.
    if (at >= lineEnd) lineEnd = endOfLine(text, at);
    after[rule] = lineEnd;
    from = at;
  }
  return findings;
}

// Where the line holding `index` ends: its LF or CR, or the end of the text.
function endOfLine(text: string, index: number): number {
  let end = index;
  while (end < text.length && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
  return end;
}
