import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiBase } from '../../packages/cli/src/server-address.js';
import { useTestServer } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/sites.js';
import { runCli } from './run-cli.js';

/** The API's address as people write it: with or without the version the commands add. */

const server = useTestServer();

describe("the CLI's API address", () => {
  it.each([
    ['https://api.example.org', 'https://api.example.org'],
    ['https://api.example.org/', 'https://api.example.org/'],
    ['https://api.example.org/v1', 'https://api.example.org'],
    ['https://api.example.org/v1/', 'https://api.example.org'],
    ['https://example.org/plinth/v1', 'https://example.org/plinth'],
    ['https://example.org/v10', 'https://example.org/v10'],
    ['https://example.org/v1/x', 'https://example.org/v1/x'],
  ])('%s is taken as %s', (given, base) => expect(apiBase(given)).toBe(base));

  it.each([
    ['PLINTH_API_URL', (url: string) => ({ args: [] as string[], env: { PLINTH_API_URL: url } })],
    ['--api', (url: string) => ({ args: ['--api', url], env: {} })],
  ])('deploys with %s ending in /v1', async (_how, given) => {
    const dir = tempDir('plinth-cli-api-v1-');
    writeFileSync(join(dir, 'index.html'), '<h1>v1</h1>');
    const { args, env } = given(`http://api.localhost:${server.port}/v1`);
    const run = await runCli(server.port, ['deploy', dir, ...args], { env });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Published revision 1: http:\/\/\S+/);
  });
});
