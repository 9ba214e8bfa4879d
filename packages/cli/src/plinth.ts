#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { UnreachableError } from './api-client.js';
import { readCredentials } from './credentials.js';
import { deployCommand } from './deploy.js';
import { domainsCommand } from './domain-commands.js';
import { loginCommand, logoutCommand, whoamiCommand } from './login.js';
import { lineIo, type CommandIo } from './output.js';
import { pullCommand } from './pull.js';
import { pickApiUrl, unreachableAdvice } from './server-address.js';
import { loadCliSettings } from './settings.js';
import { deleteRevisionCommand, promoteCommand, revisionsCommand, rollbackCommand, sitesCommand } from './site-commands.js';
import { statsCommand } from './stats-command.js';
import { UsageError } from './usage.js';

const USAGE = `Usage:
  plinth login                      sign in to your account in a browser (a code to approve); the
                                    token is kept in $XDG_CONFIG_HOME/plinth (~/.config/plinth)
  plinth logout                     revoke that token and forget it
  plinth whoami                     the account your token belongs to
  plinth deploy [dir]               publish a folder (default: the current one); keeps .service.json
                                    so the next deploy updates the same site, sending only the
                                    files that changed (--full sends them all); a large folder
                                    goes in parts, and a run that was cut off resumes
  plinth pull [dir]                 write the live files of the folder's site into it, and make
                                    the live revision the one the next deploy builds on
  plinth sites                      list the sites your API token reaches
  plinth revisions [dir]            list the revisions of the folder's site (* marks yours)
  plinth revisions delete <revision> [dir]
                                    delete a revision that is not live (number or rev_… id):
                                    its preview answers 410 at once (owners only)
  plinth rollback <revision> [dir]  make an earlier revision (number or rev_… id) live again
  plinth promote <revision> [dir]   make a stored revision (a draft) live as it is
  plinth stats [dir]                what the server counted of the folder's site's visits:
                                    page views, visitors, 404s, top pages and referrers
                                    (default the last 30 days; --from and --to choose others)
  plinth domains [dir]              list the custom domains of the folder's site; with
                                    add|verify|remove <domain> [dir], change them (API token)
  plinth load <command>             the load suite: publish a corpus of sites, drive traffic
                                    shaped like a publishing host's against any Plinth, clean,
                                    export for nginx; \`plinth load help\` lists its flags

Options:
  --api URL      the API (default $PLINTH_API_URL, else http://api.localhost:$PLINTH_PORT;
                 the local server on the port it runs on, 8080 when PLINTH_PORT is unset;
                 after plinth login, the API it signed in to)
  --app URL      login, logout: the account app (default: the API's address with app. for api.)
  --token TOKEN  an API token pl_… (default $PLINTH_TOKEN; deploy, revisions, rollback,
                 promote and stats otherwise use .service.json's api_token, else its
                 site_token; then the token of plinth login)
  --json         print the API's JSON answer (for scripts)
  --full         deploy: upload every file in one archive, not only the changed ones
  --force        deploy: publish on top of the live revision even if someone published since
                 this folder's revision (it replaces what is live)
  --draft        deploy: store a draft that is not live, shown at its preview address
  --primary      domains add: make the domain primary (the other of example.org and
                 www.example.org redirects to it)
  --redirect     domains add, with --primary: the site's own address redirects there too
  --from DAY     stats: the first day, YYYY-MM-DD (UTC)
  --to DAY       stats: the last day, YYYY-MM-DD (UTC)

Exit status: 0 done, 1 refused by the service (the reason is printed), 2 wrong usage.`;

