import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openMetadataDbs, type MetadataDbs } from '../../src/store/metadata-dbs.js';
import { applyChanges, canResume } from '../../src/store/replica.js';

// The change log as PostgreSQL holds it: change n committed at stamp `s<n>`.
const stampOf = (seq: number): Promise<string> => Promise.resolve(`s${seq}`);
const change = (seq: number) => ({ seq, stamp: `s${seq}`, writes: [] });

describe('canResume', () => {
  let dir: string | undefined;
  let dbs: MetadataDbs | undefined;
  afterEach(async () => {
    await dbs?.env.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function replicaAt(seq: number): Promise<MetadataDbs> {
    dir = mkdtempSync(join(tmpdir(), 'plinth-resume-'));
    dbs = openMetadataDbs(join(dir, 'meta'));
    await applyChanges(dbs, [change(seq)]);
    return dbs;
  }

  it.each([
    { case: 'the stamp at its position matches', log: stampOf, logStart: 0, resumes: true },
    { case: 'the log holds another change at its position (a restored database)', log: () => Promise.resolve('other'), logStart: 0, resumes: false },
    { case: 'the log was pruned past it', log: stampOf, logStart: 28, resumes: false },
    { case: 'the log starts right after it', log: stampOf, logStart: 27, resumes: true },
  ])('at change 27: $case → $resumes', async ({ log, logStart, resumes }) => {
    const replica = await replicaAt(27);
    expect(await canResume(replica, { logStart: () => Promise.resolve(logStart), stampOf: log })).toBe(resumes);
  });

  it('holds when another thread applies the next change while it asks PostgreSQL', async () => {
    const replica = await replicaAt(27);
    // A deploy's commit on an HTTP thread catches the same replica up while the check waits.
    const logStart = async (): Promise<number> => {
      await applyChanges(replica, [change(28)]);
      return 0;
    };
    expect(await canResume(replica, { logStart, stampOf })).toBe(true);
  });
});
