import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The files in deploy/ are the one home of what they say; docs/operating.md lists every one of
 * them, and where it shows one, shows it exactly: a fenced block right after
 * `<!-- file: deploy/… -->` must be that file, byte for byte. The scripts the guide runs by their
 * path are executable.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const guide = readFileSync(join(ROOT, 'docs', 'operating.md'), 'utf8');
const shipped = readdirSync(join(ROOT, 'deploy')).sort();
const copies = [...guide.matchAll(/<!-- file: (deploy\/[^ ]+) -->\n```[a-z]*\n([\s\S]*?)^```$/gm)].map((match) => ({ path: match[1]!, text: match[2]! }));

describe('the shipped files and the operating guide', () => {
  it('shows copies of the configuration files', () => {
    expect(copies.map((copy) => copy.path).sort()).toEqual(['deploy/Caddyfile', 'deploy/nginx-plinth.conf', 'deploy/plinth.env', 'deploy/plinth.service']);
  });

  it.each(copies.map((copy) => [copy.path, copy.text]))('shows %s as it is', (path, text) => {
    expect(text).toBe(readFileSync(join(ROOT, path), 'utf8'));
  });

  it('lists every file of deploy/ in its table of shipped files', () => {
    const section = guide.slice(guide.indexOf('## Shipped files'), guide.indexOf('### The systemd unit'));
    for (const file of shipped) expect(section, file).toContain(`\`deploy/${file}\``);
  });

  it.each(shipped.filter((file) => file.endsWith('.sh')).map((file) => [file]))('deploy/%s is executable', (file) => {
    expect(statSync(join(ROOT, 'deploy', file)).mode & 0o111).toBe(0o111);
  });
});
