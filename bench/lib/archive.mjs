// Archives for the deploy benches, and the floor they are held against: what this machine's own
// tools take to unpack an archive and hash every file in it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** `tar czf out -C dir .`; returns `out`. */
export function tarGz(dir, out) {
  execFileSync('tar', ['czf', out, '-C', dir, '.']);
  return out;
}

/** The floor, in ms: `tar xzf` of the archive into a scratch folder under `workDir`, then `sha256sum` of every file. */
export function floorMs(archive, workDir) {
  const dir = join(workDir, 'floor');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const started = process.hrtime.bigint();
  execFileSync('bash', ['-c', `tar xzf '${archive}' -C '${dir}' && find '${dir}' -type f -print0 | xargs -0 sha256sum > /dev/null`]);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  rmSync(dir, { recursive: true, force: true });
  return ms;
}
