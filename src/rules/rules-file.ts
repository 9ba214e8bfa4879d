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

export type RulesFileResult<T> = { ok: true; compiled: T } | { ok: false; error: RuleLineError };

/** At most this much of a refused line is quoted back. */
const QUOTE_CHARS = 200;

/** The message and agent message of a refused line (the deploy answers `400 bad_request`). */
export function describeRuleError(error: RuleLineError): { message: string; agentMessage: string } {
  if (error.line === 0) {
    const message = `${error.file} is refused: ${error.hint}.`;
    return { message, agentMessage: `${message} Nothing was published; fix ${error.file} and deploy again.` };
  }
  const quoted = error.text.length > QUOTE_CHARS ? `${error.text.slice(0, QUOTE_CHARS)}…` : error.text;
  return {
    message: `${error.file} line ${error.line} is refused (${error.reason}).`,
    agentMessage: `${error.file} line ${error.line} reads ${JSON.stringify(quoted)}: ${error.hint}. Nothing was published; fix that line and deploy again.`,
  };
}

/** Lines of a rules file with their 1-based numbers; a UTF-8 byte-order mark and `\r` are dropped. */
export function splitLines(text: string): string[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** The whole-file and per-line caps, checked before anything is parsed. */
export function checkFileSize(file: RulesFileName, bytes: number, limits: RulesFileLimits): RuleLineError | undefined {
  if (limits.maxFileBytes > 0 && bytes > limits.maxFileBytes) {
    return { file, line: 0, reason: 'file_too_large', text: '', hint: `it is ${bytes} bytes, more than the ${limits.maxFileBytes} bytes allowed` };
  }
  return undefined;
}

export function lineTooLong(file: RulesFileName, line: number, text: string, limits: RulesFileLimits): RuleLineError | undefined {
  if (limits.maxLineChars > 0 && text.length > limits.maxLineChars) {
    return { file, line, reason: 'line_too_long', text, hint: `a line may have at most ${limits.maxLineChars} characters; shorten it or split the rule` };
  }
  return undefined;
}

// C0 controls other than tab, and DEL: never part of a rule, and a way to smuggle a line break.
export const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
