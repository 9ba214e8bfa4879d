import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFile } from './state.js';

/** What `plinth login` keeps: an account API token and the API (and app) it was issued for. */
export interface Credentials {
  api_url: string;
  app_url: string;
  /** An API token `pl_…` of the account that approved the sign-in. */
  token: string;
  /** The name the token has in the account's token list. */
  device_name?: string;
  created_at?: string;
}

export const CREDENTIALS_FILE = 'credentials.json';

export const credentialsPath = (configDir: string): string => join(configDir, CREDENTIALS_FILE);

export async function readCredentials(configDir: string): Promise<Credentials | undefined> {
  const path = credentialsPath(configDir);
  if (!existsSync(path)) return undefined;
  let saved: Partial<Credentials>;
  try {
    saved = JSON.parse(await readFile(path, 'utf8')) as Partial<Credentials>;
  } catch {
    throw new Error(`${path} is not the JSON plinth login writes; run plinth login again (or delete the file)`);
  }
  if (typeof saved.api_url !== 'string' || typeof saved.app_url !== 'string' || typeof saved.token !== 'string') {
    throw new Error(`${path} lacks api_url, app_url or token; run plinth login again (or delete the file)`);
  }
  return saved as Credentials;
}

/** The folder readable by its owner alone (0700), the file too (0600): the token is the account's. */
export async function writeCredentials(configDir: string, credentials: Credentials): Promise<string> {
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  // mkdir's mode applies only to a folder it creates, and the umask narrows it: set it exactly.
  await chmod(configDir, 0o700);
  const path = credentialsPath(configDir);
  await writePrivateFile(path, `${JSON.stringify(credentials, null, 2)}\n`);
  return path;
}

export async function deleteCredentials(configDir: string): Promise<void> {
  await rm(credentialsPath(configDir), { force: true });
}
