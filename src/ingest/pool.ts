// The bounded Piscina pool in front of `worker.ts`. HTTP threads call `unpack` and never parse
// archives themselves (DESIGN "Threads").
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';
import type * as PiscinaModule from 'piscina';
import { ServiceError } from '../errors.js';
import type { BadgedPage } from '../badge/index.js';
import { createSyncHelper, type RunSync } from '../store/blobs-entry.js';
import { openSyncPort } from './sync-port.js';
import type { AnalyzeResult, AnalyzeTask, BadgeTask, CompressReply, CompressTask, UnpackReply, UnpackResult, UnpackTask } from './types.js';

export interface IngestPoolOptions {
  /** Worker threads; all pools together should stay within the core count. */
  maxThreads: number;
  /** Tasks allowed to wait for a thread; past that `unpack` fails with code `unavailable`. */
  maxQueue: number;
  /** An idle thread above `minThreads` exits after this long. */
  idleTimeoutMs: number;
  /** Threads kept warm; default 1 (0 starts each burst cold, ~100 ms per thread). */
  minThreads?: number;
  /**
   * The built worker's entry. Defaults to `worker-entry.cjs` next to this file, which is right
   * for the built dist/. Tests run src/ through vitest, which cannot load a TypeScript worker, so
   * they pass dist/ingest/worker-entry.cjs here.
   */
  workerFile?: string | URL;
  /**
   * Where bodies received into memory come from: a body in one of its buffers moves to the
   * worker, and the worker moves the buffer back here for the next body.
   */
  bodies?: BodyBuffers;
}

/** The part of the HTTP thread's body memory the pool uses (see http/body-memory.ts). */
export interface BodyBuffers {
  owns(buffer: ArrayBufferLike): boolean;
  recycle(buffer: ArrayBuffer): void;
}

export interface IngestPool {
  /** Rejects with a `ServiceError` coded `unavailable` when the queue is full, with an AbortError on `signal`. */
  unpack(task: UnpackTask, signal?: AbortSignal): Promise<UnpackResult>;
  /**
   * Compiles the assembled site's rules files and checks its links, on the unpack threads: a
   * deploy's second step, never refused for a full queue (its unpack was admitted).
   */
  analyze(task: AnalyzeTask, signal?: AbortSignal): Promise<AnalyzeResult>;
  /**
   * Makes precompressed variants after a deploy went live, on a separate single thread; not
   * admission-checked, as it is follow-up work of a deploy already admitted.
   */
  compress(task: CompressTask): Promise<CompressReply>;
  /**
   * Builds a badged page (badge placed, compressed forms) on a thread of its own, so a serving
   * thread never spends a large page's parse; undefined when its queue is full.
   */
  badgePage(task: BadgeTask): Promise<BadgedPage> | undefined;
  /**
   * Lets running and queued tasks finish, then stops the threads; with `force`, stops them at
   * once (running tasks fail; a blob temp file they leave is swept at the next start).
   */
  close(options?: { force?: boolean }): Promise<void>;
  /** Tasks waiting for a thread. */
  readonly queueSize: number;
  /** Unpacks and analyses admitted and not finished (running or waiting). */
  readonly inFlight: number;
  /** Unpacks and analyses the pool admits at once (threads and queue); past it, `unavailable`. */
  readonly capacity: number;
  /** Threads that run unpacks and analyses (at most). */
  readonly threads: number;
  /** Unpack tasks admitted since the pool started (refused ones not counted). */
  readonly unpacksStarted: number;
  /** syncfs of a directory's filesystem by this pool's sync helper, as its tasks ask for it (see filesystem-sync.ts). */
  readonly runSync: RunSync;
}

const COMPRESS_QUEUE = 64;
const BADGE_QUEUE = 64;
/**
 * V8's young generation of each ingest thread, at most. By default it grows to 48 MB in a
 * thread that allocates a lot, as unpacking, link checks and compression do, and stays that
 * size: with up to four such threads it was about 90 MB of a deploy-heavy server's peak RSS
 * (bench/RESULTS.md, "Deploys: the link check, memory and the 1 MB site"). Their work
 * streams, with few objects living long, so the more frequent scavenges of a small one cost
 * no measurable CPU.
 */
const YOUNG_GENERATION_MB = 4;
const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };

function unavailable(): ServiceError {
  return new ServiceError('unavailable', 'Too many deploys are being processed right now.', {
    agentMessage: 'The service is busy. Wait a few seconds and retry the same request.',
    headers: { 'Retry-After': '5' },
  });
}

/**
 * Piscina, loaded when the first pool is made: the admin commands reach this module through the
 * operations and never start a pool.
 */
const requireModule = createRequire(import.meta.url);
let piscinaModule: typeof PiscinaModule | undefined;
const loadPiscina = (): typeof PiscinaModule.Piscina => (piscinaModule ??= requireModule('piscina') as typeof PiscinaModule).Piscina;

