import { resolve } from 'node:path';
import { callApi } from './api-client.js';
import { reportFailure, type CommandIo } from './output.js';
import { readState, stateToken, writeState, type ServiceState } from './state.js';
import { UsageError } from './usage.js';

/**
 * `plinth sites`, `plinth revisions`, `plinth revisions delete <revision>`, `plinth rollback
 * <revision>`, `plinth promote <revision>`: the folder's site, from the terminal.
 */

export interface SiteCommandOptions extends CommandIo {
  apiUrl: string;
  token?: string;
  /** The token of `plinth login`, used when no other is given or kept in the folder. */
  savedToken?: string;
  /** The folder whose `.service.json` names the site. */
  dir: string;
}

interface SiteRow {
  name: string;
  url: string;
  role: string;
  plan: string;
  live_revision: { number: number } | null;
}

interface RevisionRow {
  id: string;
  number: number;
  created_at: string;
  created_by: string;
  files: number;
  kind: string;
  rollback_of?: string;
  live?: boolean;
  draft?: boolean;
}

export async function sitesCommand(options: SiteCommandOptions): Promise<number> {
  const token = options.token ?? options.savedToken;
  if (!token) throw new UsageError('plinth sites needs an API token: run plinth login, or pass --token pl_… or set PLINTH_TOKEN');
  const sites: SiteRow[] = [];
  let cursor: string | null = null;
  do {
    const answer = await callApi({
      apiUrl: options.apiUrl,
      method: 'GET',
      path: `v1/sites?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      token,
    });
    if (answer.status !== 200) return reportFailure(options, 'Listing sites', answer);
    const page = answer.json as unknown as { sites: SiteRow[]; next_cursor: string | null };
    sites.push(...page.sites);
    cursor = page.next_cursor;
  } while (cursor);
  if (options.json) {
    options.out(JSON.stringify({ sites }, null, 2));
    return 0;
  }
  if (sites.length === 0) {
    options.out('No sites yet. Publish one with: plinth deploy <folder>');
    return 0;
  }
  printTable(
    options,
    ['SITE', 'REVISION', 'ROLE', 'PLAN', 'ADDRESS'],
    sites.map((site) => [site.name, site.live_revision ? String(site.live_revision.number) : '-', site.role, site.plan, site.url]),
  );
  return 0;
}

export async function revisionsCommand(options: SiteCommandOptions): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const answer = await callApi({ apiUrl: options.apiUrl, method: 'GET', path: `v1/sites/${encodeURIComponent(state.site)}/revisions?limit=200`, token });
  if (answer.status !== 200) return reportFailure(options, 'Listing revisions', answer);
  const revisions = (answer.json as unknown as { revisions: RevisionRow[] }).revisions;
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  printTable(
    options,
    ['REVISION', 'ID', 'KIND', 'STATE', 'FILES', 'CREATED', 'BY'],
    revisions.map((revision) => [
      `${revision.number}${revision.id === state.revision ? '*' : ''}`,
      revision.id,
      revision.kind,
      revision.live ? 'live' : revision.draft ? 'draft' : '-',
      String(revision.files),
      revision.created_at.replace(/\.\d+Z$/, 'Z'),
      revision.created_by,
    ]),
  );
  return 0;
}

/**
 * A revision's id from what was typed: an id as it is, a number looked up among the revisions in
 * reach. A number is the exit code when the lookup failed (and was reported).
 */
async function revisionIdOf(options: SiteCommandOptions, site: string, token: string | undefined, typed: string, action: string): Promise<string | number> {
  if (!/^\d+$/.test(typed)) return typed;
  const list = await callApi({ apiUrl: options.apiUrl, method: 'GET', path: `v1/sites/${encodeURIComponent(site)}/revisions?limit=200`, token });
  if (list.status !== 200) return reportFailure(options, 'Listing revisions', list);
  const found = (list.json as unknown as { revisions: RevisionRow[] }).revisions.find((revision) => revision.number === Number(typed));
  if (!found) {
    options.err(`${action} failed: ${site} has no revision ${typed} within its history reach; plinth revisions lists them.`);
    return 1;
  }
  return found.id;
}

export async function rollbackCommand(options: SiteCommandOptions & { revision: string }): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const target = await revisionIdOf(options, state.site, token, options.revision, 'Rollback');
  if (typeof target === 'number') return target;
  const answer = await callApi({
    apiUrl: options.apiUrl,
    method: 'POST',
    path: `v1/sites/${encodeURIComponent(state.site)}/rollback`,
    token,
    headers: { 'Content-Type': 'application/json' },
    body: Buffer.from(JSON.stringify({ revision: target })),
  });
  if (answer.status !== 201) return reportFailure(options, 'Rollback', answer);
  const result = answer.json as unknown as { revision: RevisionRow; site: { url: string }; agent_message?: string };
  // The rollback is the new live revision: the next deploy builds on it.
  await writeState(options.dir, { ...state, revision: result.revision.id });
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  options.out(`Rolled back: revision ${result.revision.number} is live at ${result.site.url}`);
  if (result.agent_message) options.out(result.agent_message);
  return 0;
}

/** `plinth promote <revision> [dir]`: makes a stored revision (a draft) live, guarded by the folder's live revision. */
export async function promoteCommand(options: SiteCommandOptions & { revision: string }): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const target = await revisionIdOf(options, state.site, token, options.revision, 'Promote');
  if (typeof target === 'number') return target;
  const answer = await callApi({
    apiUrl: options.apiUrl,
    method: 'POST',
    path: `v1/sites/${encodeURIComponent(state.site)}/promote`,
    token,
    headers: { 'Content-Type': 'application/json' },
    // The folder's revision is the live one it knows: if someone published since, promote is refused (409).
    body: Buffer.from(JSON.stringify({ revision: target, base_revision: state.revision })),
  });
  if (answer.status !== 200) return reportFailure(options, 'Promote', answer);
  const result = answer.json as unknown as { revision: RevisionRow; site: { url: string }; agent_message?: string };
  await writeState(options.dir, { ...state, revision: result.revision.id });
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  options.out(`Promoted: revision ${result.revision.number} is live at ${result.site.url}`);
  return 0;
}

/**
 * `plinth revisions delete <revision> [dir]`: deletes a revision that is not live, by number or
 * `rev_…` id (the API takes both). Owners only, or the site token of an unclaimed site.
 */
export async function deleteRevisionCommand(options: SiteCommandOptions & { revision: string }): Promise<number> {
  const { state, token } = await siteOfFolder(options);
  const answer = await callApi({
    apiUrl: options.apiUrl,
    method: 'DELETE',
    path: `v1/sites/${encodeURIComponent(state.site)}/revisions/${encodeURIComponent(options.revision)}`,
    token,
  });
  if (answer.status !== 200) return reportFailure(options, 'Deleting the revision', answer);
  if (options.json) {
    options.out(JSON.stringify(answer.json, null, 2));
    return 0;
  }
  const result = answer.json as unknown as { revision: { number: number } };
  options.out(`Deleted revision ${result.revision.number} of ${state.site}: its preview address now answers 410, and its files are no longer served.`);
  return 0;
}

export async function siteOfFolder(options: SiteCommandOptions): Promise<{ state: ServiceState; token: string }> {
  const dir = resolve(options.dir);
  const state = await readState(dir);
  if (!state) throw new UsageError(`${options.dir} has no .service.json: publish it first with plinth deploy ${options.dir}`);
  const token = stateToken(state, options.token, options.savedToken);
  if (!token) throw new UsageError(`${state.site} needs an API token: run plinth login, or pass --token pl_… or set PLINTH_TOKEN`);
  return { state, token };
}

function printTable(io: CommandIo, header: string[], rows: string[][]): void {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  io.out(line(header));
  for (const row of rows) io.out(line(row));
}
