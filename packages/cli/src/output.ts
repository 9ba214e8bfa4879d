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

/**
 * A line as it is printed: control characters other than line breaks and tabs (C0, DEL, C1,
 * carriage return) written out as `\xNN`. Lines carry text from the service's answers (messages,
 * paths, e-mail addresses of other people), which must not reach the terminal as escape sequences
 * that move the cursor, rewrite lines already printed, set the title or write the clipboard.
 */
export function printable(line: string): string {
  return line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** A terminal status line that redraws itself in place. */
export function terminalStatus(stream: { write: (text: string) => unknown; columns?: number }): (line: string | undefined) => void {
  let shown = false;
  return (line) => {
    if (shown) stream.write('\r\x1b[2K');
    shown = line !== undefined;
    if (line !== undefined) stream.write(printable(line).slice(0, Math.max(20, (stream.columns ?? 80) - 1)));
  };
}

export interface LineStreams {
  stdout: { write: (text: string) => unknown };
  stderr: { write: (text: string) => unknown; columns?: number };
  /** Draw a status line on stderr (a person watching a terminal). */
  progress: boolean;
  /** Streams whose reader has gone (a closed pipe): nothing more is written to them. */
  closed?: { stdout: boolean; stderr: boolean };
}

/**
 * Lines to stdout and stderr, and on a terminal a status line. A line printed while the status
 * line is shown first clears it, so the line stands alone and the status is drawn again below it
 * (not glued to the end of the status text).
 */
export function lineIo(streams: LineStreams): Required<Pick<CommandIo, 'out' | 'err'>> & Pick<CommandIo, 'status'> {
  const closed = streams.closed ?? { stdout: false, stderr: false };
  const draw = streams.progress ? terminalStatus(streams.stderr) : undefined;
  let current: string | undefined;
  const print = (stream: 'stdout' | 'stderr', line: string): void => {
    if (closed[stream]) return;
    if (current !== undefined) draw?.(undefined);
    streams[stream].write(`${printable(line)}\n`);
    if (current !== undefined && !closed.stderr) draw?.(current);
  };
  return {
    out: (line) => print('stdout', line),
    err: (line) => print('stderr', line),
    status: draw
      ? (line) => {
          current = line;
          if (!closed.stderr) draw(line);
        }
      : undefined,
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
