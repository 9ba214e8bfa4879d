import type { CliSettings } from './settings.js';

/**
 * Where the command looks for the API, and what to tell someone when nothing answers there: the
 * setting that chose the address, and the one to set instead.
 */

export type ApiUrlSource = CliSettings['apiUrlFrom'] | '--api' | 'login';

/** --api, then the settings that name an API; then the API of `plinth login`; then the local default. */
export function pickApiUrl(option: string | undefined, settings: CliSettings, login?: { api_url: string }): { apiUrl: string; from: ApiUrlSource } {
  if (option !== undefined) return { apiUrl: apiBase(option), from: '--api' };
  if (settings.apiUrlFrom === 'default' && login) return { apiUrl: login.api_url, from: 'login' };
  return { apiUrl: apiBase(settings.apiUrl), from: settings.apiUrlFrom };
}

/**
 * The API's address without a trailing `/v1`: commands add the version to each path
 * (`v1/deploy`), and an address given with it (`https://api.example.org/v1`) would otherwise
 * call `/v1/v1/deploy`.
 */
export function apiBase(url: string): string {
  return url.replace(/\/v1\/?$/, '');
}

/** The lines printed after "could not reach the API at …". */
export function unreachableAdvice(apiUrl: string, from: ApiUrlSource): string[] {
  const elsewhere = 'For a server elsewhere, set PLINTH_API_URL to its API address (or pass --api URL).';
  switch (from) {
    case 'login':
      return [
        `That is the API plinth login signed in to. Check that it runs, or pass --api URL (or set PLINTH_API_URL) for another; plinth logout forgets it.`,
      ];
    case '--api':
      return [`Check the address given with --api (${apiUrl}), or leave --api out to use PLINTH_API_URL or the local server on PLINTH_PORT.`];
    case 'PLINTH_API_URL':
      return [`That address comes from PLINTH_API_URL. Check it, or unset it to use the local server on PLINTH_PORT (8080 when unset).`, 'Or pass --api URL.'];
    case 'PLINTH_PORT':
      return [
        `That address comes from PLINTH_PORT. Is Plinth running on that port? Start it with \`npm start\` in the Plinth checkout with the same PLINTH_PORT.`,
        elsewhere,
      ];
    default:
      return [
        'That is the local server on the default port 8080. Is Plinth running? Start it with `npm start` in the Plinth checkout.',
        'If it runs on another port, set PLINTH_PORT to that port, as the server has it (for example `PLINTH_PORT=9090 plinth deploy`).',
        elsewhere,
      ];
  }
}
