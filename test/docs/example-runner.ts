import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { marked, type Token } from 'marked';

/**
 * Runs a guide's examples the way a reader would: every ```sh block, top to bottom, in one bash
 * session (so `cd` and variables carry over) in a fresh folder, with `curl` and `plinth` pointed
 * at the test server. The text is not rewritten: `curl` gets `--connect-to` so that
 * `http://api.localhost:8080` reaches the server's real port, and the server hands out the same
 * `…:8080` addresses the guides show.
 *
 * Conventions in the Markdown:
 * - `<!-- expect: 409 -->` before a block: the last HTTP call in it answers 409 (default: any
 *   2xx or 3xx; earlier calls in the block must be 2xx or 3xx). `<!-- expect: exit 1 -->`: the
 *   block's commands end with that exit status (default 0).
 * - A ```json, ```http or ```text block right after a ```sh block (prose between is fine) is the
 *   output it shows: the last HTTP answer (JSON body; status line and headers), or the block's
 *   standard output when it made no HTTP call (text lines).
 * - A line `NAME=sample   # from .json.path` sets NAME from the last JSON answer; the sample
 *   then stands for the real value in later expected output.
 * - In expected output, `…` matches any text, any ISO 8601 time matches any other, and a
 *   generated site name (`sunny-otter-4821`) in a JSON answer stands for the name the server made.
 * - `<!-- schema: Name -->` before a ```json block that is not an output: it must validate
 *   against that OpenAPI component schema. `<!-- skip: why -->` before a ```sh block: not run
 *   (not allowed for blocks that call curl).
 */

export interface Block {
  lang: string;
  code: string;
  note: { expectStatus?: number; expectExit?: number; schema?: string; skip?: string };
}

export interface HttpCall {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The request's JSON body, when it sent one inline. */
}

export interface BlockResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  calls: HttpCall[];
}

/** The fenced code blocks of a guide, in order, with the test note before each. */
export function extractBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let note: Block['note'] = {};
  const walk = (tokens: Token[]): void => {
    for (const token of tokens) {
      if (token.type === 'html') {
        const text = token.raw;
        const expect = /<!--\s*expect:\s*(exit\s+)?(\d+)\s*-->/.exec(text);
        if (expect) note = expect[1] ? { ...note, expectExit: Number(expect[2]) } : { ...note, expectStatus: Number(expect[2]) };
        const schema = /<!--\s*schema:\s*(\w+)\s*-->/.exec(text);
        if (schema) note = { ...note, schema: schema[1] };
        const skip = /<!--\s*skip:\s*([\s\S]+?)\s*-->/.exec(text);
        if (skip) note = { ...note, skip: skip[1] };
        continue;
      }
      if (token.type === 'code') {
        blocks.push({ lang: (token.lang ?? '').split(/\s/)[0] ?? '', code: token.text, note });
        note = {};
        continue;
      }
      const children = (token as { tokens?: Token[]; items?: Token[] }).tokens ?? (token as { items?: Token[] }).items;
      if (children) walk(children);
    }
  };
  walk(marked.lexer(markdown));
  return blocks;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One bash session per guide. */
export class ShellSession {
  private readonly shell: ChildProcessWithoutNullStreams;
  private readonly captureDir: string;
  private readonly outDir: string;
  private counter = 0;
  private output = '';
  private waiter: (() => void) | undefined;

  constructor(
    readonly workDir: string,
    options: { port: number; dataDir: string },
  ) {
    const shimDir = join(workDir, '.shims');
    this.captureDir = join(workDir, '.captures');
    this.outDir = join(workDir, '.out');
    for (const dir of [shimDir, this.captureDir, this.outDir]) mkdirSync(dir, { recursive: true });
    writeShims(shimDir);
    this.shell = spawn('bash', ['--noprofile', '--norc'], {
      cwd: workDir,
      env: {
        PATH: `${shimDir}:${process.env.PATH}`,
        HOME: workDir,
        LANG: 'C.UTF-8',
        // The runner's own variables are not named PLINTH_*: the server and `plinth admin`
        // refuse PLINTH_* names that are no setting of theirs.
        EXAMPLES_PORT: String(options.port),
        EXAMPLES_CAPTURE: this.captureDir,
        EXAMPLES_ROOT: ROOT,
        PLINTH_DATA_DIR: options.dataDir,
        PLINTH_LOG_LEVEL: 'silent',
      },
    });
    this.shell.stdout.setEncoding('utf8');
    this.shell.stdout.on('data', (chunk: string) => {
      this.output += chunk;
      this.waiter?.();
    });
    this.shell.stdin.write('set -o pipefail\n');
  }

