// SPEC 4.1 rule 6, the leak guard. Rules follow gitleaks' default config in spirit, but only for
// keys with a distinctive format (a vendor prefix, fixed length, fixed alphabet): a deploy is
// refused on a hit, so a false alarm costs a user their publish. For the same reason there is no
// generic "password = ..." or high-entropy rule, and keys that are public by design pass: Stripe
// publishable `pk_…`, Google/Firebase browser keys `AIza…`. Stripe `sk_test_` keys pass too: they
// cannot move money, and tutorials and demo sites show them on purpose.
//
// Every quantifier is bounded and every pattern starts with a literal or a single character
// class, so the work per start position is bounded and a scan is linear in the text length.
// Wide length ranges (`{20,300}`) have no end boundary: the greedy run then matches at once
// instead of backtracking through the range when a hostile run is longer than the maximum, and
// a key-shaped string longer than the format allows is still worth refusing.
// Findings carry only a line and a rule id: the secret itself never leaves the scanner.
//
// This file is the rule table; secrets.ts is the scanner that runs it.

export interface SecretRule {
  kind: string;
  // Group 1, when present, is the random part of the key, judged by `isPlaceholder`. Flags may
  // only be `i`; the scanner compiles its own sticky and global copies.
  pattern: RegExp;
  // Extra check on a match; `end` is the index just past it.
  verify?: (text: string, end: number, match: RegExpExecArray) => boolean;
  // Words of which every match holds one, starting `keywordAt` characters after the match start
  // (0 when absent); case-insensitive under the `i` flag. Each is at least three characters of
  // literals and `[...]` sets (ranges allowed), and may be looser than the pattern. The scanner
  // looks for them in one fast pass and runs the pattern only where one occurs; a rule without
  // keywords is scanned by its own regex.
  keywords?: readonly string[];
  keywordAt?: number;
}

export interface SecretFinding {
  line: number;
  kind: string;
}

// Token boundaries: a prefix must not continue a longer word, and the key must not run on.
const B = '(?<![A-Za-z0-9_])';
const E = '(?![A-Za-z0-9_])';
const E_DASH = '(?![A-Za-z0-9_-])';

// Most rules start with their vendor prefix, which is then their one keyword.
function rule(kind: string, keywords: string | readonly string[], source: string, more: Partial<SecretRule> = {}): SecretRule {
  return { kind, pattern: new RegExp(source), keywords: typeof keywords === 'string' ? [keywords] : keywords, ...more };
}

// A real PEM/PGP/PPK key has a long base64 body right after its header; a tutorial showing
// `-----BEGIN RSA PRIVATE KEY-----\n...` or `<your key here>` does not.
// The body is looked for up to the next `-----` (the END line), within 600 characters.
const KEY_BODY = /[A-Za-z0-9+/]{40,}/;
function hasKeyBody(text: string, end: number): boolean {
  const endLine = text.indexOf('-----', end);
  const body = KEY_BODY.exec(text.slice(end, Math.min(end + 600, endLine === -1 ? Infinity : endLine)));
  return body !== null && !isPlaceholder(body[0]);
}

// A Discord bot token starts with the bot's numeric user id in base64.
function isDiscordToken(_text: string, _end: number, match: RegExpExecArray): boolean {
  const id = Buffer.from(match[1]!.split('.')[0]!, 'base64').toString('latin1');
  return /^\d{17,20}$/.test(id);
}

// AWS secret access keys: how configs spell the name (`aws_secret_access_key`,
// `secretAccessKey`, `SecretAccessKey`, `AWS_SECRET_ACCESS_KEY`, `aws.secretKey`,
// `secret-access-key`, Spring's `aws.credentials.secret-key`), how they assign it (`=`, `:`, `:=`, `=>`, a tag's `>`, a space as in a
// Dockerfile's `ENV` or `aws configure set`, or a `{"name": …, "value": …}` pair), and quotes of
// every kind around name and value (`"`, `'`, a backtick, `\"` in escaped JSON). The value is
// exactly 40 base64 characters.
const SEP = '[._-]?';
const QUOTE = '(?:\\\\?["\'`])?';
const NAME_VALUE_PAIR = `(?:${QUOTE}\\s{0,8},?\\s{0,8}${QUOTE}value)?`;
const ASSIGNED = `${QUOTE}${NAME_VALUE_PAIR}${QUOTE}(?:[ \\t]{0,16}(?::=|=>|[:=>])\\s{0,16}|[ \\t]{1,16})${QUOTE}`;
const AWS_SECRET = '([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])';

