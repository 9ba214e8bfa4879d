/**
 * The headers every page of ours sends (docs and account app). The CSP allows our own files only:
 * no inline script or style, so an injected `<script>` or `style=` does nothing.
 */

export interface SecurityHeaderOptions {
  /** Extra `form-action` sources (e.g. an OAuth consent form that redirects to a client). */
  formActions?: readonly string[];
}

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

export function securityHeaders(options: SecurityHeaderOptions = {}): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(options),
    // For browsers that predate frame-ancestors.
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
}
