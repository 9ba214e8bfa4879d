import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { assertBuilt, fixture } from './helpers.js';

const CHUNKS = 200;
const CHUNK_BYTES = 64 * 1024;

let dir: string;
let store: Store;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), 'plinth-store-crash-'));
  store = openStore({ dir });
});

afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The bytes the child would have written had it lived (see slow-blob-writer.mjs). */
function fullContentHash(): string {
  const hash = createHash('sha256');
  for (let i = 0; i < CHUNKS; i++) hash.update(Buffer.alloc(CHUNK_BYTES, i % 251));
  return hash.digest('hex');
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(root, e.name)) : [join(root, e.name)]));
}

/** Starts the slow writer and SIGKILLs it once a few chunks have reached its temp file. */
async function killWriterMidway(): Promise<void> {
  const child = spawn(process.execPath, [fileURLToPath(fixture('slow-blob-writer.mjs')), dir, String(CHUNKS), String(CHUNK_BYTES)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes('chunk 5\n')) resolve();
      if (output.includes('finished')) reject(new Error('writer finished before it was killed'));
    });
    child.on('exit', () => reject(new Error(`writer exited early: ${output}`)));
  });
  child.kill('SIGKILL');
  const [, signal] = await once(child, 'exit');
  expect(signal).toBe('SIGKILL');
}

it('never exposes a blob whose writer was killed mid-write', async () => {
  const page = Buffer.from('<h1>still here</h1>\n'.repeat(50));
  const entry = await store.blobs.putFile(page, 'text/html', { compress: true });
  const committed = await store.commitRevision({
    site: 'survivor',
    create: { name: 'survivor', plan: 'free', claimed: true },
    baseRevision: null,
    files: new Map([['/index.html', entry]]),
    kind: 'deploy',
    createdBy: 'test',
  });
  if (!committed.ok) throw new Error(committed.reason);

  await killWriterMidway();

  const tmp = join(dir, 'blobs', 'tmp');
  const leftovers = readdirSync(tmp);
  expect(leftovers).toHaveLength(1);
  const partial = statSync(join(tmp, leftovers[0] ?? '')).size;
  expect(partial).toBeGreaterThan(0);
  expect(partial).toBeLessThan(CHUNKS * CHUNK_BYTES);

  const doomed = fullContentHash();
  expect(existsSync(store.blobs.pathOf(doomed))).toBe(false);
  expect(store.blobs.has(doomed)).toBe(false);
  // Everything outside tmp/ is a whole blob or a variant named after one (or the folder's layout marker).
  const layoutMarker = join(dir, 'blobs', 'layout');
  for (const file of filesUnder(join(dir, 'blobs')).filter((f) => !f.startsWith(tmp) && f !== layoutMarker)) {
    const name = basename(file);
    expect(name).toMatch(/^[0-9a-f]{64}(\.br|\.gz)?$/);
    if (name.length === 64) expect(sha256(readFileSync(file))).toBe(name);
  }

  const site = store.getSite('survivor');
  expect(site?.liveRevision).toBe(committed.revision.id);
  const files = store.listFiles(committed.revision.id);
  expect(files).toEqual([{ path: '/index.html', ...entry }]);
  expect(store.blobs.readSync(entry.sha256)).toEqual(page);

  // The writer's process is gone, so its file goes at once, however young.
  expect(await store.blobs.sweepTemp(60 * 60 * 1000)).toBe(1);
  expect(readdirSync(tmp)).toEqual([]);
});

it("keeps young temp files of running writers and sweeps this pid's files only at start-up", async () => {
  const tmp = join(dir, 'blobs', 'tmp');
  const ours = join(tmp, `${process.pid}-123abc.tmp`);
  const parent = join(tmp, `${process.ppid}-456def.tmp`);
  const unnamed = join(tmp, 'legacy.tmp');
  for (const path of [ours, parent, unnamed]) writeFileSync(path, 'partial');
  expect(await store.blobs.sweepTemp(60 * 60 * 1000)).toBe(0);
  // An earlier process with our pid (pid 1 in a container) left it: nothing of ours writes yet.
  expect(await store.blobs.sweepTemp(60 * 60 * 1000, { atStartup: true })).toBe(1);
  expect(readdirSync(tmp).sort()).toEqual([basename(parent), basename(unnamed)].sort());
  // Files of live writers, and files without a pid, still go once they are old.
  expect(await store.blobs.sweepTemp(0)).toBe(2);
  expect(readdirSync(tmp)).toEqual([]);
});