  /** Runs one block; the working directory and variables stay for the next. */
  async run(code: string, timeoutMs = 60_000): Promise<BlockResult> {
    const n = ++this.counter;
    const before = this.callCount();
    const marker = `__plinth_done_${n}__`;
    const out = join(this.outDir, `${n}`);
    this.shell.stdin.write(`{\n${code}\n} </dev/null >${out}.stdout 2>${out}.stderr\necho "${marker} $?"\n`);
    const exitCode = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`block did not finish in ${timeoutMs} ms:\n${code}`)), timeoutMs);
      const check = (): void => {
        const match = new RegExp(`${marker} (\\d+)`).exec(this.output);
        if (!match) return;
        clearTimeout(timer);
        this.waiter = undefined;
        resolve(Number(match[1]));
      };
      this.waiter = check;
      check();
    });
    const calls: HttpCall[] = [];
    for (let i = before + 1; i <= this.callCount(); i++) calls.push(this.readCall(i));
    return { exitCode, stdout: readFileSync(`${out}.stdout`, 'utf8'), stderr: readFileSync(`${out}.stderr`, 'utf8'), calls };
  }

  close(): void {
    this.shell.stdin.end();
    this.shell.kill();
    rmSync(this.workDir, { recursive: true, force: true });
  }

  private callCount(): number {
    const file = join(this.captureDir, 'count');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0;
  }

  private readCall(n: number): HttpCall {
    const base = join(this.captureDir, String(n));
    const args = readFileSync(`${base}.args`, 'utf8').split('\0').slice(0, -1);
    const head = existsSync(`${base}.head`) ? readFileSync(`${base}.head`, 'latin1') : '';
    let body = readFileSync(`${base}.out`);
    // With -i the headers are in the output too.
    if (head !== '' && body.subarray(0, head.length).toString('latin1') === head) body = body.subarray(head.length);
    const blocks = head.split(/\r\n\r\n/).filter((block) => block.startsWith('HTTP/'));
    const last = blocks.at(-1) ?? '';
    const [statusLine, ...lines] = last.split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    return { ...requestOf(args), status: Number(statusLine?.split(' ')[1] ?? 0), headers, body };
  }
}

/** Method and URL from curl's arguments (the options our guides use). */
function requestOf(args: string[]): { method: string; url: string } {
  let method: string | undefined;
  let url = '';
  let data = false;
  let head = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-X' || arg === '--request') method = args[++i];
    else if (/^-X[A-Z]+$/.test(arg)) method = arg.slice(2);
    else if (/^(-d|--data|--data-binary|--data-raw|--json|-F|--form|-T|--upload-file)$/.test(arg)) {
      data = true;
      i++;
    } else if (arg === '-I' || arg === '--head') head = true;
    else if (/^https?:\/\//.test(arg)) url = arg;
    else if (/^(-H|--header|-o|--output|-u|--user|-w|--write-out|-r|--range|-e|--referer|-A|--user-agent)$/.test(arg)) i++;
  }
  return { method: method ?? (head ? 'HEAD' : data ? 'POST' : 'GET'), url };
}

function writeShims(dir: string): void {
  const curl = `#!/usr/bin/env bash
# Test shim: the real curl, connected to the test server, with every answer kept for the runner.
for arg in "$@"; do case "$arg" in -D|--dump-header) echo "guides must not use -D (the runner needs it); use -i" >&2; exit 90;; esac; done
n=$(( $(cat "$EXAMPLES_CAPTURE/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$EXAMPLES_CAPTURE/count"
printf '%s\\0' "$@" > "$EXAMPLES_CAPTURE/$n.args"
/usr/bin/curl --connect-to "::127.0.0.1:$EXAMPLES_PORT" -D "$EXAMPLES_CAPTURE/$n.head" "$@" > "$EXAMPLES_CAPTURE/$n.out"
status=$?
cat "$EXAMPLES_CAPTURE/$n.out"
exit $status
`;
  // `plinth` is the plinth CLI (packages/cli), as a reader installs it; `npx plinth` is the
  // server's own command, which runs only in the Plinth checkout (start, admin).
  const pointAtServer = `# Test shim: the guides' local server (port 8080) pointed at the test server.
# A port or address the guide sets itself (to show what happens elsewhere) is left alone.
args=()
for arg in "$@"; do args+=("\${arg//localhost:8080/localhost:$EXAMPLES_PORT}"); done
if [ -n "$PLINTH_API_URL" ]; then export PLINTH_API_URL="\${PLINTH_API_URL//localhost:8080/localhost:$EXAMPLES_PORT}"
elif [ -z "$PLINTH_PORT" ] || [ "$PLINTH_PORT" = 8080 ]; then export PLINTH_PORT="$EXAMPLES_PORT"; fi
`;
  const plinth = `#!/usr/bin/env bash
${pointAtServer}exec node "$EXAMPLES_ROOT/packages/cli/dist/plinth.js" "\${args[@]}"
`;
  const npx = `#!/usr/bin/env bash
if [ "$1" != plinth ]; then echo "the guides run only 'npx plinth'" >&2; exit 91; fi
shift
${pointAtServer}exec node "$EXAMPLES_ROOT/dist/cli/plinth.js" "\${args[@]}"
`;
  for (const [name, text] of [
    ['curl', curl],
    ['plinth', plinth],
    ['npx', npx],
  ] as const) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
}