export function createIngestPool(options: IngestPoolOptions): IngestPool {
  const workerFile = options.workerFile ?? new URL('./worker-entry.cjs', import.meta.url);
  const filename = workerFile instanceof URL ? fileURLToPath(workerFile) : workerFile;
  const maxThreads = Math.max(1, options.maxThreads);
  const capacity = maxThreads + Math.max(0, options.maxQueue);
  const Piscina = loadPiscina();
  const piscina = new Piscina<UnpackTask | AnalyzeTask, UnpackReply | AnalyzeResult>({
    filename,
    name: 'unpack',
    resourceLimits,
    minThreads: Math.min(options.minThreads ?? 1, maxThreads),
    maxThreads,
    // The cap is enforced below, on tasks in flight, so that "full" does not depend on how
    // fast threads start; Piscina's own queue only has to hold what that admits (and the
    // analyses of deploys admitted before).
    maxQueue: capacity * 2,
    idleTimeout: options.idleTimeoutMs,
  });
  let inFlight = 0;
  let unpacksStarted = 0;
  // Unpacks and compressions sync the blob filesystem through one shell kept by this thread,
  // instead of each forking its whole process (see filesystem-sync.ts).
  const syncHelper = createSyncHelper();

  /** Runs `work` with a sync channel of its own in the task, closed when the task ends. */
  async function withSyncPort<Task extends UnpackTask | CompressTask, T>(task: Task, work: (task: Task) => Promise<T>): Promise<T> {
    const channel = openSyncPort(syncHelper.sync);
    try {
      return await work({ ...task, syncPort: channel.port });
    } finally {
      channel.close();
    }
  }

  async function unpack(task: UnpackTask, signal?: AbortSignal): Promise<UnpackResult> {
    unpacksStarted++;
    const reply = (await withSyncPort(task, (withPort) => admitted(withPort, 'unpack', signal))) as UnpackReply;
    if (reply.body) options.bodies?.recycle(reply.body);
    return reply.result;
  }

  async function admitted(task: UnpackTask | AnalyzeTask, name: 'unpack' | 'analyze', signal?: AbortSignal): Promise<UnpackReply | AnalyzeResult> {
    // A deploy's analysis follows its own unpack, whose slot it takes over: refusing it would
    // waste an upload already read. It counts, so new unpacks still see the pool busy.
    if (name === 'unpack' && inFlight >= capacity) throw unavailable();
    inFlight++;
    try {
      // An abort terminates a running worker mid-task; any blob temp file it leaves behind is
      // reclaimed by the store's `sweepTemp`, and no index ever points at it.
      return await piscina.run(task, { name, ...(signal ? { signal } : {}), ...transferOf(task, options.bodies) });
    } catch (err) {
      const message = (err as Error | undefined)?.message ?? '';
      if (message === 'Task queue is at limit' || message.startsWith('No task queue available')) throw unavailable();
      throw err;
    } finally {
      inFlight--;
    }
  }

  // Compression after a deploy has its own single thread, so it never sits in front of the
  // next deploy; its queue is bounded and anything past it is dropped (files stay uncompressed).
  const compressor = new Piscina<CompressTask, CompressReply>({
    filename,
    name: 'compress',
    resourceLimits,
    minThreads: 0,
    maxThreads: 1,
    maxQueue: COMPRESS_QUEUE,
    idleTimeout: options.idleTimeoutMs,
  });

  // Badged pages have a lane of their own: a visitor waits for one, and must not wait behind a
  // deploy's compression.
  const badger = new Piscina<BadgeTask, BadgedPage>({
    filename,
    name: 'badge',
    resourceLimits,
    minThreads: 0,
    maxThreads: 1,
    maxQueue: BADGE_QUEUE,
    idleTimeout: options.idleTimeoutMs,
  });

  return {
    unpack,
    analyze: (task, signal) => admitted(task, 'analyze', signal) as Promise<AnalyzeResult>,
    compress: (task) => withSyncPort(task, (withPort) => compressor.run(withPort, { transferList: [withPort.syncPort!, ...journalBuffer(task)] })),
    badgePage: (task) => (badger.queueSize >= BADGE_QUEUE ? undefined : badger.run(task).then(asBuffers)),
    close: async (closeOptions = {}) => {
      if (closeOptions.force) await Promise.all([piscina.destroy(), compressor.destroy(), badger.destroy()]);
      else await Promise.all([piscina.close(), compressor.close(), badger.close()]);
      await syncHelper.close();
    },
    get queueSize() {
      return piscina.queueSize;
    },
    get inFlight() {
      return inFlight;
    },
    capacity,
    threads: maxThreads,
    get unpacksStarted() {
      return unpacksStarted;
    },
    runSync: (dir) => syncHelper.sync(dir),
  };
}

/** The one buffer a deploy's journaled blobs share (collector.ts), moved to the writing thread rather than copied. */
function journalBuffer(task: CompressTask): ArrayBuffer[] {
  const buffer = task.write?.[0]?.bytes.buffer;
  return buffer instanceof ArrayBuffer && task.write!.every((blob) => blob.bytes.buffer === buffer) ? [buffer] : [];
}

/**
 * A body received into memory moves to the worker instead of being copied, when its buffer is
 * its own: one of the body memory's, or one it fills whole (never a view of a shared pool, which
 * a transfer would take from every other user).
 */
function transferOf(task: UnpackTask | AnalyzeTask, bodies: BodyBuffers | undefined): { transferList?: Array<ArrayBuffer | MessagePort> } {
  const transferList: Array<ArrayBuffer | MessagePort> = [];
  // The port an unpack announces its blobs on goes to the worker (it cannot be copied).
  if ('announce' in task && task.announce !== undefined) transferList.push(task.announce);
  if ('syncPort' in task && task.syncPort !== undefined) transferList.push(task.syncPort);
  const body = 'body' in task ? task.body : undefined;
  if (body !== undefined && body.buffer instanceof ArrayBuffer) {
    const whole = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    if (whole || bodies?.owns(body.buffer)) transferList.push(body.buffer);
  }
  return transferList.length > 0 ? { transferList } : {};
}

/** Buffers come back from the worker as plain Uint8Arrays; serving wants Buffers. */
function asBuffers(page: BadgedPage): BadgedPage {
  const buffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const body = (form: { bytes: Uint8Array; etag: string } | undefined) => form && { bytes: buffer(form.bytes), etag: form.etag };
  return { identity: body(page.identity)!, ...(page.br ? { br: body(page.br)! } : {}), ...(page.gzip ? { gzip: body(page.gzip)! } : {}) };
}
