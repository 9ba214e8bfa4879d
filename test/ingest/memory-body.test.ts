import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UnpackResult } from '../../src/ingest/index.js';
import { tarBytes, tgzBytes, zipBytes } from '../helpers/archive-bytes.js';
import { createIngestRig, type IngestRig } from '../fixtures/ingest-pool.js';

// A body the HTTP thread received into memory goes to the worker as bytes, not as a spool file;
// every reader gives the same answer from either.
let rig: IngestRig;
beforeAll(() => {
  rig = createIngestRig('plinth-ingest-memory-');
});
afterAll(() => rig.close());

const files: Array<[string, string | Buffer]> = [
  ['site/index.html', '<h1>hi</h1>'],
  ['site/a/b.txt', 'bee '.repeat(5000)],
  ['site/node_modules/x.js', 'skipped'],
];

async function fromMemory(bytes: Buffer, bodyKind: 'archive' | 'json' = 'archive'): Promise<UnpackResult> {
  // A copy with an ArrayBuffer of its own, as the HTTP side hands over (the pool transfers it).
  const body = new Uint8Array(bytes.byteLength);
  body.set(bytes);
  return rig.pool.unpack({
    body,
    dataDir: rig.dataDir,
    bodyKind,
    limits: { maxFiles: 100, maxFileBytes: 1024 * 1024, maxSiteBytes: 5 * 1024 * 1024 },
    blockExecutables: true,
  });
}

async function fromSpool(bytes: Buffer, bodyKind: 'archive' | 'json' = 'archive'): Promise<UnpackResult> {
  const path = rig.file('body');
  writeFileSync(path, bytes);
  return rig.unpack(path, { bodyKind, blockExecutables: true });
}

describe('unpacking a body held in memory', () => {
  it.each([
    ['tar', () => tarBytes(files)],
    ['tar.gz', () => tgzBytes(files)],
    ['zip', () => zipBytes(files)],
    [
      'an executable in a tar',
      () =>
        tarBytes([
          ['index.html', 'x'],
          ['tool.bin', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), Buffer.alloc(5000)])],
        ]),
    ],
    [
      'a planted secret',
      () =>
        tgzBytes([
          ['index.html', 'x'],
          ['config.js', 'const key = "AKIAIOSFODNN7EXAMPLE";\nconst secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";\n'],
        ]),
    ],
    ['a traversal in a zip', () => zipBytes([['../escape.html', 'x']])],
    ['junk', () => Buffer.from('neither tar nor zip')],
  ])('answers %s as it does from a spool file', async (_kind, body) => {
    const bytes = body();
    expect(await fromMemory(bytes)).toEqual(await fromSpool(bytes));
  });

  it('reads a JSON body from memory', async () => {
    const json = Buffer.from(JSON.stringify({ files: [{ path: 'index.html', content: '<h1>json</h1>' }], patch: false }));
    const result = await fromMemory(json, 'json');
    expect(result).toEqual(await fromSpool(json, 'json'));
    expect(result.ok && result.files.map((f) => f.path)).toEqual(['index.html']);
  });
});

describe('a body in memory as a stream', () => {
  it('goes whole to a tar parser, and in read-sized views to a decompressor, which would otherwise inflate all of it ahead', async () => {
    const { bodyStream } = await import('../../src/ingest/body-source.js');
    const bytes = Buffer.alloc(1024 * 1024 + 5, 7);
    const sizes = async (paced: boolean): Promise<number[]> => {
      const seen: number[] = [];
      for await (const chunk of bodyStream({ bytes }, { paced })) seen.push((chunk as Buffer).byteLength);
      return seen;
    };
    expect(await sizes(false)).toEqual([bytes.byteLength]);
    expect(await sizes(true)).toEqual([256 * 1024, 256 * 1024, 256 * 1024, 256 * 1024, 5]);
  });
});
