import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { PageRoute } from './context.js';

/** The app's own stylesheet and script, read once when the app is built, with strong ETags. */
const FILES: Record<string, string> = {
  '/assets/style.css': 'text/css; charset=utf-8',
  '/assets/app.js': 'text/javascript; charset=utf-8',
  '/favicon.svg': 'image/svg+xml',
};

export function assetRoutes(): PageRoute[] {
  return Object.entries(FILES).map(([path, type]) => {
    // src/app/assets and dist/app are both two levels below the repository, so this finds the file either way.
    const body = readFileSync(new URL(`../../src/app/assets/${path.split('/').pop()}`, import.meta.url));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    return {
      method: 'GET' as const,
      path,
      async handle(context) {
        const headers = { 'Content-Type': type, ETag: etag, 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' };
        if (context.request.headers['if-none-match'] === etag) return { status: 304, headers, cookies: [], body: '' };
        return { status: 200, headers, cookies: [], body };
      },
    };
  });
}
