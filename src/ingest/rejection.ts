// Expected deploy failures. Deep inside a stream loop the simplest way out is to throw; the worker
// catches exactly this type at the top and returns its plain `error`, so nothing but real faults
// ever crosses the thread boundary as a thrown Error.
import { accountAllowsMore, isRulesFile, siteTooLarge as siteTooLargeWords, type SizedFile } from '../rules/index.js';
import type { IngestError, IngestErrorCode } from './types.js';

export class DeployRejected extends Error {
  readonly error: IngestError;

  constructor(error: IngestError) {
    super(error.message);
    this.name = 'DeployRejected';
    this.error = error;
  }
}

function reject(code: IngestErrorCode, message: string, extra: Omit<IngestError, 'code' | 'message'> = {}): DeployRejected {
  return new DeployRejected({ code, message, ...extra });
}

export function badRequest(message: string, extra: Omit<IngestError, 'code' | 'message'> = {}): DeployRejected {
  return reject('bad_request', message, extra);
}

export function tooLarge(message: string, extra: Omit<IngestError, 'code' | 'message'> = {}): DeployRejected {
  return reject('too_large', message, extra);
}

const MB = 1024 * 1024;

// `1 MB`, `50 MB`, `5 GB`: limits are whole units in SPEC 8, so no decimals unless needed.
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MB) return `${+(bytes / (1024 * MB)).toFixed(2)} GB`;
  if (bytes >= MB) return `${+(bytes / MB).toFixed(2)} MB`;
  return `${+(bytes / 1024).toFixed(2)} KB`;
}

export function fileTooLarge(file: string, maxFileBytes: number, anonymous = false, maxRulesFileBytes = 0): DeployRejected {
  const limit = formatBytes(maxFileBytes);
  // `_redirects` and `_headers` have one cap on every plan: an account would not let this one in.
  const rulesFile = isRulesFile(file) && maxRulesFileBytes > 0 && maxRulesFileBytes <= maxFileBytes;
  const advice = rulesFile
    ? ` ${file} may be at most ${formatBytes(maxRulesFileBytes)} on every plan, with an account too: cover many paths with one rule using :name placeholders and *, then deploy again.`
    : ` Make it smaller (compress or resize it) or leave it out, then deploy again.${anonymous ? accountAllowsMore('file') : ''}`;
  return reject('too_large', `File ${JSON.stringify(file)} is larger than the ${limit} per-file limit.`, {
    agentMessage: `${file} is larger than ${limit}, the largest file this plan can publish.${advice}`,
    details: { file, limit: maxFileBytes },
  });
}

/** The site is over its limit: the largest files, not the one where the running total crossed it. */
export function siteTooLarge(sizes: readonly SizedFile[], maxSiteBytes: number, options: { anonymous: boolean; complete: boolean }): DeployRejected {
  const words = siteTooLargeWords(sizes, maxSiteBytes, options);
  return reject('too_large', words.message, { agentMessage: words.agentMessage, details: words.details });
}

export function tooManyFiles(maxFiles: number, anonymous = false): DeployRejected {
  return reject('too_large', `The site has more than ${maxFiles} files, the per-site limit.`, {
    agentMessage: `The site has more than ${maxFiles} files, the most this plan allows. Remove files the site does not need (build caches, sources, unused assets) and deploy again.${anonymous ? accountAllowsMore('files') : ''}`,
    details: { limit: maxFiles },
  });
}

export function executableBlocked(file: string): DeployRejected {
  return badRequest(`File ${JSON.stringify(file)} is an executable or installer; anonymous deploys cannot publish those.`, {
    agentMessage: `Executables and installers can't be published anonymously. Sign in and deploy with an API token to publish ${file}, or leave it out of the site.`,
    details: { file },
  });
}

/** A secret key the leak guard found; `compressed`: in what the file decompresses to. */
export interface SecretLocation {
  file: string;
  line: number;
  kind: string;
  compressed: boolean;
}

/**
 * Every key the leak guard found in the deploy (up to its cap, in path order), in one refusal, so
 * they can all be fixed before the next try. `details` keeps the first one's `file`, `line` and
 * `kind` at the top, as it was when only one was reported, and lists them all in `findings`; the
 * message and `agent_message` name every line, so a caller who reads only them still removes
 * every key (an AWS key id's secret half too).
 */
