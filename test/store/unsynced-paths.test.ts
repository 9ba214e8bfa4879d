// Which files and folders a blob store's flush fsyncs, and when it syncs the whole filesystem
// instead: a blob that is referenced must survive a power cut, with every folder entry that
// leads to it.
import { describe, expect, it } from 'vitest';
import { createUnsyncedPaths } from '../../src/store/unsynced-paths.js';

const ROOT = '/data/blobs';
const existing = new Set([`${ROOT}/cd/ef/cdef.gz`]);
const list = (maxFiles?: number) => createUnsyncedPaths(ROOT, (path) => existing.has(path), maxFiles);
const sorted = (paths: string[] | undefined) => paths && [...paths].sort();

describe('the paths a flush makes durable', () => {
  it.each([
    ['a file in a folder that was there', (l: ReturnType<typeof list>) => l.placed(`${ROOT}/ab/cd/abcd`), [`${ROOT}/ab/cd`, `${ROOT}/ab/cd/abcd`]],
    [
      'a file in a folder made in a folder that was there',
      (l: ReturnType<typeof list>) => l.placed(`${ROOT}/ab/cd/abcd`, `${ROOT}/ab/cd`),
      [`${ROOT}/ab`, `${ROOT}/ab/cd`, `${ROOT}/ab/cd/abcd`],
    ],
    [
      'a file in two folders made',
      (l: ReturnType<typeof list>) => l.placed(`${ROOT}/ab/cd/abcd`, `${ROOT}/ab`),
      [ROOT, `${ROOT}/ab`, `${ROOT}/ab/cd`, `${ROOT}/ab/cd/abcd`],
    ],
    [
      'a reused blob, its variants that exist, and every folder up to the root',
      (l: ReturnType<typeof list>) => l.reused(`${ROOT}/cd/ef/cdef`, [`${ROOT}/cd/ef/cdef.br`, `${ROOT}/cd/ef/cdef.gz`]),
      [ROOT, `${ROOT}/cd`, `${ROOT}/cd/ef`, `${ROOT}/cd/ef/cdef`, `${ROOT}/cd/ef/cdef.gz`],
    ],
    [
      'a blob and its variant in the same folder, each folder once',
      (l: ReturnType<typeof list>) => {
        l.placed(`${ROOT}/ab/cd/abcd`, `${ROOT}/ab/cd`);
        l.placed(`${ROOT}/ab/cd/abcd.gz`);
      },
      [`${ROOT}/ab`, `${ROOT}/ab/cd`, `${ROOT}/ab/cd/abcd`, `${ROOT}/ab/cd/abcd.gz`],
    ],
  ])('%s', (_name, write, expected) => {
    const l = list();
    write(l);
    expect(sorted(l.take())).toEqual([...expected].sort());
  });

  it("looks for a reused blob's variants when the flush comes (one made meanwhile is recorded too)", () => {
    const made = new Set<string>();
    const l = createUnsyncedPaths(ROOT, (path) => made.has(path));
    l.reused(`${ROOT}/cd/ef/cdef`, [`${ROOT}/cd/ef/cdef.br`]);
    made.add(`${ROOT}/cd/ef/cdef.br`);
    expect(l.take()).toContain(`${ROOT}/cd/ef/cdef.br`);
  });

  it('syncs the whole filesystem when nothing was noted (a restore copies its files itself)', () => {
    expect(list().take()).toBeUndefined();
  });

  it('syncs the whole filesystem after a write it does not follow, then follows again', () => {
    const l = list();
    l.placed(`${ROOT}/ab/cd/abcd`);
    l.unlisted();
    l.placed(`${ROOT}/ab/cd/abce`);
    expect(l.take()).toBeUndefined();
    l.placed(`${ROOT}/ab/cd/abcf`);
    expect(sorted(l.take())).toEqual([`${ROOT}/ab/cd`, `${ROOT}/ab/cd/abcf`]);
  });

  it('syncs the whole filesystem past the cap of files', () => {
    const l = list(2);
    for (const name of ['a1', 'a2']) l.placed(`${ROOT}/ab/cd/${name}`);
    expect(l.take()).toHaveLength(3);
    for (const name of ['a1', 'a2', 'a3']) l.placed(`${ROOT}/ab/cd/${name}`);
    expect(l.take()).toBeUndefined();
  });

  it('starts afresh after each take', () => {
    const l = list();
    l.placed(`${ROOT}/ab/cd/abcd`);
    l.take();
    expect(l.take()).toBeUndefined();
  });
});
