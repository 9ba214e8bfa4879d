/** One request s3rver received. */
export interface S3rverRequest {
  method: string;
  /** With its query string. */
  url: string;
  /** Whether it was a CopyObject (it carried `x-amz-copy-source`). */
  copy: boolean;
  /** When it arrived (epoch ms). */
  at: number;
}

/** A request s3rver answered. */
export interface S3rverAnswered {
  method: string;
  url: string;
  /** When it arrived and when its answer was sent (epoch ms). */
  at: number;
  end: number;
  /** Its body's `Content-Length`. */
  bytes: number;
}

/** s3rver in a child process on loopback, with one bucket (see s3rver.mjs). */
export interface S3rverServer {
  endpoint: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The server's settings, for `loadConfig` or a node's environment. */
  env: Record<string, string>;
  /** A store's bucket options for it (no cache, an hour's grace), `extra` over them. */
  options(extra?: Record<string, unknown>): {
    bucket: string;
    endpoint: string;
    region: string;
    forcePathStyle: true;
    credentials: { accessKeyId: string; secretAccessKey: string };
    cacheBytes: number;
    graceMs: number;
  };
  /** Requests the server received so far. */
  requests(): S3rverRequest[];
  /** Requests the server answered so far, with when. */
  answered(): S3rverAnswered[];
  /** The server process's id while it runs (for its CPU time). */
  pid(): number | undefined;
  /** Stops the server but keeps its files (an outage); `resume` starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the server and removes its files. */
  stop(): Promise<void>;
}

export function startS3rver(bucket?: string): Promise<S3rverServer>;
