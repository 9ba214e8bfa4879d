/**
 * Splits a large JSON-RPC message into its small envelope and the byte range of
 * `params.arguments`, without parsing the arguments. A `deploy_site` call carries up to 40 MB of
 * files there; parsing them on an HTTP thread would stall it and hold the body several times over
 * in memory, so the arguments bytes go to the ingest worker as they are (it parses and checks
 * them, as it does for REST's JSON deploys) and only the envelope is parsed here.
 *
 * Strings are skipped with `Buffer.indexOf`, so the scan costs about one native pass over the
 * body. Anything the scanner does not understand returns `undefined`: the caller then parses the
 * whole body and reports JSON's own error.
 */

/** Small members of `params.arguments` kept in the envelope: a deploy part names its manifest there, a retry its idempotency key. */
const KEPT_ARGUMENTS = new Set(['manifest', 'idempotency_key']);
// A 255-character key, quoted, with room for escapes.
const MAX_KEPT_BYTES = 600;

export interface SplitMessage {
  /** The message with `params.arguments` replaced by `{}` (plus the short string members of `KEPT_ARGUMENTS`). */
  envelope: Record<string, unknown>;
  /** `[start, end)` of the `params.arguments` value in the body. */
  argumentsRange: [number, number];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

class NotUnderstood extends Error {}

export function splitArguments(body: Buffer): SplitMessage | undefined {
  try {
    return split(body);
  } catch (err) {
    // A broken envelope too: the caller's full parse reports JSON's own error.
    if (err instanceof NotUnderstood || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

function split(body: Buffer): SplitMessage | undefined {
  let range: [number, number] | undefined;
  let kept: Record<string, string> = {};
  let pos = skipSpace(body, 0);
  expect(body, pos, OPEN_BRACE);
  pos = members(body, pos, (key, start) => {
    if (key !== 'params' || body[start] !== OPEN_BRACE) return skipValue(body, start);
    return members(body, start, (inner, valueStart) => {
      if (inner !== 'arguments' || body[valueStart] !== OPEN_BRACE) {
        const end = skipValue(body, valueStart);
        if (inner === 'arguments') range = [valueStart, end];
        return end;
      }
      // Walked member by member (the same single pass as skipping it whole).
      const found: Record<string, string> = {};
      const end = members(body, valueStart, (member, memberStart) => {
        const memberEnd = skipValue(body, memberStart);
        if (KEPT_ARGUMENTS.has(member) && body[memberStart] === QUOTE && memberEnd - memberStart <= MAX_KEPT_BYTES) {
          found[member] = JSON.parse(body.toString('utf8', memberStart, memberEnd)) as string;
        }
        return memberEnd;
      });
      // JSON.parse keeps the last of duplicate keys; so does this.
      range = [valueStart, end];
      kept = found;
      return end;
    });
  });
  if (skipSpace(body, pos) !== body.length || range === undefined || body[range[0]] !== OPEN_BRACE) return undefined;
  const text = Buffer.concat([body.subarray(0, range[0]), Buffer.from(JSON.stringify(kept)), body.subarray(range[1])]).toString('utf8');
  const envelope: unknown = JSON.parse(text);
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) return undefined;
  return { envelope: envelope as Record<string, unknown>, argumentsRange: range };
}

/** Walks the members of the object opening at `pos`; `onValue` returns where each value ends. */
function members(body: Buffer, pos: number, onValue: (key: string, valueStart: number) => number): number {
  pos = skipSpace(body, pos + 1);
  if (body[pos] === CLOSE_BRACE) return pos + 1;
  for (;;) {
    expect(body, pos, QUOTE);
    const keyEnd = skipString(body, pos);
    const key = JSON.parse(body.toString('utf8', pos, keyEnd)) as string;
    pos = skipSpace(body, keyEnd);
    expect(body, pos, COLON);
    pos = skipSpace(body, onValue(key, skipSpace(body, pos + 1)));
    if (body[pos] === CLOSE_BRACE) return pos + 1;
    expect(body, pos, COMMA);
    pos = skipSpace(body, pos + 1);
  }
}

/** The index just past the JSON value starting at `pos`. */
function skipValue(body: Buffer, pos: number): number {
  const first = body[pos];
  if (first === QUOTE) return skipString(body, pos);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: runs to the next delimiter.
    let end = pos;
    while (end < body.length && !isDelimiter(body[end]!)) end++;
    if (end === pos) throw new NotUnderstood();
    return end;
  }
  let depth = 0;
  for (let i = pos; i < body.length; i++) {
    const byte = body[i]!;
    if (byte === QUOTE) {
      i = skipString(body, i) - 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw new NotUnderstood();
}

/** The index just past the closing quote of the string opening at `pos`. */
function skipString(body: Buffer, pos: number): number {
  let from = pos + 1;
  for (;;) {
    const quote = body.indexOf(QUOTE, from);
    if (quote === -1) throw new NotUnderstood();
    let backslashes = 0;
    while (body[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function skipSpace(body: Buffer, pos: number): number {
  while (pos < body.length) {
    const byte = body[pos]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
    pos++;
  }
  return pos;
}

function isDelimiter(byte: number): boolean {
  return byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function expect(body: Buffer, pos: number, byte: number): void {
  if (body[pos] !== byte) throw new NotUnderstood();
}
