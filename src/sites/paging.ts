import { ServiceError } from '../errors.js';

/** Cursor pagination shared by the list operations: a page size and an opaque cursor. */

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/** What a caller asks for; strings as they arrive from a query, numbers from JSON. */
export interface PageRequest {
  limit?: string | number;
  cursor?: string;
}

export function pageLimit(raw: string | number | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_PAGE;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new ServiceError('bad_request', `limit must be a whole number from 1 to ${MAX_PAGE}.`);
  }
  return limit;
}

/** Cursors are opaque to callers: base64url of a position only the operation interprets. */
export function encodeCursor(position: string | number): string {
  return Buffer.from(String(position), 'utf8').toString('base64url');
}

/** The position inside a cursor, or `undefined` for the first page; 400 when it was not ours. */
export function decodeCursor(raw: string | undefined, isValid: (position: string) => boolean): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const position = /^[A-Za-z0-9_-]+$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  if (!isValid(position)) {
    throw new ServiceError('bad_request', 'cursor is not one this endpoint handed out.', {
      agentMessage: 'Pass next_cursor from the previous page unchanged, or omit cursor to start from the first page.',
    });
  }
  return position;
}
