import { ACCESS_PATHS, escapeHtml } from '../rules/index.js';

/**
 * The pages of the gate (access.ts): the sign-in form of a password site and the "members only"
 * page. They say which kind of access the site needs and nothing of its content. Self-contained
 * (inline CSS, no script), like the status pages.
 */

export interface AccessPageOptions {
  mode: 'password' | 'members';
  siteName: string;
  /** Path on this host to return to (already checked by `safeReturnPath`). */
  returnPath: string;
  /** Members mode: where signing in starts (the app). */
  signInUrl?: string;
  /** A preview of a public site kept to members, which preview links open too. */
  keptPreview?: boolean;
  problem?: 'wrong_password' | 'too_many' | 'ticket' | 'credential' | 'unavailable' | 'link' | 'elsewhere';
}

const STYLE =
  'body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;' +
  'background:#f6f6f4;color:#1d1d1f;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
  'main{max-width:26rem;padding:2rem}h1{margin:0 0 .75rem;font-size:1.6rem;line-height:1.2}p{margin:0 0 1rem}' +
  'label{display:block;font-weight:600;margin-bottom:.25rem}input{font:inherit;padding:.5rem;width:100%;box-sizing:border-box;margin-bottom:1rem}' +
  'button,a.button{font:inherit;padding:.5rem 1rem;background:#1d1d1f;color:#fff;border:0;border-radius:4px;text-decoration:none;display:inline-block}' +
  '.problem{color:#a4161a;font-weight:600}';

const PROBLEMS: Record<NonNullable<AccessPageOptions['problem']>, string> = {
  wrong_password: 'That password is not right. Try again.',
  too_many: 'Too many passwords have been tried here lately. Wait a while, then try again.',
  ticket: 'That sign-in has expired or was already used. Sign in again.',
  credential: 'The credentials sent do not open this site.',
  unavailable: 'Signing in is not possible right now. Try again in a moment.',
  link: 'That preview link has expired or no longer works. Ask for a new one, or sign in if you are a member.',
  elsewhere: 'Pages and files of this site cannot be loaded from another site. Open the site itself.',
};

export function accessPage(options: AccessPageOptions): string {
  const site = escapeHtml(options.siteName);
  const problem = options.problem ? `<p class="problem" role="alert">${escapeHtml(PROBLEMS[options.problem])}</p>` : '';
  const title = options.mode === 'password' ? 'Password required' : 'Members only';
  const body =
    options.problem === 'elsewhere'
      ? `<p><strong>${site}</strong> is private.</p>${problem}<p><a class="button" href="/" target="_top">Open ${site}</a></p>`
      : options.mode === 'password'
        ? `<p><strong>${site}</strong> is protected by a password.</p>${problem}` +
          `<form method="post" action="${ACCESS_PATHS.login}">` +
          `<input type="hidden" name="return" value="${escapeHtml(options.returnPath)}">` +
          '<label for="password">Password</label>' +
          '<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>' +
          '<button type="submit">Open the site</button></form>'
        : (options.keptPreview
            ? `<p>This preview of <strong>${site}</strong> is visible to its members and to holders of a preview link only.</p>${problem}`
            : `<p><strong>${site}</strong> is visible to its members only.</p>${problem}`) +
          (options.signInUrl ? `<p><a class="button" href="${escapeHtml(options.signInUrl)}">Sign in with Plinth</a></p>` : '');
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">' +
    `<title>${title}</title><style>${STYLE}</style></head><body><main><h1>${title}</h1>${body}</main></body></html>\n`
  );
}
