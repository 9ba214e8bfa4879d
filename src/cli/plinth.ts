#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config.js';
import { UnreachableError } from './api-client.js';
import { deployCommand } from './deploy.js';
import { domainsCommand } from './domain-commands.js';
import { terminalStatus, type CommandIo } from './output.js';
import { pickApiUrl, unreachableAdvice } from './server-address.js';
import { deleteRevisionCommand, promoteCommand, revisionsCommand, rollbackCommand, sitesCommand } from './site-commands.js';
import { UsageError } from './usage.js';

const USAGE = `Usage:
  plinth deploy [dir]               publish a folder (default: the current one); keeps .service.json
                                    so the next deploy updates the same site, sending only the
                                    files that changed (--full sends them all); a large folder
                                    goes in parts, and a run that was cut off resumes
  plinth sites                      list the sites your API token reaches
  plinth revisions [dir]            list the revisions of the folder's site (* marks yours)
  plinth revisions delete <revision> [dir]
                                    delete a revision that is not live (number or rev_… id):
                                    its preview answers 410 at once (owners only)
  plinth rollback <revision> [dir]  make an earlier revision (number or rev_… id) live again
  plinth promote <revision> [dir]   make a stored revision (a draft) live as it is
  plinth domains [dir]              list the custom domains of the folder's site; with
                                    add|verify|remove <domain> [dir], change them (API token)
  plinth start                      run the service (same as npm start)
  plinth load <command>             the load suite: prepare a corpus of sites, run traffic shaped
                                    like a publishing host's, clean, export for nginx;
                                    \`plinth load help\` lists its flags
  plinth admin <command>            operator commands on the data directory (accounts, tokens,
                                    members, takedowns); \`plinth admin help\` lists them

Options:
  --api URL      the API (default $PLINTH_API_URL, else http://api.localhost:$PLINTH_PORT;
                 the local server on the port it runs on, 8080 when PLINTH_PORT is unset)
  --token TOKEN  an API token pl_… (default $PLINTH_TOKEN; deploy, revisions, rollback and
                 promote otherwise use .service.json's api_token, else its site_token)
  --json         print the API's JSON answer (for scripts)
  --full         deploy: upload every file in one archive, not only the changed ones
  --draft        deploy: store a draft that is not live, shown at its preview address
  --primary      domains add: make the domain primary (the other of example.org and
                 www.example.org redirects to it)
  --redirect     domains add, with --primary: the site's own address redirects there too

Exit status: 0 done, 1 refused by the service (the reason is printed), 2 wrong usage.`;

const OPTIONS = {
  api: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  full: { type: 'boolean' },
  primary: { type: 'boolean' },
  redirect: { type: 'boolean' },
  draft: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'admin') {
    // Loaded on demand: the admin commands open the store, which agents' deploys never need.
    const { adminCommand } = await import('./admin.js');
    return adminCommand({
      args: rest,
      env: process.env,
      out: (text) => process.stdout.write(`${text}\n`),
      err: (text) => process.stderr.write(`${text}\n`),
    });
  }
  if (command === 'load') {
    const { loadCommand } = await import('../load/index.js');
    return loadCommand({
      args: rest,
      env: process.env,
      out: (text) => process.stdout.write(`${text}\n`),
      err: (text) => process.stderr.write(`${text}\n`),
      progress: process.stdout.isTTY ? (line) => process.stdout.write(line === undefined ? '\r\x1b[K' : `\r\x1b[K${line}`) : undefined,
    });
  }
  if (command === 'start') {
    await import('../main.js');
    return -1; // keeps running
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!['deploy', 'sites', 'revisions', 'rollback', 'promote', 'domains'].includes(command)) return usage(`unknown command "${command}"`);

  let parsed;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, options: OPTIONS, strict: true });
  } catch (err) {
    return usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const json = values.json === true;
  // Progress only for a person watching: never in --json mode or when output is piped.
  const tty = process.stderr.isTTY === true && !json;
  const io: CommandIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    status: tty ? terminalStatus(process.stderr) : undefined,
    json,
  };
  const settings = loadCliSettings();
  const { apiUrl, from } = pickApiUrl(values.api, settings);
  const token = values.token ?? settings.token;
  if (command === 'domains') {
    const [action, ...more] = positionals;
    try {
      if (action === 'add' || action === 'verify' || action === 'remove') {
        if (more.length < 1 || more.length > 2) return usage(`plinth domains ${action} needs the domain: plinth domains ${action} <domain> [dir]`);
        return await domainsCommand({ ...io, action, domain: more[0], dir: more[1] ?? '.', apiUrl, token, primary: values.primary, redirect: values.redirect });
      }
      if (positionals.length > 1) return usage('plinth domains [dir], or plinth domains add|verify|remove <domain> [dir]');
      return await domainsCommand({ ...io, action: 'list', dir: positionals[0] ?? '.', apiUrl, token });
    } catch (err) {
      if (err instanceof UsageError) return usage(err.message);
      if (err instanceof UnreachableError) {
        io.err(`plinth: ${err.message}`);
        return 1;
      }
      throw err;
    }
  }
  // `plinth revisions delete <revision> [dir]`, as `plinth domains remove <domain> [dir]`.
  const deleting = command === 'revisions' && positionals[0] === 'delete';
  const wanted: Record<string, [number, number]> = { deploy: [0, 1], sites: [0, 0], revisions: deleting ? [2, 3] : [0, 1], rollback: [1, 2], promote: [1, 2] };
  const [min, max] = wanted[command]!;
  if (positionals.length < min || positionals.length > max)
    return usage(
      deleting
        ? 'revisions delete needs the revision: plinth revisions delete <number or rev_…> [dir]'
        : command === 'rollback' || command === 'promote'
          ? `${command} needs the revision: plinth ${command} <number or rev_…> [dir]`
          : `too many arguments for ${command}`,
    );

  try {
    switch (command) {
      case 'deploy':
        return await deployCommand({ ...io, dir: positionals[0] ?? '.', apiUrl, token, full: values.full === true, draft: values.draft === true });
      case 'sites':
        return await sitesCommand({ ...io, dir: '.', apiUrl, token });
      case 'revisions':
        if (deleting) return await deleteRevisionCommand({ ...io, revision: positionals[1]!, dir: positionals[2] ?? '.', apiUrl, token });
        return await revisionsCommand({ ...io, dir: positionals[0] ?? '.', apiUrl, token });
      case 'promote':
        return await promoteCommand({ ...io, revision: positionals[0]!, dir: positionals[1] ?? '.', apiUrl, token });
      default:
        return await rollbackCommand({ ...io, revision: positionals[0]!, dir: positionals[1] ?? '.', apiUrl, token });
    }
  } catch (err) {
    io.status?.(undefined);
    if (err instanceof UsageError) return usage(err.message);
    if (err instanceof UnreachableError) {
      io.err(`plinth: ${err.message}`);
      for (const line of unreachableAdvice(apiUrl, from)) io.err(line);
      return 1;
    }
    throw err;
  }
}

function usage(message: string): number {
  process.stderr.write(`plinth: ${message}\n\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`plinth: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