// A secret key is random base64: it has capitals and small letters. A 40-digit hex string (a
// SHA-1) or a word run together is something else.
function isAwsSecret(_text: string, _end: number, match: RegExpExecArray): boolean {
  return /[A-Z]/.test(match[1]!) && /[a-z]/.test(match[1]!);
}

const AWS_KEY_ID = /(?<![A-Za-z0-9_])(?:AKIA|ASIA|ABIA|ACCA)([A-Z0-9]{16})(?![A-Za-z0-9_])/g;
// Within this many characters before or after: the pair as configs write it, a few lines apart.
const KEY_ID_REACH = 400;
function hasAwsKeyIdNear(text: string, start: number, end: number): boolean {
  const near = text.slice(Math.max(0, start - KEY_ID_REACH), end + KEY_ID_REACH);
  for (const match of near.matchAll(AWS_KEY_ID)) if (!isPlaceholder(match[1]!)) return true;
  return false;
}

// The Azurite storage emulator's account key is published in Microsoft's documentation.
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const GITLAB_PREFIXES = ['glpat-', 'glptt-', 'gldt-', 'glrt-', 'glft-', 'glsoat-', 'glcbt-', 'glimt-', 'glagent-', 'gloas-'];

export const SECRET_RULES: readonly SecretRule[] = [
  rule('aws-access-key-id', ['AKIA', 'ASIA', 'ABIA', 'ACCA'], `${B}(?:AKIA|ASIA|ABIA|ACCA)([A-Z0-9]{16})${E}`),
  // A bare 40-character base64 string is far too common; only trust it next to its AWS name.
  {
    kind: 'aws-secret-access-key',
    pattern: new RegExp(`(?:aws${SEP}(?:credentials${SEP})?secret(?:${SEP}(?:access${SEP})?key)?|secret${SEP}access${SEP}key)${ASSIGNED}${AWS_SECRET}`, 'i'),
    keywords: ['aws', 'secret'],
    verify: isAwsSecret,
  },
  // The pair passed without names: `new BasicAWSCredentials("AKIA…", "…")`, `Session('AKIA…', '…')`,
  // `s3://AKIA…:…@bucket`. Found at the id, so the id's line is named for the secret key too.
  rule(
    'aws-secret-access-key',
    ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    `${B}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}["'\`]?[ \t]{0,5}[,:][ \t]{0,5}["'\`]?${AWS_SECRET}`,
    { verify: isAwsSecret },
  ),
  // `secret_key = "…"` (Terraform, s3cmd, MinIO) or `secret: …` is AWS's only beside an AWS key id.
  {
    kind: 'aws-secret-access-key',
    pattern: new RegExp(`secret(?:${SEP}key)?${ASSIGNED}${AWS_SECRET}`, 'i'),
    keywords: ['secret'],
    verify: (text, end, match) => isAwsSecret(text, end, match) && hasAwsKeyIdNear(text, match.index, end),
  },
  rule('github-token', 'gh[pousr]_', `${B}gh[pousr]_([A-Za-z0-9]{36,251})${E}`),
  rule('github-token', 'github_pat_', `${B}github_pat_([A-Za-z0-9_]{70,120})${E}`),
  rule('gitlab-token', GITLAB_PREFIXES, `${B}(?:${GITLAB_PREFIXES.map((prefix) => prefix.slice(0, -1)).join('|')})-([A-Za-z0-9_-]{20,300})`),
  rule('gitlab-token', 'GR1348941', `${B}GR1348941([A-Za-z0-9_-]{20,300})`),
  rule('slack-token', 'xox[abeoprs]-', `${B}xox[abeoprs]-([0-9]{1,15}-[A-Za-z0-9-]{10,250})`),
  rule('slack-token', 'xapp-[0-9]-', `${B}xapp-([0-9]-[A-Z0-9]{6,20}-[0-9]{6,20}-[A-Za-z0-9]{20,100})${E}`),
  rule('slack-webhook-url', 'hooks.slack.com/', String.raw`hooks\.slack\.com/(?:services|workflows|triggers)/(T[A-Z0-9]{6,12}/[A-Za-z0-9/]{20,120})`),
  rule('stripe-live-secret-key', 'sk_live_', `${B}sk_live_([A-Za-z0-9]{24,247})${E}`),
  rule('stripe-live-restricted-key', 'rk_live_', `${B}rk_live_([A-Za-z0-9]{24,247})${E}`),
  rule('webhook-signing-secret', 'whsec_', `${B}whsec_([A-Za-z0-9+/=]{32,100})`),
  rule('openai-api-key', 'T3BlbkFJ', `${B}sk-([A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})${E}`, { keywordAt: 23 }),
  rule('openai-api-key', ['sk-proj-', 'sk-svcacct-', 'sk-admin-'], `${B}sk-(?:proj|svcacct|admin)-([A-Za-z0-9_-]{40,300})`),
  rule('anthropic-api-key', 'sk-ant-', `${B}sk-ant-(?:api|admin|oat|ort)[0-9]{2}-([A-Za-z0-9_-]{32,200})`),
  rule('xai-api-key', 'xai-', `${B}xai-([A-Za-z0-9]{80})${E}`),
  rule('groq-api-key', 'gsk_', `${B}gsk_([A-Za-z0-9]{52})${E}`),
  rule('perplexity-api-key', 'pplx-', `${B}pplx-([A-Za-z0-9]{48})${E}`),
  rule('replicate-api-token', 'r8_', `${B}r8_([A-Za-z0-9]{37})${E}`),
  rule('huggingface-token', 'hf_', `${B}hf_([A-Za-z]{34})${E}`),
  rule('huggingface-token', 'api_org_', `${B}api_org_([A-Za-z]{34})${E}`),
  rule('npm-token', 'npm_', `${B}npm_([A-Za-z0-9]{36})${E}`),
  rule('pypi-token', 'pypi-AgEIcHlwaS5vcmc', `${B}pypi-AgEIcHlwaS5vcmc([A-Za-z0-9_-]{50,1000})`),
  rule('sendgrid-api-key', 'SG.', String.raw`${B}SG\.([A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})${E_DASH}`),
  rule('twilio-api-key', 'SK[0-9a-fA-F]', `${B}SK([0-9a-fA-F]{32})${E}`),
  // `-` before `key-` is excluded so that `cache-key-<md5>` does not count.
  rule('mailgun-api-key', 'key-', `(?<![A-Za-z0-9_-])key-([0-9a-f]{32})${E}`),
  {
    kind: 'mailgun-api-key',
    pattern: /mailgun[^\r\n]{0,40}?(?<![0-9a-f])([0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?![0-9a-f])/i,
    keywords: ['mailgun'],
  },
  rule('mailchimp-api-key', '-us[0-9]', `${B}([0-9a-f]{32})-us[0-9]{1,2}${E}`, { keywordAt: 32 }),
  // No fixed text at a fixed distance from the start: scanned by its own regex.
  {
    kind: 'discord-bot-token',
    pattern: /(?<![A-Za-z0-9_.-])([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_.-])/,
    verify: isDiscordToken,
  },
  rule('discord-webhook-url', 'discord', String.raw`discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/([0-9]{17,20}/[A-Za-z0-9_-]{60,68})${E_DASH}`),
  rule('gcp-service-account-key', '"private_key"', String.raw`"private_key"\s{0,5}:\s{0,5}"-----BEGIN[ A-Z]{0,40}PRIVATE KEY-----`, { verify: hasKeyBody }),
  rule('google-oauth-client-secret', 'GOCSPX-', `${B}GOCSPX-([A-Za-z0-9_-]{28})${E_DASH}`),
  rule('private-key', '----', '-{4,5} ?BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)? ?-{4,5}', { verify: hasKeyBody }),
  rule('private-key', 'PuTTY-User-Key-File-', 'PuTTY-User-Key-File-[0-9]: ', { verify: hasKeyBody }),
  rule('age-secret-key', 'AGE-SECRET-KEY-1', `AGE-SECRET-KEY-1([QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})${E}`),
  rule('azure-storage-key', 'AccountKey=', String.raw`AccountKey=([A-Za-z0-9+/]{86}==)`, {
    verify: (_text, _end, match) => match[1] !== AZURITE_KEY,
  }),
  rule('azure-shared-access-key', 'SharedAccessKey=', 'SharedAccessKey=([A-Za-z0-9+/]{43}=)'),
  rule('shopify-token', 'shp[acps][ast]_', `${B}shp(?:at|ca|pa|ss)_([a-fA-F0-9]{32})${E}`),
  rule('digitalocean-token', 'do[opr]_v1_', `${B}do[opr]_v1_([a-f0-9]{64})${E}`),
  rule('databricks-token', 'dapi[0-9a-f]', `${B}dapi([a-f0-9]{32})(?:-[0-9])?${E}`),
  rule('square-token', 'EAAA', `(?<![A-Za-z0-9_+/=-])EAAA([A-Za-z0-9_-]{60})(?![A-Za-z0-9_+/=-])`),
  rule('square-token', 'sq0[ac][ts]p-', `${B}sq0(?:atp|csp)-([A-Za-z0-9_-]{22,43})${E_DASH}`),
  rule('heroku-api-key', 'HRKU-AA', `${B}HRKU-AA([A-Za-z0-9_-]{58})${E_DASH}`),
  rule('postman-api-key', 'PMAK-', `${B}PMAK-([a-fA-F0-9]{24}-[a-fA-F0-9]{34})${E}`),
  rule('doppler-token', 'dp.[acps]', String.raw`${B}dp\.(?:pt|st|sa|ct|scim|audit)\.([A-Za-z0-9]{40,44})${E}`),
  rule('linear-api-key', 'lin_api_', `${B}lin_api_([A-Za-z0-9]{40})${E}`),
  rule('vault-token', 'hv[sb].', String.raw`${B}hv[sb]\.([A-Za-z0-9_-]{90,250})`),
  rule('atlassian-api-token', 'ATATT3', `${B}ATATT3([A-Za-z0-9_=-]{150,250})`),
  rule('sentry-token', 'sntryu_', `${B}sntryu_([a-f0-9]{64})${E}`),
  rule('sentry-token', 'sntrys_eyJ', `${B}sntrys_(eyJ[A-Za-z0-9_+/=-]{60,500})`),
  rule('grafana-token', 'glsa_', `${B}glsa_([A-Za-z0-9]{32}_[A-Fa-f0-9]{8})${E}`),
  rule('grafana-token', 'glc_eyJ', `${B}glc_(eyJ[A-Za-z0-9_+/=-]{60,500})`),
  rule('supabase-token', 'sbp_', `${B}sbp_([a-f0-9]{40})${E}`),
  rule('supabase-token', 'sb_secret_', `${B}sb_secret_([A-Za-z0-9_-]{20,80})`),
  rule('cloudflare-origin-ca-key', 'v1.0-', String.raw`${B}v1\.0-([a-f0-9]{24}-[a-f0-9]{146})${E}`),
  rule('alibaba-access-key-id', 'LTAI', `${B}LTAI([A-Za-z0-9]{20})${E}`),
  rule('mapbox-secret-token', 'sk.eyJ', String.raw`${B}sk\.(eyJ[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,100})`),
  rule('notion-token', 'ntn_[0-9]', `${B}ntn_([0-9]{11}[A-Za-z0-9]{35})${E}`),
  rule('notion-token', 'secret_', `${B}secret_([A-Za-z0-9]{43})${E}`),
  rule('airtable-token', 'pat', String.raw`${B}pat([A-Za-z0-9]{14}\.[a-f0-9]{64})${E}`),
  rule('braintree-access-token', 'access_token$production$', String.raw`access_token\$production\$([0-9a-z]{16}\$[0-9a-f]{32})`),
];

const MASK_CHARS = new Set(['x', 'X', '*', '.', '#', '0']);
// Case-sensitive and at least five characters long, so that a random key contains one by chance
// with a probability under one in a million even at 160 characters.
const PLACEHOLDER_WORDS = /example|EXAMPLE|placeholder|PLACEHOLDER|redacted|REDACTED|dummy|DUMMY|your[_-]|YOUR[_-]|xxxxx|XXXXX|\*\*\*/;

// Documentation and templates are full of keys that look right but are not: `sk_live_xxxx…`,
// `AKIAIOSFODNN7EXAMPLE`, `ghp_1234567890abcdef…`. A real key is random, so it has many distinct
// characters, no mask characters filling half of it, no long run like `12345678` or `abcdefgh`,
// and no short block repeated throughout.
export function isPlaceholder(secret: string): boolean {
  const distinct = new Set(secret).size;
  if (distinct < Math.min(6, Math.ceil(secret.length / 3))) return true;
  let masked = 0;
  for (const char of secret) if (MASK_CHARS.has(char)) masked++;
  if (masked * 2 >= secret.length) return true;
  if (PLACEHOLDER_WORDS.test(secret)) return true;
  let run = 1;
  for (let i = 1; i < secret.length; i++) {
    run = secret.charCodeAt(i) === secret.charCodeAt(i - 1) + 1 ? run + 1 : 1;
    if (run >= 8) return true;
  }
  return isPeriodic(secret);
}

// `abcabcabc…` or a prefix typed over and over: a short block repeated across the whole string.
function isPeriodic(secret: string): boolean {
  for (let period = 1; period <= 16 && period * 2 <= secret.length; period++) {
    let i = period;
    while (i < secret.length && secret[i] === secret[i - period]) i++;
    if (i === secret.length) return true;
  }
  return false;
}

export function isAccepted(rule: SecretRule, text: string, match: RegExpExecArray): boolean {
  const secret = match[1];
  if (secret !== undefined && isPlaceholder(secret)) return false;
  return rule.verify === undefined || rule.verify(text, match.index + match[0].length, match);
}
