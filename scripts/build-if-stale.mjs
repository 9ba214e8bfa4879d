// The first step of `npm start` (its `prestart`): compiles the TypeScript sources only when the
// built files are missing or older than them, so a start after `npm run build` (or a start of
// an unchanged tree) takes no compile. Production starts `node dist/main.js` directly.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The newest modification time among the compiler's inputs: every .ts under src/ and packages/cli/src/, and their tsconfig.json. */
function newestInput() {
  let newest = { path: join(root, 'tsconfig.json'), mtimeMs: statSync(join(root, 'tsconfig.json')).mtimeMs };
  const cliConfig = join(root, 'packages', 'cli', 'tsconfig.json');
  if (statSync(cliConfig).mtimeMs > newest.mtimeMs) newest = { path: cliConfig, mtimeMs: statSync(cliConfig).mtimeMs };
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts')) {
        const { mtimeMs } = statSync(path);
        if (mtimeMs > newest.mtimeMs) newest = { path, mtimeMs };
      }
    }
  };
  visit(join(root, 'src'));
  visit(join(root, 'packages', 'cli', 'src'));
  return newest;
}

/** Why a build is needed, or undefined when both builds are newer than every input (tsc rewrites every output). */
function staleness() {
  let built = Infinity;
  for (const output of [join('dist', 'main.js'), join('packages', 'cli', 'dist', 'plinth.js')]) {
    try {
      built = Math.min(built, statSync(join(root, output)).mtimeMs);
    } catch {
      return `${output} is missing`;
    }
  }
  const newest = newestInput();
  return newest.mtimeMs > built ? `${newest.path.slice(root.length)} changed since the last build` : undefined;
}

const reason = staleness();
if (reason !== undefined) {
  process.stderr.write(`plinth: building first (${reason})\n`);
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  process.exit(build.status ?? 1);
}