export function secretsFound(found: readonly SecretLocation[], cap: number): DeployRejected {
  // In path order, not archive order, so the same site gets the same answer however it was packed.
  const findings = [...found].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
  const first = findings[0]!;
  const details = { file: first.file, line: first.line, kind: first.kind, findings: findings.map(({ file, line, kind }) => ({ file, line, kind })) };
  const idAlone = awsKeyIdAlone(findings);
  if (findings.length === 1) {
    return reject(
      'blocked_secret',
      `File ${JSON.stringify(first.file)} line ${first.line}${first.compressed ? ' (once decompressed)' : ''} contains a secret key (${first.kind}); nothing was published.`,
      {
        agentMessage: `${first.file} line ${first.line}${first.compressed ? ' (once decompressed)' : ''} contains a secret key (${first.kind}). Anything published is public, so remove the key from ${first.file}${first.compressed ? "'s original file" : ''} at line ${first.line}${idAlone}, keep it in environment variables or server-side code instead, revoke it if it was ever public, and deploy again.`,
        details,
      },
    );
  }
  const files = new Set(findings.map((f) => f.file)).size;
  const count = findings.length >= cap ? `at least ${findings.length}` : String(findings.length);
  const listed = listFindings(findings);
  return reject('blocked_secret', `${count} secret keys found in ${files} ${files === 1 ? 'file' : 'files'}: ${listed}. Nothing was published.`, {
    agentMessage: `The site contains ${count} secret keys: ${listed}. Anything published is public, so remove every one of them${idAlone} (details.findings lists each file, line and kind${findings.length >= cap ? `; only the first ${cap} are listed, so check the rest of the site too` : ''}), keep them in environment variables or server-side code instead, revoke any that was ever public, and deploy again.`,
    details,
  });
}

/**
 * `a.js line 2 (aws-access-key-id), line 3 (aws-secret-access-key); b.txt line 1 once
 * decompressed (github-token)`: each file once, each line once with every kind found on it.
 */
function listFindings(findings: readonly SecretLocation[]): string {
  const byFile = new Map<string, Map<string, string[]>>();
  for (const f of findings) {
    const lines = byFile.get(f.file) ?? new Map<string, string[]>();
    byFile.set(f.file, lines);
    const where = `line ${f.line}${f.compressed ? ' once decompressed' : ''}`;
    const kinds = lines.get(where) ?? [];
    lines.set(where, kinds);
    if (!kinds.includes(f.kind)) kinds.push(f.kind);
  }
  return [...byFile].map(([file, lines]) => `${file} ${[...lines].map(([where, kinds]) => `${where} (${kinds.join(', ')})`).join(', ')}`).join('; ');
}

// An AWS key id is half a credential: when its secret key was not found beside it, the other half
// may be spelled in a way no rule knows, and it must go too.
function awsKeyIdAlone(findings: readonly SecretLocation[]): string {
  const kinds = new Set(findings.map((f) => f.kind));
  return kinds.has('aws-access-key-id') && !kinds.has('aws-secret-access-key')
    ? ' (and the secret access key that goes with an AWS key id, wherever it is)'
    : '';
}

// A compressed file is scanned as what it expands to, so that must fit the limits its
// uncompressed form would have to (see leak-guard.ts).
export function expandsTooLarge(file: string, maxFileBytes: number): DeployRejected {
  const limit = formatBytes(maxFileBytes);
  return reject('too_large', `File ${JSON.stringify(file)} expands to more than the ${limit} per-file limit when decompressed.`, {
    agentMessage: `${file} is compressed and expands to more than ${limit}, the largest file this plan can publish. Compressed files are checked for secret keys as what they expand to, so they must fit the limit once decompressed. Make it smaller or leave it out, then deploy again.`,
    details: { file, limit: maxFileBytes },
  });
}

export function expandedSiteTooLarge(file: string, maxExpandedBytes: number): DeployRejected {
  const limit = formatBytes(maxExpandedBytes);
  return reject('too_large', `The site's compressed files expand to more than ${limit} in total (exceeded at ${JSON.stringify(file)}).`, {
    agentMessage: `The compressed files in the site (.gz, .br and other gzip data) expand to more than ${limit} together, this deploy's limit. Compressed files are checked for secret keys as what they expand to. Leave some of them out (the service compresses text files itself) and deploy again.`,
    details: { file, limit: maxExpandedBytes },
  });
}

export function uncheckableCompressedFile(file: string, why: string): DeployRejected {
  return badRequest(`File ${JSON.stringify(file)} ${why}, so it cannot be checked for secret keys.`, {
    agentMessage: `${file} ${why}, so it cannot be checked for secret keys. Compress the original file again (for example with \`gzip -k\`) or leave it out, then deploy again.`,
    details: { file },
  });
}
