import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountSite, accountWithToken, type TestAccount } from '../api/api-helpers.js';
import { useTestDns, useTestServer } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/sites.js';
import { runCli } from './run-cli.js';

/** `plinth domains` through the built command against a real server and a loopback DNS server. */

let owner: TestAccount;

const dns = useTestDns();
const server = useTestServer(() => ({ PLINTH_DNS_SERVERS: dns.address }));

beforeAll(async () => {
  owner = await accountWithToken(server.store, 'builder');
});

const plinth = (dir: string, ...args: string[]) => runCli(server.port, args, { cwd: dir, env: { PLINTH_TOKEN: owner.token } });

describe('plinth domains', () => {
  it('adds, verifies, lists, marks primary and removes a domain of the folder’s site', async () => {
    const site = await accountSite(server.store, owner);
    const dir = tempDir('plinth-cli-domains-');
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ site: site.name, url: `http://${site.name}.sites.localhost`, revision: site.revision }));

    expect((await plinth(dir, 'domains')).stdout).toContain(`${site.name} has no custom domains`);
    const added = await plinth(dir, 'domains', 'add', 'www.cli-example.org');
    expect(added.status).toBe(0);
    expect(added.stdout).toContain('www.cli-example.org: pending');
    const txt = /TXT {4}(_plinth-challenge\.www\.cli-example\.org) {2}(plinth-verify=\S+)/.exec(added.stdout);
    expect(txt, added.stdout).not.toBeNull();
    expect(added.stdout).toContain(`CNAME  www.cli-example.org  ${site.name}.sites.localhost`);

    dns.txt.set(txt![1]!, [txt![2]!]);
    const verified = await plinth(dir, 'domains', 'verify', 'www.cli-example.org');
    expect(verified.stdout).toContain('www.cli-example.org: active');
    expect((await plinth(dir, 'domains', 'add', 'www.cli-example.org', '--primary', '--redirect')).status).toBe(0);
    const listed = await plinth(dir, 'domains');
    expect(listed.stdout.split('\n')[1]).toMatch(/^www\.cli-example\.org\s+active\s+primary, site redirects$/);
    const json = await plinth(dir, 'domains', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ domains: [{ domain: 'www.cli-example.org', status: 'active', primary: true }] });

    expect((await plinth(dir, 'domains', 'remove', 'www.cli-example.org')).stdout).toContain(`Removed www.cli-example.org from ${site.name}.`);
    const again = await plinth(dir, 'domains', 'remove', 'www.cli-example.org');
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('Removing the domain failed (404 not_found)');
  });

  it('refuses wrong usage with status 2 and a bad domain with status 1', async () => {
    const site = await accountSite(server.store, owner);
    const dir = tempDir('plinth-cli-domains-');
    writeFileSync(join(dir, '.service.json'), JSON.stringify({ site: site.name, url: `http://${site.name}.sites.localhost`, revision: site.revision }));
    expect((await plinth(dir, 'domains', 'add')).status).toBe(2);
    const bad = await plinth(dir, 'domains', 'add', '10.0.0.1');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('An IP address cannot be a custom domain');
  });
});
