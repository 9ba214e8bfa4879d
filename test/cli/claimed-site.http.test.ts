import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployCommand } from '../../packages/cli/src/deploy.js';
import { revisionsCommand } from '../../packages/cli/src/site-commands.js';
import { accountWithToken } from '../api/api-helpers.js';
import { AppClient } from '../app/http-client.js';
import { writeTree } from '../fixtures/archives.js';
import { request } from '../helpers/http.js';
import { tempDir } from '../helpers/sites.js';
import { useAppServer } from '../helpers/fixtures.js';

/** A folder published anonymously by `plinth deploy`, then claimed in the app by a signed-in person. */

const server = useAppServer();

const readState = (dir: string): Record<string, string> => JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8'));

async function publishAndClaim(fields: Record<string, string>): Promise<{ dir: string; site: string; email: string }> {
  const dir = tempDir('plinth-claimed-');
  writeTree(dir, { 'index.html': '<h1>first</h1>' });
  const lines: string[] = [];
  expect(await deployCommand({ dir, apiUrl: server.apiUrl, json: true, out: (line) => lines.push(line) })).toBe(0);
  const created = JSON.parse(lines.join('\n')) as { site: { name: string }; claim_url: string };
  const person = await accountWithToken(server.store, 'builder');
  const browser = new AppClient(server);
  await browser.signIn(person.account.email);
  const claimPath = new URL(created.claim_url).pathname;
  const claimed = await browser.post(claimPath, { ...fields, csrf: await browser.formToken('/') });
  expect(claimed.status).toBe(303);
  return { dir, site: created.site.name, email: person.account.email };
}

describe('plinth deploy of a folder whose site was claimed', () => {
  it('keeps publishing with the API token the owner handed to the publisher, and keeps it as "api_token"', async () => {
    const { dir, site } = await publishAndClaim({ agent_token: 'yes' });
    writeTree(dir, { 'index.html': '<h1>second</h1>' });
    const out: string[] = [];
    const err: string[] = [];
    expect(await deployCommand({ dir, apiUrl: server.apiUrl, out: (line) => out.push(line), err: (line) => err.push(line) })).toBe(0);
    expect(err.join('\n')).toContain('"api_token"');
    // Called what it is: a token for the whole account, kept in a file only its owner can read.
    expect(err.join('\n')).toContain('an API token for your account');
    expect((statSync(join(dir, '.service.json')).mode & 0o777).toString(8)).toBe('600');
    expect(out[0]).toMatch(/^Published revision 2: /);
    expect((await request({ port: server.port, host: `${site}.sites.localhost` })).text).toContain('second');

    const state = readState(dir);
    expect(state.api_token).toMatch(/^pl_/);
    expect(state.site_token).toBeUndefined();
    // The claim link worked once: the folder no longer offers it.
    expect(state.claim_url).toBeUndefined();
    // The account's log has the token the claim made for the publisher, as it has every token made.
    const log = await request({
      port: server.port,
      host: new URL(server.apiUrl).host,
      path: '/v1/me/events',
      headers: { authorization: `Bearer ${state.api_token}` },
    });
    const kinds = (JSON.parse(log.text) as { events: Array<{ kind: string; details: { name?: string } }> }).events.map((event) => [
      event.kind,
      event.details.name,
    ]);
    expect(kinds).toContainEqual(['token.created', `Agent that published ${site}`]);

    // The next run, and the other commands, use it without being told.
    writeTree(dir, { 'index.html': '<h1>third</h1>' });
    expect(await deployCommand({ dir, apiUrl: server.apiUrl, out: () => undefined })).toBe(0);
    expect(readState(dir).api_token).toBe(state.api_token);
    const listed: string[] = [];
    expect(await revisionsCommand({ dir, apiUrl: server.apiUrl, json: true, out: (line) => listed.push(line), err: () => undefined })).toBe(0);
    expect(JSON.parse(listed.join('\n')).revisions).toHaveLength(3);
  });

  it('without a handed-over token, says how to go on and changes nothing', async () => {
    const { dir } = await publishAndClaim({});
    const before = readFileSync(join(dir, '.service.json'), 'utf8');
    writeTree(dir, { 'index.html': '<h1>second</h1>' });
    const err: string[] = [];
    expect(await deployCommand({ dir, apiUrl: server.apiUrl, out: () => undefined, err: (line) => err.push(line) })).toBe(1);
    expect(err.join('\n')).toContain('has been claimed');
    expect(err.join('\n')).toContain('"api_token"');
    expect(readFileSync(join(dir, '.service.json'), 'utf8')).toBe(before);
  });
});
