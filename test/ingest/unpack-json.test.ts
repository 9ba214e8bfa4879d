import { randomInt } from 'node:crypto';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonDeploy } from '../../src/contract/index.js';
import { deployInput } from '../../src/mcp/schemas.js';
import { jsonBody } from '../fixtures/archives.js';
import { createIngestRig, expectError, type IngestRig } from '../fixtures/ingest-pool.js';

let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-unpack-json-');
});
afterAll(() => rig.close());

const index = { path: 'index.html', content: '<h1>hi</h1>' };

async function jsonError(body: unknown) {
  return expectError(await rig.unpack(jsonBody(rig.file('body.json'), body), { bodyKind: 'json' }));
}

// Bodies the schema refuses, each with the message that names the field.
const REFUSED: Array<[string, unknown, string]> = [
  ['files missing', { site: 'my-site' }, 'files is required.'],
  ['files not an array', { files: { 'index.html': 'x' } }, 'files must be an array.'],
  ['a file without a path', { files: [index, { content: 'x' }] }, 'files[1].path is required.'],
  [
    'a file without content',
    { files: [{ path: 'a.html' }] },
    'files[0] needs either "content", or "sha256" and "size" (for content the site already has), not both.',
  ],
  ['content that is not a string', { files: [index, { path: 'a', content: 12 }] }, 'files[1].content must be a string.'],
  ['an unknown encoding', { files: [index, index, { path: 'b', content: 'x', encoding: 'hex' }] }, 'files[2].encoding must be "utf8" or "base64".'],
  ['an unknown field in a file', { files: [{ ...index, mode: 644 }] }, 'files[0].mode is not an allowed field.'],
  ['an unknown top-level field', { files: [index], force: true }, 'force is not an allowed field.'],
  ['patch that is not a boolean', { files: [index], patch: 'yes' }, 'patch must be true or false.'],
  ['deleted that is not a list of strings', { files: [index], patch: true, deleted: ['a', 3] }, 'deleted[1] must be a string.'],
  ['an empty base_revision', { files: [index], base_revision: '' }, 'base_revision must not be empty.'],
  ['a body that is a list', [index], 'The body must be an object.'],
  ['a body that is a string', '"hello"', 'The body must be an object.'],
  ['a body that is null', 'null', 'The body must be an object.'],
  ['an encoding that is not a string', { files: [index, { path: 'b', content: 'x', encoding: 12 }] }, 'files[1].encoding must be "utf8" or "base64".'],
  ['a manifest id that is not one', { files: [index], manifest: 'mf_../x' }, 'manifest has an invalid format.'],
  ['a base_revision past its length', { files: [index], base_revision: `rev_${'x'.repeat(200)}` }, 'base_revision must be at most 200 characters.'],
];

describe('inline JSON schema (SPEC 4.2)', () => {
  it.each(REFUSED)('names the field for %s', async (_name, body, message) => {
    const error = await jsonError(body);
    expect(error.code).toBe('bad_request');
    expect(error.message).toBe(message);
    expect(error.agentMessage).toBeDefined();
  });

  it.each(['-abc', 'abc-', 'UPPER', '', 'a.b', 'a_b', 'x'.repeat(64)])('refuses the site name %j', async (site) => {
    expect((await jsonError({ site, files: [index] })).message).toMatch(/^site must be a site name/);
  });

  // The body's text aside (parsed first) and the content-or-digest rule (checked after the schema).
  it.each(REFUSED.filter(([name, body]) => typeof body !== 'string' && name !== 'a file without content'))(
    "is the contract's JsonDeploy, which MCP's deploy_site lists and checks too: it refuses %s",
    (_name, body) => {
      expect(deployInput).toBe(JsonDeploy);
      expect(new Ajv({ strict: false }).compile(deployInput)(body)).toBe(false);
    },
  );

  it('refuses deleted without patch', async () => {
    expect((await jsonError({ files: [index], deleted: ['a.html'] })).message).toBe('deleted is only allowed with patch: true.');
  });

  it('refuses an unsafe path in deleted', async () => {
    const error = await jsonError({ patch: true, files: [], deleted: ['ok.html', '../etc/passwd'] });
    expect(error).toMatchObject({ code: 'bad_request', details: { file: '../etc/passwd' } });
    expect(error.message).toMatch(/^deleted\[1\]: .*climbs out/);
  });

  it('refuses a path both sent and deleted', async () => {
    expect((await jsonError({ patch: true, files: [{ path: 'a.html', content: 'x' }], deleted: ['./a.html'] })).message).toContain(
      '"a.html" is both in files and in deleted',
    );
  });

  it('refuses an unsafe file path, naming it', async () => {
    expect(await jsonError({ files: [index, { path: '/etc/passwd', content: 'x' }] })).toMatchObject({ code: 'bad_request', details: { file: '/etc/passwd' } });
  });

  it.each([
    ['junk characters', 'aGVsbG8*d29ybGQ='],
    ['spaces', 'aGVs bG8='],
    ['URL-safe letters', 'a-_b'],
    ['a wrong length', 'aGVsbG8'],
    ['padding in the middle', 'aG==bG8='],
    ['too much padding', 'a==='],
  ])('refuses base64 content with %s', async (_name, content) => {
    const error = await jsonError({ files: [index, { path: 'a.bin', content, encoding: 'base64' }] });
    expect(error).toMatchObject({ code: 'bad_request', message: 'files[1].content is not valid base64.', details: { file: 'a.bin' } });
  });
});

describe('malformed JSON', () => {
  it.each([
    ['a trailing comma', '{"files": [],}'],
    ['a cut-off body', '{"files": [{"path": "index.html", "con'],
    ['an empty body', ''],
    ['text after the value', '{"files": []} trailing'],
  ])('refuses %s', async (_name, text) => {
    const error = await jsonError(text);
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(/^Body is not valid JSON: /);
  });

  it('does not quote the body back (it may hold a key)', async () => {
    const key = `AKIA${Array.from({ length: 16 }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[randomInt(32)]).join('')}`;
    const error = await jsonError(`{"files": [${key}]}`);
    expect(error.message).toMatch(/^Body is not valid JSON: Unexpected token/);
    expect(JSON.stringify(error)).not.toContain(key);
  });
});
