import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SECOND_LINE, SLOW_FIRST } from '../vitest.config.js';

/**
 * Every test file sits in the vitest project its contents need (vitest.config.ts): one that
 * starts Chromium is `*.browser.test.ts`, one that starts the server is `*.http.test.ts` (or a
 * browser test), and the unit project starts neither, so `--project unit` stays fast.
 */

const TEST = fileURLToPath(new URL('.', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : [],
  );
}

const files = testFiles(TEST)
  .map((file) => relative(TEST, file))
  .filter((path) => !path.startsWith('reliability/') && !path.startsWith('cluster/') && !path.startsWith('edge/'));
const STARTS_BROWSER = /\b(launchBrowser|useBrowser)\(|chromium\.launch\(/;
const STARTS_SERVER = /\b(startTestServer|startAppServer|useTestServer|useAppServer|startMain|startServer)\(/;

/** A path to the built service in a test file: it is started through test/helpers/main-process.ts instead. */
const NAMES_BUILT_SERVICE = /['"][\w./-]*dist\/main\.js['"]/;

describe('test projects', () => {
  it.each(files.map((path) => [path]))('%s is in the project it needs', (path) => {
    const text = readFileSync(join(TEST, path), 'utf8');
    if (STARTS_BROWSER.test(text)) expect(path).toMatch(/\.browser\.test\.ts$/);
    else if (STARTS_SERVER.test(text)) expect(path).toMatch(/\.(http|browser)\.test\.ts$/);
    else expect(path).not.toMatch(/\.(http|browser)\.test\.ts$/);
  });

  it('the files vitest.config.ts starts first exist and run with npm test', () => {
    expect(SLOW_FIRST.filter((path) => !files.includes(relative(TEST, join(TEST, '..', path))))).toEqual([]);
    expect(SLOW_FIRST.filter((path) => SECOND_LINE.includes(path))).toEqual([]);
  });

  it('the second-line files it runs with the reliability project exist', () => {
    expect(SECOND_LINE.filter((path) => !files.includes(relative(TEST, join(TEST, '..', path))))).toEqual([]);
  });

  it('start the built service through startMain (test/helpers/main-process.ts), whose time-out ends the process it started', () => {
    expect(files.filter((path) => NAMES_BUILT_SERVICE.test(readFileSync(join(TEST, path), 'utf8')))).toEqual([]);
  });
});
