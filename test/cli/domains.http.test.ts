import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { startTestDns, type TestDns } from '../helpers/dns.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDir } from '../helpers/sites.js';

/** `plinth domains` through the built command against a real server and a loopback DNS server. */

const CLI = fileURLToPath(new URL('../../packages/cli/dist/plinth.js', import.meta.url));
let server: TestServer;
let dns: TestDns;
let owner: TestAccount;

beforeAll(async () => {
  dns = await startTestDns();
  server = await startTestServer({ PLINTH_DNS_SERVERS: dns.address });
  owner = await accountWithToken(server.store, 'builder');
});

afterAll(async () => {
  await server?.close();
  await dns?.close();
});

function plinth(dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { ...process.env, PLINTH_API_URL: `http://api.localhost:${server.port}`, PLINTH_TOKEN: owner.token } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('plinth domains', () => {
  it('adds, verifies, lists, marks primary and removes a domain of the folder’s site', async () => {
    const site = await accountSite(server.store, owner);
    const dir = tempDir('plinth-cli-domains-');
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ site: site.name, url: `http://${site.name}.sites.localhost`, revision: site.revision }));

    expect((await plinth(dir, 'domains')).stdout).toContain(`${site.name} has no custom domains`);
    const added = await plinth(dir, 'domains', 'add', 'www.cli-example.org');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('www.cli-example.org: pending');
    const txt = /TXT {4}(_plinth-challenge\.www\.cli-example\.org) {2}(plinth-verify=\S+)/.exec(added.stdout);
    expect(txt, added.stdout).not.toBeNull();
    expect(added.stdout).toContain(`CNAME  www.cli-example.org  ${site.name}.sites.localhost`);

    dns.txt.set(txt![1]!, [txt![2]!]);
    const verified = await plinth(dir, 'domains', 'verify', 'www.cli-example.org');
    expect(verified.stdout).toContain('www.cli-example.org: active');
    expect((await plinth(dir, 'domains', 'add', 'www.cli-example.org', '--primary', '--redirect')).code).toBe(0);
    const listed = await plinth(dir, 'domains');
    expect(listed.stdout.split('\n')[1]).toMatch(/^www\.cli-example\.org\s+active\s+primary, site redirects$/);
    const json = await plinth(dir, 'domains', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ domains: [{ domain: 'www.cli-example.org', status: 'active', primary: true }] });

    expect((await plinth(dir, 'domains', 'remove', 'www.cli-example.org')).stdout).toContain(`Removed www.cli-example.org from ${site.name}.`);
    const again = await plinth(dir, 'domains', 'remove', 'www.cli-example.org');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Removing the domain failed (404 not_found)');
  });

  it('refuses wrong usage with status 2 and a bad domain with status 1', async () => {
    const site = await accountSite(server.store, owner);
    const dir = tempDir('plinth-cli-domains-');
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ site: site.name, url: `http://${site.name}.sites.localhost`, revision: site.revision }));
    expect((await plinth(dir, 'domains', 'add')).code).toBe(2);
    const bad = await plinth(dir, 'domains', 'add', '10.0.0.1');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('An IP address cannot be a custom domain');
  });
});
