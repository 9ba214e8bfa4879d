import type { Caller, DeployBody, Operations } from '../sites/index.js';

/** What one tool call runs with: the caller of this HTTP request and, for a large deploy, its arguments' bytes. */
export interface ToolContext {
  ops: Operations;
  caller: Caller;
  network: string;
  /**
   * The `deploy_site` arguments of a large request as they arrived, unparsed (see envelope.ts), in
   * memory or in the spool file. When set, the tool's `arguments` object is a placeholder that
   * keeps only `manifest`.
   */
  deployArguments?: DeployBody;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  run(context: ToolContext, args: Record<string, unknown>): Promise<unknown>;
}

/** Annotations of a tool that only reads, and of one that changes something. */
export const reads: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const changes = (destructive: boolean, idempotent = false): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});
