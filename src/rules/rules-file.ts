/**
 * What `_redirects` and `_headers` share: their limits, how a refused line is reported, and how
 * a file is split into numbered lines.
 */

export type RulesFileName = '_redirects' | '_headers';

/** Caps on a rules file; 0 turns a cap off. */
export interface RulesFileLimits {
  /** `_redirects` rules or `_headers` blocks. */
  maxEntries: number;
  /** Characters of one line. */
  maxLineChars: number;
  /** Bytes of the whole file. */
  maxFileBytes: number;
  /** Segments of one path pattern (what matching a request costs grows with them). */
  maxPatternSegments?: number;
  /** `_redirects`: query conditions of all its rules together. */
  maxConditions?: number;
  /** `_headers`: header lines (`Name: value` and `! Name`) of all its blocks together. */
  maxHeaderLines?: number;
  /** Patterns with a `*` that is not the whole last segment (`/*.xml`): each is checked against a path's whole rest. */
  maxInnerSplats?: number;
}

/** A refused line: where, a stable reason, the line as written, and what to write instead. */
export interface RuleLineError {
  file: RulesFileName;
  /** 1-based; 0 for the file as a whole (too large). */
  line: number;
  reason: string;
  text: string;
  hint: string;
}

/**
 * A refused file: its first refused line, the first `MAX_LISTED_RULE_ERRORS` of them, how many in
 * all and the number of each, and what its other lines compiled to (to report on; a refused file
 * is never published).
 */
export type RulesFileResult<T> =
  { ok: true; compiled: T } | { ok: false; error: RuleLineError; errors: RuleLineError[]; total: number; lines: number[]; kept: T };

/** At most this many refused lines are listed in one answer (all are counted). */
export const MAX_LISTED_RULE_ERRORS = 50;

/** At most this much of a refused line is quoted back. */
const QUOTE_CHARS = 200;

/** Collects the refused lines of one file as it is read, keeping the first few. */
interface RuleErrors {
  add(error: RuleLineError): void;
  result<T>(compiled: T): RulesFileResult<T>;
}

function collectRuleErrors(): RuleErrors {
  const list: RuleLineError[] = [];
  const lines: number[] = [];
  return {
    add(error) {
      lines.push(error.line);
      if (list.length < MAX_LISTED_RULE_ERRORS) list.push(error);
    },
    result<T>(compiled: T): RulesFileResult<T> {
      return lines.length === 0 ? { ok: true, compiled } : { ok: false, error: list[0]!, errors: list, total: lines.length, lines, kept: compiled };
    },
  };
}

/**
 * The message and agent message of the refused lines of a deploy's rules files (the deploy
 * answers `400 bad_request`): every listed line with its reason, and in the agent message each
 * line quoted with what to write instead, so one answer says everything to fix.
 */
export function describeRuleErrors(errors: readonly RuleLineError[], total = errors.length): { message: string; agentMessage: string } {
  if (errors.length === 1 && total === 1) return describeRuleError(errors[0]!);
  const more = total > errors.length ? `, and ${total - errors.length} more` : '';
  const where = errors.map((error) => (error.line === 0 ? `${error.file} (${error.reason})` : `${error.file} line ${error.line} (${error.reason})`));
  const said = errors.map((error) => {
    if (error.line === 0) return `${error.file} is refused: ${error.hint}.`;
    return `${error.file} line ${error.line} reads ${JSON.stringify(quote(error.text))}: ${error.hint}.`;
  });
  return {
    message: `${total} lines of the rules files are refused: ${where.join(', ')}${more}.`,
    agentMessage: `${said.join(' ')}${more === '' ? '' : ` (${total - errors.length} more lines are refused; fix these and deploy again to see them.)`} Nothing was published; fix those lines and deploy again.`,
  };
}

function quote(text: string): string {
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text;
}

/** The message and agent message of one refused line. */
export function describeRuleError(error: RuleLineError): { message: string; agentMessage: string } {
  if (error.line === 0) {
    const message = `${error.file} is refused: ${error.hint}.`;
    return { message, agentMessage: `${message} Nothing was published; fix ${error.file} and deploy again.` };
  }
  return {
    message: `${error.file} line ${error.line} is refused (${error.reason}).`,
    agentMessage: `${error.file} line ${error.line} reads ${JSON.stringify(quote(error.text))}: ${error.hint}. Nothing was published; fix that line and deploy again.`,
  };
}

/** Lines of a rules file with their 1-based numbers; a UTF-8 byte-order mark and `\r` are dropped. */
function splitLines(text: string): string[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** The whole-file and per-line caps, checked before anything is parsed. */
function checkFileSize(file: RulesFileName, bytes: number, limits: RulesFileLimits): RuleLineError | undefined {
  if (limits.maxFileBytes > 0 && bytes > limits.maxFileBytes) {
    return {
      file,
      line: 0,
      reason: 'file_too_large',
      text: '',
      hint: `it is ${bytes} bytes, more than the ${limits.maxFileBytes} bytes allowed on every plan`,
    };
  }
  return undefined;
}

function lineTooLong(file: RulesFileName, line: number, text: string, limits: RulesFileLimits): RuleLineError | undefined {
  if (limits.maxLineChars > 0 && text.length > limits.maxLineChars) {
    return { file, line, reason: 'line_too_long', text, hint: `a line may have at most ${limits.maxLineChars} characters; shorten it or split the rule` };
  }
  return undefined;
}

/** A line of a rules file to be read, with a way to refuse it. */
export interface RuleLine {
  /** 1-based. */
  line: number;
  text: string;
  trimmed: string;
  fail(reason: string, hint: string): void;
}

/**
 * A whole rules file read line by line: past the file's cap, refused as a whole (`whole`);
 * otherwise `each` is given every line worth reading, in order. Blank lines and comments are
 * passed over (a comment however long: the file's own cap bounds it); a line past the per-line
 * cap is refused here. `each`'s refusals and what it compiled make the result.
 */
export function readRulesFile<T>(
  file: RulesFileName,
  text: string,
  limits: RulesFileLimits,
  empty: T,
  each: (line: RuleLine) => void,
  compiled: () => T,
): RulesFileResult<T> {
  const tooLarge = checkFileSize(file, Buffer.byteLength(text), limits);
  if (tooLarge) return { ok: false, error: tooLarge, errors: [tooLarge], total: 1, lines: [0], kept: empty };
  const errors = collectRuleErrors();
  const lines = splitLines(text);
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const line = i + 1;
    const trimmed = text.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const long = lineTooLong(file, line, text, limits);
    if (long) {
      errors.add(long);
      continue;
    }
    each({ line, text, trimmed, fail: (reason, hint) => errors.add({ file, line, reason, text, hint }) });
  }
  return errors.result(compiled());
}

// C0 controls other than tab, and DEL: never part of a rule, and a way to smuggle a line break.
export const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
