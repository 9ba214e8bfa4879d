/**
 * The peers' own parser and serving test cases, written down as data of ours: the input file as the
 * peer's test gives it, and the peer's verdict as its test asserts it. No code of theirs is here.
 */

/** Where a case comes from: repository, path and commit of the peer's test (and its fixture file). */
export interface PeerSource {
  repo: 'netlify/build' | 'cloudflare/workers-sdk';
  commit: string;
  /** The test file whose assertion gives the verdict. */
  test: string;
  /** The test's name, or its table row. */
  case: string;
  /** The fixture file the test reads, when the input is a file of its own. */
  fixture?: string;
}

/** A redirect as the peer parsed it; `status` as the peer serves it (its default when none was written). */
export interface PeerRedirect {
  line: number;
  from: string;
  to: string;
  status: number;
  force?: boolean;
  /** No status was written: the peer's default applies (Netlify 301, Cloudflare 302). */
  defaulted?: boolean;
  /** Query conditions, as the peer parsed them. */
  query?: Record<string, string>;
}

/** A `_headers` block as the peer parsed it (header names compared without case). */
export interface PeerHeaderBlock {
  line: number;
  path: string;
  set: Record<string, string>;
  remove?: string[];
}

/** A request and the peer's answer to it. */
export interface PeerRequest {
  path: string;
  /** The host asked for (for rules that name one). */
  host?: string;
  /** Files the site has (the peer's test's assets); without them, `index.html` alone. */
  files?: string[];
  /** `_redirects`: the answer's status, and its Location for a redirect. */
  status?: number;
  location?: string;
  /** `_headers`: headers the answer has (name → value), and names it must not have. */
  headers?: Record<string, string>;
  absent?: string[];
  /** A named choice decides this answer: Plinth answers otherwise, as docs/serving.md says. */
  choice?: Choice;
}

/**
 * Where a case stands against Plinth's docs: within the dialect docs/serving.md claims (every such
 * case must behave as its peer), outside it (counted in the share), or a feature Plinth refuses by
 * name and the issue leaves out of the share (visitor conditions, proxying to another host).
 */
export type Scope = 'dialect' | 'outside' | 'visitor_condition' | 'proxy';

/** A difference between the two hosts on which docs/serving.md names Plinth's choice. */
export type Choice =
  /** A rule without a status: Plinth redirects with 301, as Netlify; Cloudflare 302. */
  | 'default_status'
  /** An existing file wins over a rule without `!`, as on Netlify; Cloudflare applies the rule. */
  | 'file_first'
  /** `/a/*` also matches `/a`, as on Netlify; on Cloudflare only `/a/` and below. */
  | 'splat_matches_parent'
  /** Two rules from one path: both kept, the first applies (Netlify's verdict, Cloudflare's answer). */
  | 'duplicate_from'
  /** `/* /index.html 200`, the single-page-app rewrite: accepted, as on Netlify; Cloudflare refuses it (its own .html handling would loop). */
  | 'spa_rewrite'
  /** Header values are sent as written, as on Netlify; Cloudflare fills :placeholders into them. */
  | 'header_placeholders'
  /** Caps: Plinth's own (PLINTH_REDIRECTS_MAX_RULES, PLINTH_HEADERS_MAX_BLOCKS); Netlify has none, Cloudflare others. */
  | 'caps'
  /** A rule from `/.netlify/…`: accepted, as on Cloudflare; Netlify keeps those paths for itself. */
  | 'netlify_paths'
  /** A rule for one host name in `_redirects` (`https://old.example/* …`): accepted, as on Netlify; Cloudflare refuses it there. */
  | 'host_rules_in_redirects'
  /** A `_headers` line without a colon: refused, as on Cloudflare; Netlify skips it without a word. */
  | 'header_without_colon'
  /** Two `*` in one path: refused, as on Cloudflare; Netlify accepts them in `_headers`. */
  | 'one_splat';

export interface PeerCase {
  id: string;
  host: 'netlify' | 'cloudflare';
  source: PeerSource;
  file: '_redirects' | '_headers';
  text: string;
  scope: Scope;
  /** Lines on which a named choice decides, not the peer's verdict (the rest of the case is compared). */
  chosen?: Array<{ line: number; through?: number; choice: Choice }>;
  /** The peer's verdict: the lines it turned into rules, and those it refused (skipped with an error). */
  peer: { redirects?: PeerRedirect[]; headers?: PeerHeaderBlock[]; refused: number[] };
  /** Requests and the peer's answers, replayed against Plinth's matcher. */
  requests?: PeerRequest[];
  /** Why the case is where it is, or what Plinth does instead (said in docs/serving.md). */
  note?: string;
}