const OPTIONS = {
  api: { type: 'string' },
  app: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  full: { type: 'boolean' },
  force: { type: 'boolean' },
  primary: { type: 'boolean' },
  redirect: { type: 'boolean' },
  draft: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMANDS = ['login', 'logout', 'whoami', 'deploy', 'pull', 'sites', 'revisions', 'rollback', 'promote', 'domains', 'stats'];

/** The server's own commands: they run in the Plinth checkout, where the server is. */
const SERVER_COMMANDS = ['start', 'admin'];

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.out(USAGE);
    return 0;
  }
  if (SERVER_COMMANDS.includes(command)) {
    return usage(
      `"plinth ${command}" is a command of the Plinth server, not of this client: run it in the Plinth checkout, where the server is installed (npx plinth ${command}).`,
    );
  }
  if (command === 'load') {
    // Loaded on demand, with its own flags: the other commands never load undici or the workers.
    const { loadCommand } = await import('./load/index.js');
    return loadCommand({
      args: rest,
      env: process.env,
      out: io.out,
      err: io.err,
      progress: process.stdout.isTTY ? (line) => process.stdout.write(line === undefined ? '\r\x1b[K' : `\r\x1b[K${line}`) : undefined,
    });
  }
  if (!COMMANDS.includes(command)) return usage(`unknown command "${command}"`);

  let parsed;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, options: OPTIONS, strict: true });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const json = values.json === true;
  const commandIo: CommandIo = {
    ...lineIo({ stdout: process.stdout, stderr: process.stderr, progress: process.stderr.isTTY === true && !json, closed }),
    json,
  };
  const settings = loadCliSettings();
  const credentials = await readCredentials(settings.configDir);
  const { apiUrl, from } = pickApiUrl(values.api, settings, credentials);
  const token = values.token ?? settings.token;
  // The token of `plinth login` goes only to the API it was issued by.
  const savedToken = credentials?.api_url === apiUrl ? credentials.token : undefined;
  const site = { ...commandIo, apiUrl, token, savedToken };

  try {
    if (command === 'login' || command === 'logout' || command === 'whoami') {
      if (positionals.length > 0) return usage(`too many arguments for ${command}`);
      if (command === 'whoami') return await whoamiCommand({ ...site, configDir: settings.configDir });
      const login = { ...commandIo, apiUrl, appUrl: values.app, configDir: settings.configDir, credentials };
      return command === 'login' ? await loginCommand(login) : await logoutCommand(login);
    }
    if (command === 'domains') {
      const [action, ...more] = positionals;
      if (action === 'add' || action === 'verify' || action === 'remove') {
        if (more.length < 1 || more.length > 2) return usage(`plinth domains ${action} needs the domain: plinth domains ${action} <domain> [dir]`);
        return await domainsCommand({ ...site, action, domain: more[0], dir: more[1] ?? '.', primary: values.primary, redirect: values.redirect });
      }
      if (positionals.length > 1) return usage('plinth domains [dir], or plinth domains add|verify|remove <domain> [dir]');
      return await domainsCommand({ ...site, action: 'list', dir: positionals[0] ?? '.' });
    }
    // `plinth revisions delete <revision> [dir]`, as `plinth domains remove <domain> [dir]`.
    const deleting = command === 'revisions' && positionals[0] === 'delete';
    const wanted: Record<string, [number, number]> = {
      deploy: [0, 1],
      pull: [0, 1],
      sites: [0, 0],
      revisions: deleting ? [2, 3] : [0, 1],
      rollback: [1, 2],
      promote: [1, 2],
      stats: [0, 1],
    };
    const [min, max] = wanted[command]!;
    if (positionals.length < min || positionals.length > max)
      return usage(
        deleting
          ? 'revisions delete needs the revision: plinth revisions delete <number or rev_…> [dir]'
          : command === 'rollback' || command === 'promote'
            ? `${command} needs the revision: plinth ${command} <number or rev_…> [dir]`
            : `too many arguments for ${command}`,
      );
    switch (command) {
      case 'deploy':
        return await deployCommand({
          ...site,
          dir: positionals[0] ?? '.',
          full: values.full === true,
          draft: values.draft === true,
          force: values.force === true,
        });
      case 'pull':
        return await pullCommand({ ...site, dir: positionals[0] ?? '.' });
      case 'sites':
        return await sitesCommand({ ...site, dir: '.' });
      case 'revisions':
        if (deleting) return await deleteRevisionCommand({ ...site, revision: positionals[1]!, dir: positionals[2] ?? '.' });
        return await revisionsCommand({ ...site, dir: positionals[0] ?? '.' });
      case 'stats':
        return await statsCommand({ ...site, dir: positionals[0] ?? '.', from: values.from, to: values.to });
      case 'promote':
        return await promoteCommand({ ...site, revision: positionals[0]!, dir: positionals[1] ?? '.' });
      default:
        return await rollbackCommand({ ...site, revision: positionals[0]!, dir: positionals[1] ?? '.' });
    }
  } catch (err) {
    commandIo.status?.(undefined);
    if (err instanceof UsageError) return usage(err.message);
    if (err instanceof UnreachableError) {
      commandIo.err(`plinth: ${err.message}`);
      const signingIn = command === 'login' || command === 'logout';
      for (const line of signingIn ? ['Check the account app’s address; pass it with --app URL.'] : unreachableAdvice(apiUrl, from)) commandIo.err(line);
      return 1;
    }
    throw err;
  }
}

/**
 * A reader that stops early (`plinth sites | head -1`) closes the pipe: the rest of the output is
 * not wanted, so it is dropped quietly, and the command still finishes what it was doing (a
 * deploy still writes .service.json). Without this, the EPIPE would end it with a stack trace.
 */
const closed = { stdout: false, stderr: false };
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE' && !closed.stdout) throw err;
  closed.stdout = true;
});
process.stderr.on('error', () => {
  closed.stderr = true;
});
const io = lineIo({ stdout: process.stdout, stderr: process.stderr, progress: false, closed });

function usage(message: string): number {
  io.err(`plinth: ${message}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    io.err(`plinth: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
