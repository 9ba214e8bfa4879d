/**
 * The one builder of security headers, with a variant per kind of answer. Every variant has
 * `X-Content-Type-Options: nosniff`: a browser takes each answer as the type it is labelled,
 * never as HTML or script it guessed.
 *
 * - `page`: our own pages (docs and account app). The CSP allows our own files only: no inline
 *   script or style, so an injected `<script>` or `style=` does nothing; no framing, no opener.
 * - `site`: a published site's answers. The site's own script and style must run, so no CSP here;
 *   a site's `_headers` may add one, and may replace the `Referrer-Policy`.
 * - `gate`: the access pages a site host shows in front of a protected site (inline style only).
 * - `resource`: our files and data that are not pages (stylesheet, script, Markdown, JSON).
 * - `upload`: bytes someone uploaded, read back on one of our hosts: sandboxed, nothing runs.
 */

export type SecurityVariant = 'page' | 'site' | 'gate' | 'resource' | 'upload';

export interface SecurityHeaderOptions {
  /** `page` only: extra `form-action` sources (an OAuth consent form that redirects to a client). */
  formActions?: readonly string[];
}

const NOSNIFF = { 'X-Content-Type-Options': 'nosniff' } as const;

/** The CSP of our own pages. */
export function contentSecurityPolicy(options: SecurityHeaderOptions = {}): string {
  const formAction = ["'self'", ...(options.formActions ?? [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `form-action ${formAction}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function pageHeaders(options: SecurityHeaderOptions): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(options),
    // For browsers that predate frame-ancestors.
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    ...NOSNIFF,
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
}

const VARIANTS: Readonly<Record<SecurityVariant, Readonly<Record<string, string>>>> = {
  page: Object.freeze(pageHeaders({})),
  site: Object.freeze({ ...NOSNIFF, 'Referrer-Policy': 'strict-origin-when-cross-origin' }),
  gate: Object.freeze({
    ...NOSNIFF,
    'Referrer-Policy': 'same-origin',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  }),
  resource: Object.freeze({ ...NOSNIFF }),
  upload: Object.freeze({ ...NOSNIFF, 'Content-Security-Policy': "default-src 'none'; sandbox" }),
};

/** The security headers of one kind of answer; shared and frozen unless `options` widen a page's. */
export function securityHeaders(variant: SecurityVariant, options?: SecurityHeaderOptions): Readonly<Record<string, string>> {
  if (variant === 'page' && options?.formActions?.length) return pageHeaders(options);
  return VARIANTS[variant];
}
