import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployCommand } from '../../src/cli/deploy.js';
import { writeTree } from '../fixtures/archives.js';
import { request } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('plinth deploy', () => {
  it('publishes a folder, keeps .service.json out of git, and updates the same site next time', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'index.html': '<h1>first</h1>', 'node_modules/x/index.js': 'never sent' });
    writeFileSync(join(dir, '.gitignore'), 'dist');
    const lines: string[] = [];
    const apiUrl = `http://api.localhost:${server.port}`;

    expect(await deployCommand({ dir, apiUrl, out: (line) => lines.push(line) })).toBe(0);
    const state = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; url: string; revision: string; site_token: string };
    expect(state.site).toMatch(/^[a-z]+-[a-z]+-\d{4}$/);
    expect(state.site_token).toMatch(/^st_/);
    expect(state.url).toBe(`http://${state.site}.sites.localhost`);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('dist\n.service.json\n');
    expect(lines[0]).toContain('Published revision 1');

    writeTree(dir, { 'index.html': '<h1>second</h1>' });
    expect(await deployCommand({ dir, apiUrl, out: (line) => lines.push(line) })).toBe(0);
    const next = JSON.parse(readFileSync(join(dir, '.service.json'), 'utf8')) as { site: string; revision: string; site_token: string };
    expect(next.site).toBe(state.site);
    expect(next.site_token).toBe(state.site_token);
    expect(next.revision).not.toBe(state.revision);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('dist\n.service.json\n');
    const page = await request({ port: server.port, host: `${state.site}.sites.localhost` });
    expect(page.text).toContain('second');
  });

  it('reports a refused deploy and exits non-zero', async () => {
    const dir = tempDir('plinth-cli-');
    writeTree(dir, { 'readme.txt': 'no index' });
    const lines: string[] = [];
    expect(await deployCommand({ dir, apiUrl: `http://api.localhost:${server.port}`, out: (line) => lines.push(line) })).toBe(1);
    expect(lines.join('\n')).toContain('400 bad_request');
  });
});
