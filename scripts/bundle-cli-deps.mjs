// The first step of packing the plinth CLI (packages/cli's `prepack`): copies the packages it
// bundles (its package.json's bundleDependencies: undici, the load suite's HTTP client) from the
// checkout's node_modules into packages/cli/node_modules, where `npm pack` takes them from. npm
// installs a workspace's dependencies at the root and does not pack bundled ones from there
// (npm/cli#3466), and the package file must carry them: it installs with no registry in reach.
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'packages', 'cli');
const manifest = JSON.parse(readFileSync(join(cli, 'package.json'), 'utf8'));
const bundled = manifest.bundleDependencies ?? [];

for (const name of bundled) {
  const from = join(root, 'node_modules', name);
  if (!existsSync(join(from, 'package.json'))) throw new Error(`${name} is not in node_modules: run npm ci first`);
  // A bundled package's own dependencies would have to come along too; undici has none.
  const inner = Object.keys(JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')).dependencies ?? {});
  const missing = inner.filter((dep) => !bundled.includes(dep));
  if (missing.length > 0) throw new Error(`${name} depends on ${missing.join(', ')}: bundle those too`);
  const to = join(cli, 'node_modules', name);
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true, dereference: true });
}
