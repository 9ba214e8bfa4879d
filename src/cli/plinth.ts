#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { adminCommand } from './admin.js';
import { deployCommand } from './deploy.js';

const USAGE = `Usage:
  plinth start                      run the service (same as npm start)
  plinth deploy [dir] [--api URL] [--token TOKEN]
                                    publish a folder; keeps .service.json for the next deploy
  plinth admin <command>            operator commands on the data directory (accounts, tokens,
                                    members, takedowns); \`plinth admin help\` lists them

Environment: PLINTH_API_URL (default http://api.localhost:8080), PLINTH_TOKEN;
PLINTH_DATA_DIR (default ./data) for admin.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      await import('../main.js');
      return -1; // keeps running
    case 'deploy': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { api: { type: 'string' }, token: { type: 'string' } },
      });
      return deployCommand({
        dir: positionals[0] ?? '.',
        apiUrl: values.api ?? process.env.PLINTH_API_URL ?? 'http://api.localhost:8080',
        token: values.token ?? process.env.PLINTH_TOKEN,
        out: (line) => process.stdout.write(`${line}\n`),
      });
    }
    case 'admin':
      return adminCommand({
        args: rest,
        env: process.env,
        out: (text) => process.stdout.write(`${text}\n`),
        err: (text) => process.stderr.write(`${text}\n`),
      });
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      process.stderr.write(`plinth: unknown command "${command}"\n${USAGE}\n`);
      return 2;
  }
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
