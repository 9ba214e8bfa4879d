import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeakGuard } from '../../src/ingest/leak-guard.js';
import { cssRefs, pageRefs } from '../../src/ingest/link-refs.js';
import { scanAllSecrets, scanForSecrets } from '../../src/ingest/secrets.js';
import { compileRedirects, matchRedirect, type RulesFileLimits } from '../../src/rules/index.js';
import { tarFromEntries, tarGzDeclaring, zipFromEntries } from '../fixtures/archives.js';
import { createIngestRig, expectError, MB, type IngestRig } from '../fixtures/ingest-pool.js';

/**
 * The checks that time the wall clock: hostile inputs that the default run already refuses or
 * scans correctly (test/ingest/, test/rules/, test/security/), timed here against a deadline.
 * A deadline measures the machine as much as the code, so they run with the reliability
 * project, on a machine that is not busy with anything else, and not in `npm test`.
 */

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const BASE64 = `${ALNUM}+/`;

let seed = 20240611;
function fake(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out += alphabet[(seed >>> 16) % alphabet.length];
  }
  return out;
}

describe('the secret scan takes linear time', () => {
  it.each([
    ['a megabyte of one letter', 'a'.repeat(1 << 20)],
    ['a megabyte of hex', HEX.repeat(1 << 16)],
    ['a megabyte of base64', fake(1 << 20, BASE64)],
    ['repeated Stripe prefixes', 'sk_live_'.repeat(1 << 17)],
    ['repeated Slack prefixes', 'xoxb-1-'.repeat(1 << 17)],
    ['repeated GitLab prefixes', 'glpat-'.repeat(1 << 17)],
    ['repeated OpenAI prefixes', 'sk-proj-'.repeat(1 << 17)],
    ['repeated key headers', '-----BEGIN '.repeat(1 << 16)],
    ['repeated key names', 'aws_secret_access_key='.repeat(1 << 15)],
    ['a Mailgun keyword and hex', `mailgun ${'0123456789abcdef-'.repeat(1 << 16)}`],
    ['dotted words', 'Maaaaaaaaaaaaaaaaaaaaaaaaa.'.repeat(1 << 15)],
    ['one long word after a prefix', `${'ghp_'}${'a'.repeat(1 << 20)}`],
    ['a megabyte of newlines', '\n'.repeat(1 << 20)],
    ['a key header with a long label', `-----BEGIN ${'A'.repeat(1 << 20)}`],
    ['repeated mailgun keywords', 'mailgun '.repeat(1 << 17)],
    ['repeated Discord-like words', `M${'a'.repeat(24)}.abcdef.`.repeat(1 << 15)],
    ['a megabyte of uppercase', fake(1 << 20, UPPER + DIGITS)],
    ['repeated webhook paths', 'hooks.slack.com/services/T'.repeat(1 << 15)],
    ['repeated short keywords', 'aws secret pat hf_ r8_ SKa key- -us1 dapia sk-ant- ----'.repeat(1 << 14)],
    ['repeated placeholder key ids with separators', `${'AKIA'}${'X'.repeat(16)}", "`.repeat(1 << 15)],
    ['repeated secret names with values and no key id', `secret: "${fake(40, BASE64)}", `.repeat(1 << 14)],
    ['repeated secret names with quotes and spaces', 'secret\\" \t \\" ,\n value\\" := \\"'.repeat(1 << 14)],
  ])('scans %s in linear time', (_name, text) => {
    const started = performance.now();
    scanForSecrets(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  const id = (): string => `${'AKIA'}${fake(16, UPPER + DIGITS)}`;
  const secret = (): string => fake(40, BASE64);
  it('scans a long minified line full of keys in linear time', () => {
    const text = `var c=[${Array.from({ length: 20_000 }, () => `{accessKeyId:"${id()}",secretAccessKey:"${secret()}",t:"${'ghp_'}${fake(36)}"}`).join(',')}];`;
    const started = performance.now();
    expect(scanAllSecrets(text, 50)).toEqual([
      { line: 1, kind: 'aws-access-key-id' },
      { line: 1, kind: 'aws-secret-access-key' },
      { line: 1, kind: 'github-token' },
    ]);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('the leak guard stops a bomb at its limit', () => {
  it('in well under a second, not after inflating all of it', () => {
    const bomb = gzipSync(Buffer.alloc(64 * MB));
    const started = performance.now();
    expect(() => createLeakGuard({ maxFileBytes: 1 * MB, maxExpandedBytes: 4 * MB }).check('zeros.gz', bomb)).toThrow();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('rule files and link references take linear time', () => {
  const LIMITS: RulesFileLimits = { maxEntries: 2000, maxLineChars: 1000, maxFileBytes: 1024 * 1024, maxPatternSegments: 32 };

  it('compiles a 2,000-rule file of hostile patterns quickly, and matches it in linear time', () => {
    // As long as the segment cap lets a pattern be: 30 literals, a placeholder and a splat.
    const text = Array.from({ length: 2000 }, (_, i) => `/${'x/'.repeat(30)}:p${i}/* /y/:p${i}/:splat`).join('\n');
    const started = performance.now();
    const result = compileRedirects(text, LIMITS);
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.error)}`);
    const segments = Array.from({ length: 400 }, () => 'x');
    for (let i = 0; i < 10; i++) matchRedirect(result.compiled, segments, false, () => new URLSearchParams());
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('scans a hostile style sheet in linear time', () => {
    const css = `${'url('.repeat(50_000)}${'/*'.repeat(50_000)}${'@import '.repeat(50_000)}`;
    const started = performance.now();
    cssRefs(css);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("the link check's page reader takes linear time", () => {
  const MB = 1 << 20;
  // Pages of one line, so that counting lines must not start over at each reference either.
  it.each([
    ['a reference in every href', '<a href="a&amp;b">'.repeat(MB / 18)],
    ['comments', '<!--x-->'.repeat(MB / 8)],
    ['a tag that never ends', '<a href=x '.repeat(MB / 10)],
    ['nested script escapes', `<script>${'<!--<script>'.repeat(MB / 12)}`],
    ['script escapes left', `<script>${'<!-- -->'.repeat(MB / 8)}</script>`],
    ['end tags with attributes', '</a href="x" y=\'z\'>'.repeat(MB / 20)],
    ['one tag of many attributes', `<a ${'href=x '.repeat(MB / 7)}>`],
    ['less-than signs', '<'.repeat(MB)],
    ['a srcset of many images', `<img srcset="${'a 1x,'.repeat(MB / 5)}">`],
    ['a style attribute in every tag', '<p style="url(x)">'.repeat(MB / 18)],
  ])('%s', (_name, html) => {
    const started = performance.now();
    pageRefs(html);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('the ingest pool stops bombs at the limit, within two seconds', () => {
  let rig: IngestRig;
  beforeAll(() => {
    rig = createIngestRig('plinth-timings-');
  });
  afterAll(() => rig.close());
  const PAGE = '<!doctype html><title>x</title>\n';
  const limits = { maxFiles: 5, maxFileBytes: 1 * MB, maxSiteBytes: 2 * MB };
  const timed = async (archive: string, options = limits): Promise<number> => {
    const start = performance.now();
    expectError(await rig.unpack(archive, { limits: options }));
    return performance.now() - start;
  };

  it('a tar entry whose header declares 10 GB', async () => {
    expect(await timed(await tarGzDeclaring(rig.file('huge.tgz'), 'huge.bin', 10 * 1024 * MB, 64 * MB))).toBeLessThan(2000);
  });

  it('a gzip bomb inside a tar', async () => {
    const archive = await tarFromEntries(rig.file('bomb.tgz'), [
      { name: 'index.html', content: PAGE },
      { name: 'zeros.txt', content: Buffer.alloc(100 * MB) },
    ]);
    expect(await timed(archive)).toBeLessThan(2000);
  });

  it('a zip bomb of 200 MB of zeros', async () => {
    const zip = await zipFromEntries(rig.file('bomb.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'zeros.bin', zeros: 200 * MB },
    ]);
    expect(await timed(zip, { maxFiles: 100, maxFileBytes: 10 * MB, maxSiteBytes: 50 * MB })).toBeLessThan(2000);
  });

  it('a zip entry that inflates past its declared size', async () => {
    const zip = await zipFromEntries(rig.file('liar.zip'), [
      { name: 'index.html', data: Buffer.from(PAGE) },
      { name: 'small.txt', zeros: 200 * MB, declaredSize: 1000 },
    ]);
    expect(await timed(zip)).toBeLessThan(2000);
  });
});
