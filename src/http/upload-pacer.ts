/**
 * Visitors first: while an HTTP thread is busy serving, request bodies on that thread are read at
 * a paced rate instead of as fast as the client sends. Receiving 90 MB over TCP costs real CPU
 * (on 2 saturated cores it triples a page's p99 even for a server that discards the bytes), so
 * under load an upload takes longer rather than slowing every visitor on the thread; when the
 * thread is quiet, uploads run at full speed.
 */
export interface UploadPacer {
  /** Counts one served request (cheap: an increment). */
  noteRequest(): void;
  /** Milliseconds to pause before reading more, after `bytes` more were read by one upload. */
  delayAfter(upload: PacedUpload, bytes: number): number;
  stop(): void;
}

/** Per-upload pacing state. */
export interface PacedUpload {
  /** When this upload may have read its next byte, at the paced rate (ms, monotonic). */
  due: number;
}

export interface UploadPacerOptions {
  /** Above this many served requests per second on the thread, uploads are paced. */
  busyRequestsPerSecond: number;
  /** Paced intake per upload, bytes per second. */
  pacedBytesPerSecond: number;
  now?: () => number;
}

const SAMPLE_MS = 100;

export function createUploadPacer(options: UploadPacerOptions): UploadPacer {
  const now = options.now ?? (() => performance.now());
  let requests = 0;
  let busy = false;
  const timer = setInterval(() => {
    busy = requests * (1000 / SAMPLE_MS) > options.busyRequestsPerSecond;
    requests = 0;
  }, SAMPLE_MS);
  timer.unref();

  return {
    noteRequest() {
      requests++;
    },
    delayAfter(upload, bytes) {
      const at = now();
      if (!busy) {
        upload.due = at;
        return 0;
      }
      upload.due = Math.max(upload.due, at) + (bytes / options.pacedBytesPerSecond) * 1000;
      return Math.max(0, upload.due - at);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