/** `NAME=sample   # from .path.to.field` lines of a block. */
export function captureLines(code: string): Array<{ line: string; name: string; sample: string; path: string }> {
  return [...code.matchAll(/^([A-Z_][A-Z0-9_]*)=(\S*)[ \t]+# from (\.[A-Za-z0-9_.[\]]+)[ \t]*$/gm)].map((m) => ({
    line: m[0],
    name: m[1]!,
    sample: m[2]!,
    path: m[3]!,
  }));
}

export function valueAt(json: unknown, path: string): unknown {
  let value = json;
  for (const part of path
    .slice(1)
    .split('.')
    .flatMap((segment) => segment.split(/\[(\d+)\]/).filter((p) => p !== ''))) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const GENERATED_NAME = /^[a-z]+-[a-z]+-\d{4}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Sample values in the guides mapped to the values of this run. */
export type Bindings = Map<string, string>;

function bind(text: string, bindings: Bindings): string {
  let out = text;
  // Longest first, so a sample that contains another is replaced whole.
  for (const [sample, actual] of [...bindings].sort((a, b) => b[0].length - a[0].length)) out = out.split(sample).join(actual);
  return out;
}

/** Whether `actual` is what the guide shows as `expected` (with `…` and times as wildcards). */
export function matchesText(expected: string, actual: string, bindings: Bindings): boolean {
  const wanted = bind(expected, bindings);
  if (ISO_TIME.test(wanted)) return ISO_TIME.test(actual);
  if (!wanted.includes('…')) return wanted === actual;
  const pattern = wanted
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(actual);
}

/** Differences between a documented JSON value and a real one; empty when they match. */
export function compareJson(expected: unknown, actual: unknown, bindings: Bindings, at = '$'): string[] {
  // A generated site name shown in an answer stands for the one the server generated.
  if (typeof expected === 'string' && typeof actual === 'string' && GENERATED_NAME.test(expected) && GENERATED_NAME.test(actual) && !bindings.has(expected)) {
    bindings.set(expected, actual);
  }
  if (typeof expected === 'string') {
    return typeof actual === 'string' && matchesText(expected, actual, bindings)
      ? []
      : [`${at}: documented ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (expected === null || typeof expected !== 'object') {
    return expected === actual ? [] : [`${at}: documented ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: documented an array, got ${JSON.stringify(actual)}`];
    const open = expected.at(-1) === '…';
    const items = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return [`${at}: documented ${items.length}${open ? ' or more' : ''} items, got ${actual.length}`];
    }
    return items.flatMap((item, i) => compareJson(item, actual[i], bindings, `${at}[${i}]`));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: documented an object, got ${JSON.stringify(actual)}`];
  const problems: string[] = [];
  const exp = expected as Record<string, unknown>;
  const act = actual as Record<string, unknown>;
  for (const key of Object.keys(exp)) {
    if (!(key in act)) problems.push(`${at}.${key}: documented but missing`);
    else problems.push(...compareJson(exp[key], act[key], bindings, `${at}.${key}`));
  }
  for (const key of Object.keys(act)) if (!(key in exp)) problems.push(`${at}.${key}: in the answer but not documented`);
  return problems;
}

/** Lines of expected text output against the real output, `…` as wildcard within a line. */
export function compareText(expected: string, actual: string, bindings: Bindings): string[] {
  const want = expected.replace(/\n+$/, '').split('\n');
  const got = actual.replace(/\n+$/, '').split('\n');
  if (want.length !== got.length) return [`documented ${want.length} lines of output, got ${got.length}:\n${actual}`];
  for (const [i, line] of want.entries()) {
    const sample = /\b[a-z]+-[a-z]+-\d{4}\b/.exec(line)?.[0];
    const actual = /\b[a-z]+-[a-z]+-\d{4}\b/.exec(got[i]!)?.[0];
    if (sample && actual && !bindings.has(sample)) bindings.set(sample, actual);
  }
  return want.flatMap((line, i) =>
    matchesText(line, got[i]!, bindings) ? [] : [`line ${i + 1}: documented ${JSON.stringify(line)}, got ${JSON.stringify(got[i])}`],
  );
}

/** An ```http block: a status line, then `Name: value` lines that must be present (values as text patterns). */
export function compareHttp(expected: string, call: HttpCall, bindings: Bindings): string[] {
  const [statusLine, ...lines] = expected.trim().split('\n');
  const problems: string[] = [];
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (status !== call.status) problems.push(`status: documented ${status}, got ${call.status}`);
  for (const line of lines) {
    if (line.trim() === '') break;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const actual = call.headers[name];
    if (actual === undefined) problems.push(`header ${name}: documented but missing`);
    else if (!matchesText(value, actual, bindings)) problems.push(`header ${name}: documented ${JSON.stringify(value)}, got ${JSON.stringify(actual)}`);
  }
  return problems;
}

export function listGuideFiles(dir: URL): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
}
