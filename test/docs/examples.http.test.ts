import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_ROUTES, openApiDocument } from '../../src/api/index.js';
import { docFacts, GUIDE_DIR } from '../../src/docs/index.js';
import { fillFacts } from '../../src/docs/facts.js';
import { createWebhookTransport, type WebhookTransport } from '../../src/outbound/index.js';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { startTestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';
import {
  captureLines,
  compareHttp,
  compareJson,
  compareText,
  extractBlocks,
  listGuideFiles,
  ShellSession,
  valueAt,
  type Bindings,
  type BlockResult,
} from './example-runner.js';
import { componentValidator, responseChecker } from './openapi-check.js';

/**
 * Every example in the guides, run against a freshly started server: each guide in its own bash
 * session and data directory, as a reader would follow it. See example-runner.ts for the rules.
 */

// The addresses the guides show; the server hands out the same ones.
const LOCAL_URLS = {
  PLINTH_PUBLIC_DOCS_URL: 'http://localhost:8080',
  PLINTH_PUBLIC_API_URL: 'http://api.localhost:8080',
  PLINTH_PUBLIC_MCP_URL: 'http://mcp.localhost:8080',
  PLINTH_PUBLIC_APP_URL: 'http://app.localhost:8080',
  PLINTH_PUBLIC_SITE_URL: 'http://{name}.sites.localhost:8080',
  // The defaults: the guides stay far below them.
  PLINTH_ANON_SITES_PER_HOUR: '10',
  PLINTH_ANON_DEPLOYS_PER_HOUR: '60',
  // The analytics guide polls once a second until a visit is counted: written every 100 ms
  // rather than every 10 s, it is counted by the first poll or the second, not the tenth.
  PLINTH_ANALYTICS_FLUSH_MS: '100',
};

const guides = listGuideFiles(GUIDE_DIR);
/**
 * The webhooks guide registers https://hooks.example.com/…: its name stands for a public address
 * here, with no DNS, and nothing is ever sent (tests reach loopback only).
 */
const guideWebhooks: WebhookTransport = {
  check: createWebhookTransport({
    allowLoopback: false,
    timeoutMs: 1000,
    maxResponseBytes: 1024,
    lookup: async (host) => (host === 'hooks.example.com' ? [{ address: '93.184.216.34', family: 4 }] : []),
  }).check,
  send: async () => ({ error: 'not sent from the guide examples' }),
};
/** Guides read step by step by newcomers and agents, and the API reference: every command that prints has its output shown. */
const EVERY_OUTPUT_SHOWN = new Set(['agent-guide.md', 'quick-start.md', 'cli.md', 'sites-api.md']);
let checker: ReturnType<typeof responseChecker> | undefined;
const counts = { blocks: 0, calls: 0, outputs: 0, schemaExamples: 0, skipped: 0 };

afterAll(() => {
  console.info(
    `examples: ${counts.blocks} shell blocks run, ${counts.calls} HTTP calls, ${counts.outputs} outputs compared, ${counts.schemaExamples} JSON examples checked against schemas, ${counts.skipped} blocks not run`,
  );
});

// Custom domains are checked against this loopback DNS server (it has no records), never the system's.
let dns: TestDns | undefined;
afterAll(() => dns?.close());

// A guide is one shell session of many commands (the CLI guide runs the command some thirty
// times): more than the default per-test time on a busy machine.
const GUIDE_TIMEOUT_MS = 120_000;

describe('guide examples', () => {
  it.each(guides)('%s: every example runs and shows what the server answers', { timeout: GUIDE_TIMEOUT_MS }, async (file) => {
    dns ??= await startTestDns();
    const server = await startTestServer({ ...LOCAL_URLS, PLINTH_DNS_SERVERS: dns.address }, undefined, { webhookTransport: guideWebhooks });
    const document = openApiDocument(server.config);
    checker ??= responseChecker(document);
    const validateComponent = componentValidator(document);
    const workDir = tempDir('plinth-guide-');
    // A reader's project folder.
    mkdirSync(join(workDir, 'my-site'));
    writeFileSync(join(workDir, 'my-site', 'index.html'), '<h1>Hello</h1>\n');
    const session = new ShellSession(workDir, { port: server.port, dataDir: server.dataDir });
    const source = fillFacts(readFileSync(new URL(file, GUIDE_DIR), 'utf8'), docFacts(server.config), file);
    const bindings: Bindings = new Map();
    let last: BlockResult | undefined;
    let lastJson: unknown;
    try {
      const blocks = extractBlocks(source);
      for (const [index, block] of blocks.entries()) {
        const where = `${file}, code block ${index + 1} (${block.lang}):\n${block.code}\n`;
        if (block.lang === 'sh') {
          if (block.note.skip !== undefined) {
            expect(block.code, `${where}blocks that call curl are always run`).not.toMatch(/\bcurl\b/);
            counts.skipped++;
            last = undefined;
            continue;
          }
          let code = block.code;
          for (const capture of captureLines(code)) {
            const value = valueAt(lastJson, capture.path);
            expect(typeof value, `${where}${capture.path} is not in the last answer: ${JSON.stringify(lastJson)}`).toBe('string');
            if (capture.sample !== '' && !capture.sample.includes('…')) bindings.set(capture.sample, value as string);
            code = code.replace(capture.line, `${capture.name}='${value as string}'`);
          }
          const result = await session.run(code);
          counts.blocks++;
          counts.calls += result.calls.length;
          const context = `${where}stdout: ${result.stdout}\nstderr: ${result.stderr}`;
          expect(result.exitCode, `${context}\nexit status`).toBe(block.note.expectExit ?? 0);
          result.calls.forEach((call, i) => {
            const isLast = i === result.calls.length - 1;
            if (isLast && block.note.expectStatus !== undefined)
              expect(call.status, `${context}\nstatus of ${call.method} ${call.url}`).toBe(block.note.expectStatus);
            else expect(call.status >= 200 && call.status < 400, `${context}\n${call.method} ${call.url} answered ${call.status}: ${call.body}`).toBe(true);
            const url = new URL(call.url);
            if (url.hostname === 'api.localhost') {
              expect(checker!.check(call.method, url.pathname, call.status, call.headers['content-type'], call.body), context).toEqual([]);
            }
          });
          if (block.note.expectStatus !== undefined) expect(result.calls.length, `${where}expects a status but made no HTTP call`).toBeGreaterThan(0);
          // In the guides a newcomer follows step by step, whatever prints something shows it next.
          const shown = blocks[index + 1];
          if (EVERY_OUTPUT_SHOWN.has(file) && result.stdout.trim() !== '') {
            expect(['json', 'http', 'text'], `${where}prints output, but the guide does not show it:\n${result.stdout}`).toContain(shown?.lang);
          }
          last = result;
          const output = result.calls.at(-1)?.body.toString('utf8') ?? result.stdout;
          try {
            lastJson = JSON.parse(output);
          } catch {
            lastJson = undefined;
          }
          // The next block's `NAME=sample  # from .path` lines name samples of this answer.
          const next = blocks.slice(index + 1).find((b) => b.lang === 'sh');
          for (const capture of next ? captureLines(next.code) : []) {
            const value = valueAt(lastJson, capture.path);
            if (typeof value === 'string' && capture.sample !== '' && !capture.sample.includes('…')) bindings.set(capture.sample, value);
          }
          continue;
        }
        if (block.lang === 'json' || block.lang === 'http' || block.lang === 'text') {
          if (last) {
            counts.outputs++;
            const call = last.calls.at(-1);
            if (block.lang === 'json') {
              const actual = JSON.parse(call ? call.body.toString('utf8') : last.stdout);
              expect(compareJson(JSON.parse(block.code), actual, bindings), `${where}answer: ${JSON.stringify(actual, null, 2)}`).toEqual([]);
            } else if (block.lang === 'http') {
              expect(call, `${where}no HTTP call before it`).toBeDefined();
              expect(compareHttp(block.code, call!, bindings), `${where}headers: ${JSON.stringify(call!.headers, null, 2)}`).toEqual([]);
            } else {
              expect(compareText(block.code, last.stdout, bindings), where).toEqual([]);
            }
            last = undefined;
            continue;
          }
          if (block.lang === 'json') {
            expect(block.note.schema, `${where}a JSON example must follow the command that produces it, or name its schema`).toBeDefined();
            expect(validateComponent(block.note.schema!, JSON.parse(block.code)), where).toEqual([]);
            counts.schemaExamples++;
          }
          continue;
        }
        last = undefined;
      }
    } finally {
      session.close();
      await server.close();
    }
  });

  it('called every route of the API successfully, and every answer matched the OpenAPI document', () => {
    expect(checker).toBeDefined();
    const missing = API_ROUTES.filter((route) => ![...(checker!.seen.get(`${route.method} ${route.path}`) ?? [])].some((status) => status < 300));
    expect(missing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });
});
