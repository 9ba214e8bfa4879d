import { describe, expect, it } from 'vitest';
import { backupCommand } from '../../src/cli/backup.js';
import { tempDir } from '../helpers/sites.js';

describe('plinth admin backup and restore with a blob bucket', () => {
  it.each(['backup', 'restore'] as const)('%s refuses and points to the bucket’s own tools', async (command) => {
    const errors: string[] = [];
    const out: string[] = [];
    const code = await backupCommand({
      command,
      args: [tempDir()],
      env: { PLINTH_DATA_DIR: tempDir(), PLINTH_S3_BUCKET: 'plinth-blobs' },
      out: (line) => out.push(line),
      err: (line) => errors.push(line),
    });
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(errors.join('\n')).toMatch(/PLINTH_S3_BUCKET/);
    expect(errors.join('\n')).toMatch(/versioning/);
    expect(errors.join('\n')).toMatch(/replication/);
  });
});
