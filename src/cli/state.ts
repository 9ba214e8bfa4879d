import { existsSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the CLI keeps next to a site's files between runs (SPEC 2 "Project state file"). */
export interface ServiceState {
  site: string;
  url: string;
  revision: string;
  site_token?: string;
  /** An API token of the account that claimed the site (the claim answer hands one to the publisher). */
  api_token?: string;
}

/** The token a command sends: one given on the command line first, then the folder's own. */
export const stateToken = (state: ServiceState | undefined, given?: string): string | undefined => given ?? state?.api_token ?? state?.site_token;

export const STATE_FILE = '.service.json';

export async function readState(dir: string): Promise<ServiceState | undefined> {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(await readFile(path, 'utf8')) as Partial<ServiceState>;
  if (typeof state.site !== 'string' || typeof state.revision !== 'string') {
    throw new Error(`${path} does not name a site and revision; remove it to publish a new site`);
  }
  return state as ServiceState;
}

/** Writes the state (owner-only: it holds a token) and keeps it out of git. */
export async function writeState(dir: string, state: ServiceState): Promise<void> {
  await writeFile(join(dir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  const gitignore = join(dir, '.gitignore');
  const current = existsSync(gitignore) ? await readFile(gitignore, 'utf8') : '';
  if (current.split(/\r?\n/).some((line) => line.trim() === STATE_FILE || line.trim() === `/${STATE_FILE}`)) return;
  await appendFile(gitignore, `${current === '' || current.endsWith('\n') ? '' : '\n'}${STATE_FILE}\n`);
}
