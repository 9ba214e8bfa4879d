import { resolve } from 'node:path';
import { callApi } from './api-client.js';
import { reportFailure, type CommandIo } from './output.js';
import { readState } from './state.js';
import { UsageError } from './usage.js';

/**
 * `plinth domains [add|verify|remove <domain>] [dir]`: custom domains of the folder's site. They
 * need an API token of an account (a site token cannot manage domains).
 */
export interface DomainCommandOptions extends CommandIo {
  apiUrl: string;
  token?: string;
  /** The token of `plinth login`. */
  savedToken?: string;
  dir: string;
  action: 'list' | 'add' | 'verify' | 'remove';
  domain?: string;
  primary?: boolean;
  redirect?: boolean;
}

interface DomainRow {
  domain: string;
  status: string;
  reason?: string;
  primary: boolean;
  redirect_site_address: boolean;
  records: Array<{ type: string; name: string; value: string }>;
  agent_message?: string;
}

export async function domainsCommand(options: DomainCommandOptions): Promise<number> {
  const state = await readState(resolve(options.dir));
  if (!state) throw new UsageError(`${options.dir} has no .service.json: publish it first with plinth deploy ${options.dir}`);
  const token = options.token ?? options.savedToken;
  if (!token) throw new UsageError('plinth domains needs an API token: run plinth login, or pass --token pl_… or set PLINTH_TOKEN');
  const base = `v1/sites/${encodeURIComponent(state.site)}/domains`;
  const domain = options.domain === undefined ? '' : encodeURIComponent(options.domain);
  const json = (value: unknown) => ({ headers: { 'Content-Type': 'application/json' }, body: Buffer.from(JSON.stringify(value)) });
  const call =
    options.action === 'list'
      ? { method: 'GET' as const, path: base, what: 'Listing domains' }
      : options.action === 'add'
        ? {
            method: 'POST' as const,
            path: base,
            what: 'Adding the domain',
            ...json({
              domain: options.domain,
              ...(options.primary !== undefined ? { primary: options.primary } : {}),
              ...(options.redirect !== undefined ? { redirect_site_address: options.redirect } : {}),
            }),
          }
        : options.action === 'verify'
          ? { method: 'POST' as const, path: `${base}/${domain}/verify`, what: 'Verifying the domain' }
          : { method: 'DELETE' as const, path: `${base}/${domain}`, what: 'Removing the domain' };
  const answer = await callApi({ apiUrl: options.apiUrl, token, ...call });
  if (answer.status !== 200 && answer.status !== 201) return reportFailure(options, call.what, answer);
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  if (options.action === 'list') {
    const domains = (answer.json as unknown as { domains: DomainRow[] }).domains;
    if (domains.length === 0) {
      options.out(`${state.site} has no custom domains. Add one with: plinth domains add www.example.org`);
      return 0;
    }
    const rows = domains.map((d) => [d.domain, d.status, d.primary ? (d.redirect_site_address ? 'primary, site redirects' : 'primary') : '', d.reason ?? '']);
    const header = ['DOMAIN', 'STATUS', 'PRIMARY', 'NOTE'];
    const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
    for (const row of [header, ...rows])
      options.out(
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      );
    return 0;
  }
  if (options.action === 'remove') {
    options.out(`Removed ${options.domain} from ${state.site}.`);
    return 0;
  }
  const row = answer.json as unknown as DomainRow;
  options.out(`${row.domain}: ${row.status}${row.reason ? ` (${row.reason})` : ''}`);
  if (row.status !== 'active') {
    options.out('DNS records to create:');
    for (const record of row.records) options.out(`  ${record.type.padEnd(5)}  ${record.name}  ${record.value}`);
  }
  if (row.agent_message) options.out(row.agent_message);
  return 0;
}
