import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOUNCE_AT_ONCE,
  ANNOUNCE_LAST_FEW,
  createIngestPool,
  type Announcement,
  type AnnouncementMessage,
  type UnpackOptions,
  type UnpackTask,
} from '../../src/ingest/index.js';
import { hasDiskBehind } from '../../src/store/filesystem-sync.js';
import { tempDir } from '../helpers/sites.js';
import { waitUntil } from '../helpers/wait.js';
import { tarGzWithTool, writeTree } from '../fixtures/archives.js';
import { builtWorker, MB, TEST_LIMITS } from '../fixtures/ingest-pool.js';

let dir: string;
let archive: string;
let bigArchive: string;

beforeAll(() => {
  dir = tempDir('plinth-ingest-pool-');
  writeTree(join(dir, 'site'), { 'index.html': '<h1>hi</h1>' });
  archive = tarGzWithTool(join(dir, 'site'), join(dir, 'site.tgz'));
  // Big enough to keep a worker busy for a while.
  const files: Record<string, Buffer> = { 'index.html': Buffer.from('<h1>big</h1>') };
  for (let i = 0; i < 40; i++) files[`p${i}.txt`] = Buffer.from(`${i} `.repeat(200_000));
  writeTree(join(dir, 'big'), files);
  bigArchive = tarGzWithTool(join(dir, 'big'), join(dir, 'big.tgz'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

let spools = 0;

/** Each task gets its own copy of the archive as its spool, as each request does. */
function task(archivePath: string, overrides: Partial<UnpackOptions> = {}): UnpackTask {
  const spoolPath = join(dir, `${++spools}.spool`);
  copyFileSync(archivePath, spoolPath);
  return {
    spoolPath,
    dataDir: join(dir, 'data'),
    bodyKind: 'archive',
    limits: { ...TEST_LIMITS, maxSiteBytes: 50 * MB },
    blockExecutables: false,
    ...overrides,
  };
}

describe('ingest pool', () => {
  it('runs a task in a worker thread and returns its result', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    try {
      const result = await pool.unpack(task(archive));
      expect(result).toMatchObject({ ok: true, files: [{ path: 'index.html', size: 11 }] });
      expect(pool.queueSize).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('refuses work past its threads plus queue with code unavailable, and finishes the rest', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    try {
      const first = pool.unpack(task(bigArchive));
      const second = pool.unpack(task(bigArchive));
      const third = pool.unpack(task(archive));
      await expect(third).rejects.toMatchObject({ code: 'unavailable', status: 503, headers: { 'Retry-After': '5' } });
      expect((await first).ok).toBe(true);
      expect((await second).ok).toBe(true);
      // Capacity is back once tasks finish.
      expect((await pool.unpack(task(archive))).ok).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('rejects with an AbortError when the caller aborts', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 2, idleTimeoutMs: 1000, workerFile: builtWorker });
    try {
      const controller = new AbortController();
      const running = pool.unpack(task(bigArchive), controller.signal);
      controller.abort();
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
      // The pool replaces the terminated thread and keeps working.
      expect((await pool.unpack(task(archive))).ok).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('passes a fault inside the worker on as a thrown error, not as a deploy result', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    try {
      const notADir = join(dir, 'plain-file');
      writeFileSync(notADir, 'x');
      const failing = pool.unpack(task(archive, { dataDir: join(notADir, 'data') }));
      await expect(failing).rejects.toThrow(/ENOTDIR|EEXIST/);
      await expect(failing).rejects.not.toMatchObject({ code: 'unavailable' });
    } finally {
      await pool.close();
    }
  });
  it('announces each blob on the task’s port as soon as it is stored, before the unpack ends, then that all were', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    const channel = new MessageChannel();
    const announced: string[] = [];
    let allAfter: number | undefined;
    channel.port1.on('message', (message: AnnouncementMessage) => {
      announced.push(...('last' in message ? message.last : message).map(([sha256]) => sha256));
      if ('last' in message) allAfter ??= announced.length;
    });
    try {
      const result = await pool.unpack(task(bigArchive, { announce: channel.port2 }));
      const beforeTheEnd = announced.length;
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      // Announcements travel on their own port: the last ones may arrive just after the result.
      const shas = new Set(result.files.map((file) => file.sha256));
      expect(await waitUntil(() => announced.length >= shas.size, 2000, 10)).toBe(true);
      expect(new Set(announced)).toEqual(shas);
      expect(beforeTheEnd).toBeGreaterThan(0);
      // Said once, after the last blob.
      expect(await waitUntil(() => allAfter !== undefined, 2000, 10)).toBe(true);
      expect(allAfter).toBe(announced.length);
    } finally {
      channel.port1.close();
      await pool.close();
    }
  });

  it('announces small blobs in batches of ANNOUNCE_AT_ONCE, the last few with the batch before them, a large one at once', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    const files: Record<string, Buffer> = { 'index.html': Buffer.from('<h1>batched</h1>'), 'large.bin': Buffer.alloc(64 * 1024, 7) };
    for (let i = 0; i < 2 * ANNOUNCE_AT_ONCE + 5; i++) files[`p${i}.txt`] = Buffer.from(`page ${i}`);
    writeTree(join(dir, 'batched'), files);
    const batched = tarGzWithTool(join(dir, 'batched'), join(dir, 'batched.tgz'));
    const { channel, messages, allAnnounced } = announcementMessages();
    try {
      const result = await pool.unpack(task(batched, { dataDir: join(dir, 'data-batched'), announce: channel.port2, announceBytesMax: 1024 }));
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      expect(await waitUntil(allAnnounced, 2000, 10)).toBe(true);
      const announced = messages.flat();
      expect(new Set(announced.map(([sha256]) => sha256))).toEqual(new Set(result.files.map((file) => file.sha256)));
      expect(announced).toHaveLength(result.files.length);
      expect(messages.every((message) => message.length <= ANNOUNCE_AT_ONCE + ANNOUNCE_LAST_FEW)).toBe(true);
      expect(messages.length).toBeLessThan(10);
      // Over announceBytesMax: no bytes, and it went in a message that ends with it (not held back).
      const large = result.files.find((file) => file.path === 'large.bin')!;
      const carrying = messages.find((message) => message.some(([sha256]) => sha256 === large.sha256))!;
      expect(carrying.at(-1)).toEqual([large.sha256, undefined, {}]);
      expect(announced.filter(([, bytes]) => bytes !== undefined)).toHaveLength(result.files.length - 1);
    } finally {
      channel.port1.close();
      await pool.close();
    }
  });

  it.each([
    [2 * ANNOUNCE_AT_ONCE + 6, [ANNOUNCE_AT_ONCE, ANNOUNCE_AT_ONCE + 6]],
    [2 * ANNOUNCE_AT_ONCE + ANNOUNCE_LAST_FEW + 1, [ANNOUNCE_AT_ONCE, ANNOUNCE_AT_ONCE, ANNOUNCE_LAST_FEW + 1]],
    [ANNOUNCE_AT_ONCE - 1, [ANNOUNCE_AT_ONCE - 1]],
    [1, [1]],
  ])('announces %i small blobs in messages of %j', async (count, sizes) => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < count; i++) files[i === 0 ? 'index.html' : `p${i}.txt`] = Buffer.from(`page ${i}`);
    writeTree(join(dir, `sized-${count}`), files);
    const archive = tarGzWithTool(join(dir, `sized-${count}`), join(dir, `sized-${count}.tgz`));
    const { channel, messages, allAnnounced, lastCarried } = announcementMessages();
    try {
      const result = await pool.unpack(task(archive, { dataDir: join(dir, `data-sized-${count}`), announce: channel.port2, announceBytesMax: 1024 }));
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      expect(await waitUntil(allAnnounced, 2000, 10)).toBe(true);
      expect(messages.map((message) => message.length)).toEqual(sizes);
      // The last batch and the end in one message: the receiver knows its last burst as it takes it.
      expect(lastCarried()).toBe(sizes.at(-1));
      expect(new Set(messages.flat().map(([sha256]) => sha256))).toEqual(new Set(result.files.map((file) => file.sha256)));
    } finally {
      channel.port1.close();
      await pool.close();
    }
  });

  it('leaves the blobs unsynced with syncBlobs false (a bucket holds them first): no sync shell starts', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    try {
      const result = await pool.unpack(task(bigArchive, { syncBlobs: false }));
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      expect(syncShells()).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('syncs the blobs through one shell of its own, kept across tasks and reaped when it closes', async () => {
    const pool = createIngestPool({ maxThreads: 2, maxQueue: 2, idleTimeoutMs: 1000, workerFile: builtWorker });
    let during: ChildProcessInfo[];
    try {
      await Promise.all([pool.unpack(task(archive)), pool.unpack(task(bigArchive))]);
      await pool.unpack(task(archive));
      during = syncShells();
    } finally {
      await pool.close();
    }
    // On a filesystem in memory nothing is synced, so no shell is started.
    expect(during).toHaveLength(hasDiskBehind(statfsSync(dir).type) ? 1 : 0);
    expect(during.every((shell) => shell.state !== 'Z')).toBe(true);
    // Ended and waited for: not even a zombie is left (whose command line would be empty).
    expect(during.filter((shell) => existsSync(`/proc/${shell.pid}`))).toEqual([]);
    expect(syncShells()).toEqual([]);
  });

  it('announces blobs up to announceBytesMax with their bytes, for a pack to take from memory, and each with its variants', async () => {
    const pool = createIngestPool({ maxThreads: 1, maxQueue: 1, idleTimeoutMs: 1000, workerFile: builtWorker });
    const channel = new MessageChannel();
    const announced = new Map<string, Uint8Array | undefined>();
    const variants = new Map<string, Announcement[2]>();
    channel.port1.on('message', (message: AnnouncementMessage) => {
      for (const [sha256, bytes, encodings] of 'last' in message ? message.last : message) {
        announced.set(sha256, bytes);
        variants.set(sha256, encodings);
      }
    });
    const bytesMax = 2048;
    try {
      const result = await pool.unpack(
        // A data directory of its own: blobs stored by the tests before have no variants to find.
        task(bigArchive, {
          dataDir: join(dir, 'data-announced'),
          announce: channel.port2,
          announceBytesMax: bytesMax,
          compressBeforePublish: { leftBytes: 100 * MB, maxFileBytes: MB },
        }),
      );
      if (!result.ok) throw new Error(JSON.stringify(result.error));
      const sizes = new Map(result.files.map((file) => [file.sha256, file.size]));
      expect(await waitUntil(() => announced.size >= sizes.size, 2000, 10)).toBe(true);
      // The variants as the file entries name them, so the publisher need not look for them on disk.
      for (const file of result.files) expect(variants.get(file.sha256), file.path).toEqual(file.encodings ?? {});
      expect(result.files.some((file) => file.encodings?.gzip !== undefined)).toBe(true);
      let withBytes = 0;
      for (const [sha256, size] of sizes) {
        const bytes = announced.get(sha256);
        if (size > bytesMax) expect(bytes, sha256).toBeUndefined();
        else {
          expect(createHash('sha256').update(bytes!).digest('hex'), sha256).toBe(sha256);
          withBytes++;
        }
      }
      expect(withBytes).toBeGreaterThan(0);
      expect(withBytes).toBeLessThan(sizes.size);
    } finally {
      channel.port1.close();
      await pool.close();
    }
  });
});

interface ChildProcessInfo {
  pid: number;
  state: string;
}

/** This process's children that are sync shells (store/filesystem-sync.ts) still running. */
function syncShells(): ChildProcessInfo[] {
  const found: ChildProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== process.pid) continue;
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('plinth-sync')) continue;
      found.push({ pid: Number(name), state: state! });
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/**
 * A channel for `UnpackTask.announce`: the announcements of each message that carried some, and how
 * many the last message (`LastAnnouncements`) carried, once it came.
 */
function announcementMessages(): {
  channel: MessageChannel;
  messages: Array<readonly Announcement[]>;
  allAnnounced: () => boolean;
  lastCarried: () => number | undefined;
} {
  const channel = new MessageChannel();
  const messages: Array<readonly Announcement[]> = [];
  let lastCarried: number | undefined;
  channel.port1.on('message', (message: AnnouncementMessage) => {
    const announced = 'last' in message ? message.last : message;
    if (announced.length > 0) messages.push(announced);
    if ('last' in message) lastCarried = message.last.length;
  });
  return { channel, messages, allAnnounced: () => lastCarried !== undefined, lastCarried: () => lastCarried };
}
