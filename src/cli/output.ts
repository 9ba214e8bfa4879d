import type { ApiAnswer } from './api-client.js';

/** Where a command writes: results to `out`, problems to `err`, and a live status line on a terminal. */
export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Replaces the status line (terminals only); `undefined` clears it. */
  status?: (line: string | undefined) => void;
  /** Print the API's JSON answer instead of text. */
  json?: boolean;
}

/** A terminal status line that redraws itself in place. */
export function terminalStatus(stream: NodeJS.WriteStream): (line: string | undefined) => void {
  let shown = false;
  return (line) => {
    if (shown) stream.write('\r\x1b[2K');
    shown = line !== undefined;
    if (line !== undefined) stream.write(line.slice(0, Math.max(20, (stream.columns ?? 80) - 1)));
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function progressBar(done: number, total: number, width = 24): string {
  const share = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(share * 100)).padStart(3)}%`;
}

/** Prints a refused call: the code and message, then what to do (`agent_message`). Exit status 1. */
export function reportFailure(io: CommandIo, what: string, answer: ApiAnswer): number {
  if (io.json) {
    io.out(answer.json ? JSON.stringify(answer.json, null, 2) : JSON.stringify({ error: { code: 'unexpected', message: answer.text.slice(0, 500) } }));
    return 1;
  }
  const error = answer.json?.error;
  io.err(`${what} failed (${answer.status} ${error?.code ?? 'unexpected answer'}): ${error?.message ?? answer.text.slice(0, 500)}`);
  if (answer.json?.agent_message) io.err(answer.json.agent_message);
  return 1;
}
