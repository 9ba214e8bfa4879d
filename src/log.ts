import type { LogLevel } from './config.js';

export interface Logger {
  debug(fields: Record<string, unknown>, event: string): void;
  info(fields: Record<string, unknown>, event: string): void;
  warn(fields: Record<string, unknown>, event: string): void;
  error(fields: Record<string, unknown>, event: string): void;
  child(fields: Record<string, unknown>): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; defaults to stdout. */
  write?: (line: string) => void;
  base?: Record<string, unknown>;
}

/** JSON-lines logger: one object a line, a stable event name plus fields. */
export function createLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const threshold = RANK[options.level];
  const base = options.base ?? {};

  const emit = (level: LogLevel, fields: Record<string, unknown>, event: string): void => {
    if (RANK[level] < threshold) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level, event, ...base, ...fields };
    const err = record.err;
    if (err instanceof Error) record.err = { message: err.message, code: (err as { code?: unknown }).code, stack: err.stack };
    write(`${JSON.stringify(record)}\n`);
  };

  return {
    debug: (fields, event) => emit('debug', fields, event),
    info: (fields, event) => emit('info', fields, event),
    warn: (fields, event) => emit('warn', fields, event),
    error: (fields, event) => emit('error', fields, event),
    child: (fields) => createLogger({ ...options, base: { ...base, ...fields } }),
  };
}
