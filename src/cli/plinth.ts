#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { DEFAULT_CLI_API_URL, loadCliSettings } from '../config.js';
import { UnreachableError } from './api-client.js';
import { deployCommand } from './deploy.js';
import { terminalStatus, type CommandIo } from './output.js';
import { revisionsCommand, rollbackCommand, sitesCommand } from './site-commands.js';
import { UsageError } from './usage.js';

const USAGE = `Usage:
  plinth deploy [dir]               publish a folder (default: the current one); keeps .service.json
                                    so the next deploy updates the same site, sending only the
                                    files that changed (--full sends them all); a large folder
                                    goes in parts, and a run that was cut off resumes
  plinth sites                      list the sites your API token reaches
  plinth revisions [dir]            list the revisions of the folder's site (* marks yours)
  plinth rollback <revision> [dir]  make an earlier revision (number or rev_… id) live again
  plinth start                      run the service (same as npm start)
  plinth admin <command>            operator commands on the data directory (accounts, tokens,
                                    members, takedowns); \`plinth admin help\` lists them

Options:
  --api URL      the API (default $PLINTH_API_URL, else ${DEFAULT_CLI_API_URL})
  --token TOKEN  an API token pl_… (default $PLINTH_TOKEN; deploy, revisions and rollback
                 otherwise use the site token in .service.json)
  --json         print the API's JSON answer (for scripts)
  --full         deploy: upload every file in one archive, not only the changed ones

Exit status: 0 done, 1 refused by the service (the reason is printed), 2 wrong usage.`;

const OPTIONS = {
  api: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  full: { type: 'boolean' },
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
  if (command === 'start') {
    await import('../main.js');
    return -1; // keeps running
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!['deploy', 'sites', 'revisions', 'rollback'].includes(command)) return usage(`unknown command "${command}"`);

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
  const apiUrl = values.api ?? settings.apiUrl;
  const token = values.token ?? settings.token;
  const wanted: Record<string, [number, number]> = { deploy: [0, 1], sites: [0, 0], revisions: [0, 1], rollback: [1, 2] };
  const [min, max] = wanted[command]!;
  if (positionals.length < min || positionals.length > max)
    return usage(command === 'rollback' ? 'rollback needs the revision: plinth rollback <number or rev_…> [dir]' : `too many arguments for ${command}`);

  try {
    switch (command) {
      case 'deploy':
        return await deployCommand({ ...io, dir: positionals[0] ?? '.', apiUrl, token, full: values.full === true });
      case 'sites':
        return await sitesCommand({ ...io, dir: '.', apiUrl, token });
      case 'revisions':
        return await revisionsCommand({ ...io, dir: positionals[0] ?? '.', apiUrl, token });
      default:
        return await rollbackCommand({ ...io, revision: positionals[0]!, dir: positionals[1] ?? '.', apiUrl, token });
    }
  } catch (err) {
    io.status?.(undefined);
    if (err instanceof UsageError) return usage(err.message);
    if (err instanceof UnreachableError) {
      io.err(`plinth: ${err.message}`);
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
