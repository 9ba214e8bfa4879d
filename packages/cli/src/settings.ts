import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The command's own settings, read from the environment once (the server has its own in its
 * src/config.ts, and knows these names only to leave them alone).
 */
export interface CliSettings {
  /** `PLINTH_API_URL`; an empty value counts as unset. Else the local server on `PLINTH_PORT`. */
  apiUrl: string;
  /** Which setting chose `apiUrl`, so an unreachable API can be explained. */
  apiUrlFrom: 'PLINTH_API_URL' | 'PLINTH_PORT' | 'default';
  /** `PLINTH_TOKEN`; an empty value counts as unset. */
  token?: string;
  /** Where `plinth login` keeps its credentials: `$XDG_CONFIG_HOME/plinth`, else `~/.config/plinth`. */
  configDir: string;
}

/** The local server's API address on a port, as the server itself hands it out. */
export function localApiUrl(port: number): string {
  return port === 80 ? 'http://api.localhost' : `http://api.localhost:${port}`;
}

export const DEFAULT_API_URL = localApiUrl(8080);

/**
 * The command finds a local server the way the server picks its port: `PLINTH_PORT` (default
 * 8080), so one exported setting serves both. `PLINTH_API_URL` names any other API.
 */
export function loadCliSettings(env: Record<string, string | undefined> = process.env, home: string = homedir()): CliSettings {
  const token = env.PLINTH_TOKEN?.trim() || undefined;
  const explicit = env.PLINTH_API_URL?.trim();
  const portText = env.PLINTH_PORT?.trim();
  const port = portText && /^\d+$/.test(portText) && Number(portText) >= 1 && Number(portText) <= 65535 ? Number(portText) : undefined;
  const api: Pick<CliSettings, 'apiUrl' | 'apiUrlFrom'> = explicit
    ? { apiUrl: explicit, apiUrlFrom: 'PLINTH_API_URL' }
    : port !== undefined
      ? { apiUrl: localApiUrl(port), apiUrlFrom: 'PLINTH_PORT' }
      : { apiUrl: DEFAULT_API_URL, apiUrlFrom: 'default' };
  // XDG Base Directory: a relative XDG_CONFIG_HOME is invalid and is ignored.
  const xdg = env.XDG_CONFIG_HOME?.trim();
  const configDir = join(xdg && isAbsolute(xdg) ? xdg : join(home, '.config'), 'plinth');
  return { ...api, ...(token ? { token } : {}), configDir };
}
