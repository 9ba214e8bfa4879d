#!/usr/bin/env node

/**
 * The server's `plinth`: it runs the service and the operator commands. The client commands
 * (deploy, sites, login, …) are the plinth CLI's, a package of its own (packages/cli), which
 * installs without the server: a reader who types one here is told where it is.
 */

const USAGE = `Usage (the Plinth server, in its checkout):
  plinth start                      run the service (same as npm start)
  plinth admin <command>            operator commands on the data directory (accounts, tokens,
                                    members, takedowns); \`plinth admin help\` lists them

The client commands (login, deploy, pull, sites, revisions, rollback, promote, domains) and the
load suite (load) are the plinth CLI's, a package of its own: see docs/cli.md ("Install").

Exit status: 0 done, 1 failed (the reason is printed), 2 wrong usage.`;

const CLIENT_COMMANDS = ['login', 'logout', 'whoami', 'deploy', 'pull', 'sites', 'revisions', 'rollback', 'promote', 'domains', 'load'];

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'admin') {
    // Loaded on demand: the admin commands open the store.
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
  if (CLIENT_COMMANDS.includes(command)) {
    process.stderr.write(
      `plinth: "plinth ${command}" is a command of the plinth CLI, which is a package of its own (packages/cli in this checkout).\n` +
        `Install it once with \`npm install -g ./packages/cli\` here (or from the tarball \`npm pack -w packages/cli\` makes), then run plinth ${command} in any folder.\n` +
        `docs/cli.md ("Install") has the details.\n`,
    );
    return 2;
  }
  process.stderr.write(`plinth: unknown command "${command}"\n\n${USAGE}\n`);
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
