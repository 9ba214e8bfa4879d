import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** What the CLI keeps next to a site's files between runs (SPEC 2 "Project state file"). */
export interface ServiceState {
  site: string;
  url: string;
  revision: string;
  site_token?: string;
  /** The claim link of the unclaimed site the site token updates (a new one replaces it). */
  claim_url?: string;
  /**
   * An API token for the account that claimed the site (the claim answer hands one to the
   * publisher): it can do everything that account can, on all its sites, not only this one.
   */
  api_token?: string;
}

/** The token a command sends: one given (--token, PLINTH_TOKEN) first, then the folder's own, then that of `plinth login`. */
export const stateToken = (state: ServiceState | undefined, given?: string, saved?: string): string | undefined =>
  given ?? state?.api_token ?? state?.site_token ?? saved;

export const STATE_FILE = '.service.json';

/** Whether a file name is the state file or one being written (never packed: they hold tokens). */
export const isStateFile = (name: string): boolean => name === STATE_FILE || name.startsWith(`${STATE_FILE}.`);

export async function readState(dir: string): Promise<ServiceState | undefined> {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(await readFile(path, 'utf8')) as Partial<ServiceState>;
  if (typeof state.site !== 'string' || typeof state.revision !== 'string') {
    throw new Error(`${path} does not name a site and revision; remove it to publish a new site`);
  }
  return state as ServiceState;
}

/**
 * Writes a file readable by its owner only (it holds a token or a secret). A mode given to open()
 * applies only to a file it creates, so a file that already existed with wider rights would keep
 * them: the text goes into a new file, made 0600 before a byte is written, that then replaces the
 * old one (which also means a crash never leaves half a file).
 */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    // The umask can only narrow the mode open() asked for; this makes it exactly 0600.
    await handle.chmod(0o600);
    await handle.writeFile(text);
    await handle.close();
    await rename(temp, path);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

/** Writes the state, readable by its owner only (it may hold an API token for a whole account), and keeps it out of git. */
export async function writeState(dir: string, state: ServiceState): Promise<void> {
  await writePrivateFile(join(dir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  const gitignore = join(dir, '.gitignore');
  const current = existsSync(gitignore) ? await readFile(gitignore, 'utf8') : '';
  if (current.split(/\r?\n/).some((line) => line.trim() === STATE_FILE || line.trim() === `/${STATE_FILE}`)) return;
  await appendFile(gitignore, `${current === '' || current.endsWith('\n') ? '' : '\n'}${STATE_FILE}\n`);
}
