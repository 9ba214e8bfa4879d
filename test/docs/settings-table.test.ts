import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadCliSettings } from '../../packages/cli/src/settings.js';
import { CLI_SETTINGS, loadConfig, SERVER_SETTINGS } from '../../src/config.js';

/**
 * The settings table in docs/operating.md is the one list of environment variables. Every column
 * is checked against the code: the names against what src/ reads, the defaults against what
 * loadConfig applies, and the meanings against what the parser accepts and the unit the config
 * field carries.
 */

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const guide = read('docs/operating.md');

interface Row {
  name: string;
  default: string;
  meaning: string;
}

/** `| \`PLINTH_X\` | default | meaning |` rows; cells may hold `\|` inside code. */
function settingRows(markdown: string): Row[] {
  return markdown
    .split('\n')
    .filter((line) => /^\| `PLINTH_[A-Z0-9_]+` \|/.test(line))
    .map((line) => {
      const cells = line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim());
      expect(cells, line).toHaveLength(3);
      return { name: cells[0]!.replace(/`/g, ''), default: cells[1]!, meaning: cells[2]! };
    });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const rootDir = fileURLToPath(root);
// The server's sources and the plinth CLI's (a package of its own, with its own variables).
const sources = [fileURLToPath(new URL('src/', root)), fileURLToPath(new URL('packages/cli/src/', root))]
  .flatMap((dir) => sourceFiles(dir))
  .map((path) => ({ path: path.slice(rootDir.length), text: readFileSync(path, 'utf8') }));
/** Names the code reads: as a string literal ('PLINTH_X') or a property of an environment (env.PLINTH_X). */
const readBy = new Map<string, Set<string>>();
/** Every full name mentioned anywhere in src/, comments and messages included. */
const mentioned = new Set<string>();
for (const { path, text } of sources) {
  for (const [, name] of [...text.matchAll(/'(PLINTH_[A-Z0-9_]+)'/g), ...text.matchAll(/\benv(?:\.|\[')(PLINTH_[A-Z0-9_]+)/g)]) {
    if (!readBy.has(name!)) readBy.set(name!, new Set());
    readBy.get(name!)!.add(path);
  }
  for (const [, name] of text.matchAll(/\b(PLINTH_[A-Z0-9_]*[A-Z0-9])\b(?![_*])/g)) mentioned.add(name!);
}

const rows = settingRows(guide);
const byName = new Map(rows.map((row) => [row.name, row]));
const configSource = sources.find((file) => /export function loadConfig\b/.test(file.text))!.text;
const cliSettingsSource = sources.find((file) => file.path === 'packages/cli/src/settings.ts')!.text;
/** Variables the `plinth` command reads (packages/cli/src/settings.ts loadCliSettings), found in its source. */
const CLI_READS = new Set([...cliSettingsSource.matchAll(/\benv\.(PLINTH_[A-Z0-9_]+)/g)].map((m) => m[1]!));
const SERVER_READS: ReadonlySet<string> = new Set(SERVER_SETTINGS);
const CLI_ONLY: ReadonlySet<string> = new Set(CLI_SETTINGS);
/** Rows of variables the server reads; the rest are read only by the `plinth` command. */
const serverRows = rows.filter((row) => !CLI_ONLY.has(row.name));

type Env = Record<string, string>;
/** Environment for defaults that depend on other settings: none of its values is a default. */
const OTHERS: Env = {
  PLINTH_PORT: '1234',
  PLINTH_DOCS_HOST: 'docs.test',
  PLINTH_API_HOST: 'api.test',
  PLINTH_MCP_HOST: 'mcp.test',
  PLINTH_APP_HOST: 'app.test',
  PLINTH_SITE_DOMAIN: 'sites.test',
};
const cores = availableParallelism();
const httpThreads = Math.max(1, cores - 1);
/** Defaults the table states as a rule rather than a value: the rule, and the environments to check it in. */
const RULES: Record<string, Array<{ env: Env; value: string }>> = {
  'cores − 1 (at least 1)': [{ env: {}, value: String(httpThreads) }],
  'cores ÷ `PLINTH_THREADS`, rounded down (at least 1)': [
    { env: {}, value: String(Math.max(1, Math.floor(cores / httpThreads))) },
    { env: { PLINTH_THREADS: '1' }, value: String(cores) },
    { env: { PLINTH_THREADS: String(cores * 2) }, value: '1' },
  ],
  '`1` on a local install, else `0`': [
    { env: {}, value: '1' },
    { env: { PLINTH_PUBLIC_APP_URL: 'http://127.0.0.1:8080' }, value: '1' },
    { env: { PLINTH_SMTP_URL: 'smtp://relay.example:587' }, value: '0' },
    { env: { PLINTH_PUBLIC_APP_URL: 'https://app.example.com' }, value: '0' },
  ],
};
/** A valid value other than the default, to prove the variable is read. */
function otherValue(name: string, fallback: string): string {
  const samples: Env = {
    PLINTH_LISTEN_HOST: '0.0.0.0',
    PLINTH_DATA_DIR: './elsewhere',
    PLINTH_LOG_LEVEL: 'debug',
    PLINTH_PUBLIC_SITE_URL: 'https://{name}.example.site',
    PLINTH_SMTP_URL: 'smtp://relay.example:587',
    PLINTH_MAIL_FROM: 'Ops <ops@example.com>',
    PLINTH_ABUSE_EMAIL: 'abuse@example.com',
    PLINTH_MCP_ALLOWED_ORIGINS: 'https://inspector.example',
    PLINTH_DATABASE_URL: 'postgres://plinth@127.0.0.1:5432/plinth',
    PLINTH_S3_BUCKET: 'plinth-blobs',
    PLINTH_S3_ENDPOINT: 'http://127.0.0.1:9000',
    PLINTH_S3_REGION: 'eu-west-1',
    PLINTH_DNS_SERVERS: '127.0.0.1:5353',
    PLINTH_TLS_ASK_HOST: '10.0.0.2',
    PLINTH_OPS_HOST: '10.0.0.2',
  };
  if (samples[name] !== undefined) return samples[name]!;
  if (['PLINTH_TRUST_PROXY', 'PLINTH_OUTBOX_PAGE', 'PLINTH_METRICS', 'PLINTH_ACCESS_LOG', 'PLINTH_ANALYTICS'].includes(name))
    return fallback === '1' ? '0' : '1';
  if (/_HOST$|_DOMAIN$/.test(name)) return 'other.example';
  if (name.endsWith('_URL')) return 'https://other.example';
  if (/^\d+$/.test(fallback)) return String(Number(fallback) + 1);
  return String(Number(loadConfig({}).threads) + 1);
}

/** The literal a default cell states for `env`: the code span, a rule's value, or undefined for "unset". */
function statedDefault(cell: string, env: Env): string | undefined {
  if (cell === 'unset') return undefined;
  const literal = /^`([^`]*)`$/.exec(cell);
  expect(literal ?? RULES[cell], `default "${cell}" is a \`value\`, "unset", or a rule this test knows`).toBeTruthy();
  if (!literal) return RULES[cell]!.find((rule) => JSON.stringify(rule.env) === JSON.stringify(env))?.value;
  return literal[1]!
    .replace(/<port>/g, env.PLINTH_PORT ?? '8080')
    .replace(/<(PLINTH_[A-Z_]+)>/g, (_m, other: string) => env[other] ?? statedDefault(byName.get(other)!.default, {})!);
}

/** The config field a variable feeds, from `field: int('PLINTH_X'` or `const field = int('PLINTH_X'` in src/config.ts. */
function fieldOf(name: string): string | undefined {
  return new RegExp(`(\\w+)(?::| =) int\\('${name}'`).exec(configSource)?.[1];
}

/** The unit a row's meaning must name, from the config field's name (units live in names) and the variable's suffix. */
function unitOf(name: string): RegExp | undefined {
  const field = fieldOf(name) ?? '';
  if (field.endsWith('PerMinute')) return /per minute/;
  if (field.endsWith('PerHour')) return /per hour/;
  if (field.endsWith('PerDay')) return /per day/;
  if (field.endsWith('PerSecond')) return /\/s\b|per second/;
  if (field.endsWith('Ms')) return /seconds/i;
  if (field.endsWith('Bytes')) return name.endsWith('_MB') ? /\bMB\b/ : name.endsWith('_KB') ? /\bKB\b/ : /\bbytes\b/;
  return undefined;
}

const accepts = (env: Env): boolean => {
  try {
    loadConfig(env);
    return true;
  } catch {
    return false;
  }
};

describe('the settings table (docs/operating.md)', () => {
  it('exists once: no other guide has a row for a PLINTH_* variable', () => {
    const others = readdirSync(new URL('docs/', root))
      .filter((file) => file.endsWith('.md') && file !== 'operating.md')
      .map((file) => `docs/${file}`);
    for (const file of others)
      expect(
        settingRows(read(file)).map((row) => row.name),
        file,
      ).toEqual([]);
    expect(new Set(rows.map((row) => row.name)).size, 'each variable has one row').toBe(rows.length);
  });

  it('has a row for every PLINTH_* variable src/ reads, and none for a variable it does not read', () => {
    expect(rows.map((row) => row.name).sort()).toEqual([...readBy.keys()].sort());
  });

  it("lists exactly the settings of the code's one list (SERVER_SETTINGS and CLI_SETTINGS, by which unknown names are refused)", () => {
    expect(rows.map((row) => row.name).sort()).toEqual([...SERVER_SETTINGS, ...CLI_SETTINGS].sort());
  });

  it('names in the operating guide every other environment variable src/ reads', () => {
    const others = new Set(
      sources.flatMap(({ text }) => [...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!)).filter((name) => !name.startsWith('PLINTH_')),
    );
    expect([...others].filter((name) => !guide.includes(`\`${name}\``))).toEqual([]);
  });

  it('names in src/ (messages and comments too) only variables that exist', () => {
    expect([...mentioned].filter((name) => !readBy.has(name)).sort()).toEqual([]);
  });

  it.each(serverRows.map((row) => [row.name, row] as const))('%s: the stated default is what loadConfig applies', (name, row) => {
    const envs = RULES[row.default]?.map((rule) => rule.env) ?? (/</.test(row.default) ? [OTHERS] : [{}]);
    for (const env of envs) {
      const stated = statedDefault(row.default, env);
      const unset = loadConfig(env);
      if (stated !== undefined) expect(loadConfig({ ...env, [name]: stated }), `${name}=${stated} with ${JSON.stringify(env)}`).toEqual(unset);
      const other = otherValue(name, stated ?? '');
      expect(loadConfig({ ...env, [name]: other }), `${name}=${other} changes the configuration`).not.toEqual(unset);
    }
  });

  it.each(serverRows.map((row) => [row.name, row] as const))('%s: the meaning says what 0 does exactly when 0 is accepted', (name, row) => {
    if (!/^`\d+`$/.test(row.default) && row.default !== '`1` on a local install, else `0`') return;
    expect(row.meaning.includes('`0`'), `${name}: ${row.meaning}`).toBe(accepts({ [name]: '0' }));
  });

  it.each(serverRows.filter((row) => /^`\d+`$/.test(row.default)).map((row) => [row.name] as const))(
    '%s: a value that is not a whole number in range stops the start, naming the setting',
    (name) => {
      for (const value of ['many', '-1', '1.5', '2x', '99999999999']) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(name);
    },
  );

  it.each(serverRows.map((row) => [row.name, row] as const))('%s: the meaning names the unit of the value', (name, row) => {
    const unit = unitOf(name);
    if (unit) expect(row.meaning, name).toMatch(unit);
  });

  it('says of every variable the server does not read that only the plinth command reads it', () => {
    for (const row of rows.filter((r) => !serverRows.includes(r))) {
      expect(row.meaning, row.name).toMatch(/^Read by the `plinth` command, not the server/);
    }
  });

  it('finds the variables only the plinth command reads', () => {
    expect([...CLI_ONLY].sort()).toEqual(['PLINTH_API_URL', 'PLINTH_TOKEN']);
    expect([...CLI_READS].filter((name) => !SERVER_READS.has(name)).sort()).toEqual([...CLI_ONLY].sort());
  });

  it("states the plinth command's defaults as loadCliSettings applies them", () => {
    for (const row of rows.filter((r) => CLI_ONLY.has(r.name))) {
      const field = row.name === 'PLINTH_API_URL' ? 'apiUrl' : 'token';
      const applied = loadCliSettings({})[field];
      expect(applied, row.name).toBe(row.default === 'unset' ? undefined : statedDefault(row.default, {}));
      expect(loadCliSettings({ [row.name]: '' })[field], `${row.name} empty counts as unset`).toBe(applied);
      if (row.default.includes('<port>')) {
        expect(loadCliSettings({ PLINTH_PORT: '9123' })[field], `${row.name} follows PLINTH_PORT`).toBe(statedDefault(row.default, { PLINTH_PORT: '9123' }));
      }
    }
  });

  it("states the plinth command's defaults as its --help does", async () => {
    const { execFileSync } = await import('node:child_process');
    const help = execFileSync(process.execPath, [fileURLToPath(new URL('packages/cli/dist/plinth.js', root)), '--help'], { encoding: 'utf8' });
    for (const row of rows.filter((r) => !serverRows.includes(r))) {
      const line = help.split('\n').find((l) => l.includes(`$${row.name}`));
      expect(line, `plinth --help mentions $${row.name}`).toBeDefined();
      // --help writes the port as the variable it comes from.
      if (row.default !== 'unset') expect(line, row.name).toContain(row.default.slice(1, -1).replace('<port>', '$PLINTH_PORT'));
    }
  });
});
