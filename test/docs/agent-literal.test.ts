import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/index.js';
import { loadConfig, type Config } from '../../src/config.js';
import { buildDocsSite } from '../../src/docs/index.js';
import { MAX_JSON_BODY_BYTES, MAX_MANIFEST_BODY_BYTES, MAX_REQUEST_BYTES } from '../../src/rules/index.js';

/**
 * Issue 33: what the guides say, as an agent that follows them literally reads them. Each fact has
 * to be stated where it is looked for (the agent guide and the limits page), in the words the
 * server's own numbers give, and once: one rule for an archive's Content-Type on every page.
 */

const docsSiteOf = (config: Readonly<Config>) => buildDocsSite(config, { openApi: openApiDocument(config) });
const site = docsSiteOf(loadConfig({ PLINTH_PORT: '8080' }));
const get = (path: string): string => site.respond({ method: 'GET', path }).body.toString();
const flat = (text: string): string => text.replace(/\s+/g, ' ');

const agentGuide = flat(get('/agent-guide.md'));
const limits = flat(get('/limits.md'));

describe('sizes', () => {
  it.each([
    ['the agent guide', agentGuide],
    ['the limits page', limits],
  ])('%s says a MB is a MiB, with the request cap in bytes', (_page, text) => {
    expect(text).toContain('1 MB is 1,048,576 bytes (a MiB)');
    expect(text).toContain(`${MAX_REQUEST_BYTES.toLocaleString('en-US')} bytes`);
  });

  it.each([
    ['the agent guide', agentGuide],
    ['the limits page', limits],
  ])('%s says which bodies the JSON cap covers, and the two that it does not', (_page, text) => {
    expect(text).toMatch(new RegExp(`JSON bod(y|ies) (is|are) at most ${MAX_JSON_BODY_BYTES / 1024} KB`));
    expect(text).toMatch(
      /`POST \/v1\/deploy`[^.]*up to 90 MB|`POST \/v1\/deploy` \(archive or JSON, and each part of a manifest\) is held to the one-request limit/,
    );
    expect(text).toContain(`\`POST /v1/deploy/manifest\``);
    expect(text).toContain(`${MAX_MANIFEST_BODY_BYTES / 1024 / 1024} MB`);
  });
});

describe('what else an agent must know before it starts', () => {
  it.each([
    ['the agent guide', agentGuide],
    ['the limits page', limits],
  ])('%s says that publishing without an account is REST only, and that a cut-off part counts for nothing', (_page, text) => {
    expect(text.toLowerCase()).toContain('publishing without an account is rest only');
    expect(text).toMatch(/part (of a manifest )?cut off mid-upload( \([^)]*\))? counts for nothing/);
  });

  it('one rule for an archive Content-Type, the same words on every page that sends one', () => {
    const rule = 'Any `Content-Type` but a JSON one will do';
    const publishing = flat(get('/publishing.md'));
    expect(agentGuide).toContain(rule);
    expect(publishing).toContain(rule);
    expect(publishing).not.toContain('`Content-Type` does not matter');
    expect(agentGuide).not.toContain("Send the archive's type as `Content-Type`");
  });
});

describe('example addresses', () => {
  it('the agent guide page links to no example site and no example claim link', () => {
    const html = get('/agent-guide');
    expect(html).toContain('sunny-otter-4821.sites.localhost:8080');
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!);
    expect(hrefs.filter((href) => /\.sites\.localhost|\/claim\/ct_|…/.test(href))).toEqual([]);
  });
});
