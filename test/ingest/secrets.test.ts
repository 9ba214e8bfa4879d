import { describe, expect, it } from 'vitest';
import { SECRET_RULES, isPlaceholder, looksLikeText, scanForSecrets } from '../../src/ingest/secrets.js';

// Fake keys are assembled at run time from a seeded generator, so this file holds no literal
// key-shaped strings for repository scanners (or this very leak guard) to trip on.
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const HEX = '0123456789abcdef';
const BASE64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}_-`;

let seed = 20240611;
function fake(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out += alphabet[(seed >>> 16) % alphabet.length];
  }
  return out;
}

const DASHES = '-'.repeat(5);
const pemBlock = (label: string, extra = ''): string =>
  `${DASHES}BEGIN ${label}${DASHES}\n${extra}${fake(64, BASE64)}\n${fake(64, BASE64)}\n${DASHES}END ${label}${DASHES}\n`;
const discordId = Buffer.from('804157329668713245').toString('base64');

const POSITIVES: [string, string, string][] = [
  ['an AWS access key id', `aws_access_key_id = ${'AKIA'}${fake(16, UPPER + DIGITS)}`, 'aws-access-key-id'],
  ['an AWS temporary key id', `"${'ASIA'}${fake(16, UPPER + DIGITS)}"`, 'aws-access-key-id'],
  ['an AWS secret key by its name', `AWS_SECRET_ACCESS_KEY=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in JS', `secretAccessKey: '${fake(40, BASE64)}',`, 'aws-secret-access-key'],
  ['a GitHub classic token', `token=${'ghp_'}${fake(36)}`, 'github-token'],
  ['a GitHub OAuth token', `${'gho_'}${fake(36)}`, 'github-token'],
  ['a GitHub app token', `${'ghs_'}${fake(36)}`, 'github-token'],
  ['a GitHub fine-grained token', `${'github_pat_'}${fake(22)}_${fake(59)}`, 'github-token'],
  ['a GitLab personal token', `${'glpat-'}${fake(20, URLSAFE)}`, 'gitlab-token'],
  ['a GitLab pipeline trigger token', `${'glptt-'}${fake(40, HEX)}`, 'gitlab-token'],
  ['a GitLab runner token', `${'GR1348941'}${fake(20, URLSAFE)}`, 'gitlab-token'],
  ['a Slack bot token', `${'xoxb-'}${fake(11, DIGITS)}-${fake(13, DIGITS)}-${fake(24)}`, 'slack-token'],
  ['a Slack user token', `${'xoxp-'}${fake(11, DIGITS)}-${fake(11, DIGITS)}-${fake(13, DIGITS)}-${fake(32, HEX)}`, 'slack-token'],
  ['a Slack app token', `${'xapp-'}1-A${fake(10, UPPER + DIGITS)}-${fake(13, DIGITS)}-${fake(64, HEX)}`, 'slack-token'],
  ['a Slack webhook', `https://${'hooks.slack.com'}/services/T${fake(8, UPPER + DIGITS)}/B${fake(8, UPPER + DIGITS)}/${fake(24)}`, 'slack-webhook-url'],
  ['a Stripe live secret key', `${'sk_live_'}51${fake(97)}`, 'stripe-live-secret-key'],
  ['a Stripe live restricted key', `${'rk_live_'}${fake(24)}`, 'stripe-live-restricted-key'],
  ['a webhook signing secret', `${'whsec_'}${fake(32)}`, 'webhook-signing-secret'],
  ['a legacy OpenAI key', `${'sk-'}${fake(20)}${'T3BlbkFJ'}${fake(20)}`, 'openai-api-key'],
  ['an OpenAI project key', `${'sk-proj-'}${fake(74, URLSAFE)}T3BlbkFJ${fake(74, URLSAFE)}`, 'openai-api-key'],
  ['an OpenAI service account key', `${'sk-svcacct-'}${fake(58, URLSAFE)}`, 'openai-api-key'],
  ['an Anthropic API key', `${'sk-ant-api03-'}${fake(93, URLSAFE)}AA`, 'anthropic-api-key'],
  ['an Anthropic admin key', `${'sk-ant-admin01-'}${fake(93, URLSAFE)}AA`, 'anthropic-api-key'],
  ['an xAI key', `${'xai-'}${fake(80)}`, 'xai-api-key'],
  ['a Groq key', `${'gsk_'}${fake(52)}`, 'groq-api-key'],
  ['a Perplexity key', `${'pplx-'}${fake(48)}`, 'perplexity-api-key'],
  ['a Replicate token', `${'r8_'}${fake(37)}`, 'replicate-api-token'],
  ['a Hugging Face token', `${'hf_'}${fake(34, UPPER + LOWER)}`, 'huggingface-token'],
  ['a Hugging Face org token', `${'api_org_'}${fake(34, UPPER + LOWER)}`, 'huggingface-token'],
  ['an npm token', `//registry.npmjs.org/:_authToken=${'npm_'}${fake(36)}`, 'npm-token'],
  ['a PyPI token', `password = ${'pypi-AgEIcHlwaS5vcmc'}${fake(70, URLSAFE)}`, 'pypi-token'],
  ['a SendGrid key', `${'SG.'}${fake(22, URLSAFE)}.${fake(43, URLSAFE)}`, 'sendgrid-api-key'],
  ['a Twilio API key', `${'SK'}${fake(32, HEX)}`, 'twilio-api-key'],
  ['a Mailgun key', `api: "${'key-'}${fake(32, HEX)}"`, 'mailgun-api-key'],
  ['a newer Mailgun key', `MAILGUN_API_KEY=${fake(32, HEX)}-${fake(8, HEX)}-${fake(8, HEX)}`, 'mailgun-api-key'],
  ['a Mailchimp key', `${fake(32, HEX)}${'-us'}21`, 'mailchimp-api-key'],
  ['a Discord bot token', `Bot ${discordId}.${fake(6, URLSAFE)}.${fake(38, URLSAFE)}`, 'discord-bot-token'],
  ['a Discord webhook', `https://${'discord.com/api/webhooks'}/${fake(18, DIGITS)}/${fake(68, URLSAFE)}`, 'discord-webhook-url'],
  ['a Google service account', `{"type": "service_account", ${'"private_key"'}: "${DASHES}BEGIN PRIVATE KEY${DASHES}\\n${fake(64, BASE64)}\\n"}`, 'gcp-service-account-key'],
  ['a Google OAuth client secret', `${'GOCSPX-'}${fake(28, URLSAFE)}`, 'google-oauth-client-secret'],
  ['a PKCS#8 private key', pemBlock('PRIVATE KEY'), 'private-key'],
  ['an RSA private key', pemBlock('RSA PRIVATE KEY'), 'private-key'],
  ['an EC private key', pemBlock('EC PRIVATE KEY'), 'private-key'],
  ['a DSA private key', pemBlock('DSA PRIVATE KEY'), 'private-key'],
  ['an OpenSSH private key', pemBlock('OPENSSH PRIVATE KEY'), 'private-key'],
  ['an encrypted private key', pemBlock('ENCRYPTED PRIVATE KEY'), 'private-key'],
  ['a legacy encrypted RSA key', pemBlock('RSA PRIVATE KEY', `Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,${fake(32, HEX)}\n\n`), 'private-key'],
  ['a PGP private key', pemBlock('PGP PRIVATE KEY BLOCK', 'Version: GnuPG v2\n\n'), 'private-key'],
  ['a PuTTY key', `${'PuTTY-User-Key-File-'}3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\n${fake(64, BASE64)}\n`, 'private-key'],
  ['an age key', `${'AGE-SECRET-KEY-1'}${fake(58, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L')}`, 'age-secret-key'],
  ['an Azure storage connection string', `DefaultEndpointsProtocol=https;AccountName=x;${'AccountKey='}${fake(86, BASE64)}==;`, 'azure-storage-key'],
  ['an Azure Service Bus key', `Endpoint=sb://x.servicebus.windows.net/;${'SharedAccessKey='}${fake(43, BASE64)}=`, 'azure-shared-access-key'],
  ['a Shopify token', `${'shpat_'}${fake(32, HEX)}`, 'shopify-token'],
  ['a DigitalOcean token', `${'dop_v1_'}${fake(64, HEX)}`, 'digitalocean-token'],
  ['a Databricks token', `${'dapi'}${fake(32, HEX)}`, 'databricks-token'],
  ['a Square access token', `${'EAAA'}${fake(60, URLSAFE)}`, 'square-token'],
  ['a Square OAuth secret', `${'sq0csp-'}${fake(43, URLSAFE)}`, 'square-token'],
  ['a Heroku key', `${'HRKU-AA'}${fake(58, URLSAFE)}`, 'heroku-api-key'],
  ['a Postman key', `${'PMAK-'}${fake(24, HEX)}-${fake(34, HEX)}`, 'postman-api-key'],
  ['a Doppler token', `${'dp.pt.'}${fake(43)}`, 'doppler-token'],
  ['a Linear key', `${'lin_api_'}${fake(40)}`, 'linear-api-key'],
  ['a Vault token', `${'hvs.'}${fake(95, URLSAFE)}`, 'vault-token'],
  ['an Atlassian token', `${'ATATT3'}${fake(186, URLSAFE)}`, 'atlassian-api-token'],
  ['a Sentry user token', `${'sntryu_'}${fake(64, HEX)}`, 'sentry-token'],
  ['a Sentry org token', `${'sntrys_eyJ'}${fake(100, BASE64)}`, 'sentry-token'],
  ['a Grafana service account token', `${'glsa_'}${fake(32)}_${fake(8, HEX)}`, 'grafana-token'],
  ['a Supabase token', `${'sbp_'}${fake(40, HEX)}`, 'supabase-token'],
  ['a Cloudflare origin CA key', `${'v1.0-'}${fake(24, HEX)}-${fake(146, HEX)}`, 'cloudflare-origin-ca-key'],
  ['an Alibaba key id', `${'LTAI'}${fake(20)}`, 'alibaba-access-key-id'],
  ['a Mapbox secret token', `${'sk.eyJ'}${fake(60, URLSAFE)}.${fake(22, URLSAFE)}`, 'mapbox-secret-token'],
  ['a Notion token', `${'ntn_'}${fake(11, DIGITS)}${fake(35)}`, 'notion-token'],
  ['an Airtable token', `${'pat'}${fake(14)}.${fake(64, HEX)}`, 'airtable-token'],
  ['a Braintree token', `${'access_token$production$'}${fake(16, LOWER + DIGITS)}$${fake(32, HEX)}`, 'braintree-access-token'],
];

const NEGATIVES: [string, string][] = [
  ['a Stripe placeholder in x', `${'sk_live_'}${'x'.repeat(24)}`],
  ['a Stripe placeholder in X', `${'sk_live_'}${'X'.repeat(99)}`],
  ['a half-masked Stripe key', `${'sk_live_'}51Hab${'*'.repeat(20)}`],
  ['a Stripe key masked with x', `${'sk_live_'}${fake(12)}${'x'.repeat(12)}`],
  ['an AWS placeholder', `${'AKIA'}${'X'.repeat(16)}`],
  ['the AWS documentation key id', `${'AKIA'}IOSFODNN7${'EXAMPLE'}`],
  ['the AWS documentation secret', `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLE'}KEY`],
  ['a GitHub placeholder', `${'ghp_'}${'x'.repeat(36)}`],
  ['a GitHub counting placeholder', `${'ghp_'}1234567890${LOWER}`],
  ['a Slack documentation webhook', `https://${'hooks.slack.com'}/services/T00000000/B00000000/${'X'.repeat(24)}`],
  ['a Slack placeholder', `${'xoxb-'}your-token-here`],
  ['an OpenAI placeholder', `${'sk-proj-'}your-key-goes-in-this-place-${fake(20)}`],
  ['an angle-bracket placeholder', 'API_KEY=<YOUR_KEY>'],
  ['a dashed placeholder', 'apiKey: "your-api-key-here"'],
  ['a SHA-256 hash', fake(64, HEX)],
  ['a SHA-1 hash', `commit ${fake(40, HEX)}`],
  ['an MD5 hash', `md5: ${fake(32, HEX)}`],
  ['a UUID', `${fake(8, HEX)}-${fake(4, HEX)}-4${fake(3, HEX)}-a${fake(3, HEX)}-${fake(12, HEX)}`],
  ['a base64 blob', `data:image/png;base64,${fake(4000, BASE64)}==`],
  ['a base64url blob', fake(4000, URLSAFE)],
  ['the word password in prose', 'Choose a strong password and never share your password.'],
  ['a config password', 'password: "hunter2"'],
  ['a Stripe publishable key', `${'pk_live_'}${fake(99)}`],
  ['a Stripe test publishable key', `${'pk_test_'}${fake(99)}`],
  ['a Stripe test secret key', `${'sk_test_'}${fake(99)}`],
  ['a Google browser key', `apiKey: "${'AIza'}${fake(35, URLSAFE)}"`],
  ['a Twilio account SID', `${'AC'}${fake(32, HEX)}`],
  ['a cache key with a hash', `cache-${'key-'}${fake(32, HEX)}`],
  ['a private key header in a tutorial', `${DASHES}BEGIN RSA PRIVATE KEY${DASHES}\n...\n${DASHES}END RSA PRIVATE KEY${DASHES}`],
  ['a private key placeholder', `${DASHES}BEGIN PRIVATE KEY${DASHES}\n<your private key here>\n${DASHES}END PRIVATE KEY${DASHES}`],
  ['a public key', pemBlock('PUBLIC KEY')],
  ['a certificate', pemBlock('CERTIFICATE')],
  ['an SSH public key', `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${fake(43, BASE64)} me@host`],
  ['a JWT', `eyJhbGciOiJIUzI1NiJ9.${fake(60, URLSAFE)}.${fake(43, URLSAFE)}`],
  ['the Azurite development key', `${'AccountKey='}Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==`],
  ['a long dotted identifier', 'NotificationServiceManager.create.initializeEverythingForTheApp()'],
  ['a GitHub token prefix inside a word', `xghp_${fake(36)}`],
  ['a short GitHub token', `${'ghp_'}${fake(20)}`],
  ['an empty text', ''],
];

describe('scanForSecrets', () => {
  it('has a positive example for every rule kind', () => {
    const tested = new Set(POSITIVES.map(([, , kind]) => kind));
    expect([...new Set(SECRET_RULES.map((rule) => rule.kind))].filter((kind) => !tested.has(kind))).toEqual([]);
  });

  it.each(POSITIVES)('finds %s', (_name, secret, kind) => {
    expect(scanForSecrets(`<p>config</p>\n${secret}\n`)).toEqual({ line: 2, kind });
  });

  it.each(NEGATIVES)('passes %s', (_name, text) => {
    expect(scanForSecrets(text)).toBeUndefined();
  });

  it.each(POSITIVES)('never returns the secret itself (%s)', (_name, secret) => {
    const finding = scanForSecrets(secret);
    expect(Object.keys(finding ?? {}).sort()).toEqual(['kind', 'line']);
    expect(JSON.stringify(finding)).not.toContain(secret.slice(-12));
  });

  const npmToken = `${'npm_'}${fake(36)}`;
  it.each([
    ['LF', `one\ntwo\n${npmToken}\n`, 3],
    ['CRLF', `one\r\ntwo\r\n${npmToken}\r\n`, 3],
    ['lone CR', `one\rtwo\r${npmToken}`, 3],
    ['mixed endings', `a\r\nb\nc\rd\n${npmToken}`, 5],
    ['the first line', `${npmToken} trailing`, 1],
    ['blank lines', `\n\n\n\nx = "${npmToken}"`, 5],
    ['a key in the middle of a long line', `${'word '.repeat(1000)}${npmToken}${' word'.repeat(1000)}`, 1],
  ])('counts lines with %s', (_name, text, line) => {
    expect(scanForSecrets(text)).toEqual({ line, kind: 'npm-token' });
  });

  it('reports the earliest finding, whatever the rule order', () => {
    const text = `a\n${'ghp_'}${fake(36)}\nb\n${'AKIA'}${fake(16, UPPER)}\n`;
    expect(scanForSecrets(text)).toEqual({ line: 2, kind: 'github-token' });
  });

  it('finds a real key after a placeholder of the same kind', () => {
    const text = `${'sk_live_'}${'x'.repeat(24)}\n${'sk_live_'}${fake(30)}`;
    expect(scanForSecrets(text)).toEqual({ line: 2, kind: 'stripe-live-secret-key' });
  });

  it.each([
    ['a megabyte of one letter', 'a'.repeat(1 << 20)],
    ['a megabyte of hex', HEX.repeat(1 << 16)],
    ['a megabyte of base64', fake(1 << 20, BASE64)],
    ['repeated Stripe prefixes', 'sk_live_'.repeat(1 << 17)],
    ['repeated Slack prefixes', 'xoxb-1-'.repeat(1 << 17)],
    ['repeated GitLab prefixes', 'glpat-'.repeat(1 << 17)],
    ['repeated OpenAI prefixes', 'sk-proj-'.repeat(1 << 17)],
    ['repeated key headers', '-----BEGIN '.repeat(1 << 16)],
    ['repeated key names', 'aws_secret_access_key='.repeat(1 << 15)],
    ['a Mailgun keyword and hex', `mailgun ${'0123456789abcdef-'.repeat(1 << 16)}`],
    ['dotted words', 'Maaaaaaaaaaaaaaaaaaaaaaaaa.'.repeat(1 << 15)],
    ['one long word after a prefix', `${'ghp_'}${'a'.repeat(1 << 20)}`],
    ['a megabyte of newlines', '\n'.repeat(1 << 20)],
    ['a key header with a long label', `-----BEGIN ${'A'.repeat(1 << 20)}`],
    ['repeated mailgun keywords', 'mailgun '.repeat(1 << 17)],
    ['repeated Discord-like words', `M${'a'.repeat(24)}.abcdef.`.repeat(1 << 15)],
    ['a megabyte of uppercase', fake(1 << 20, UPPER + DIGITS)],
    ['repeated webhook paths', 'hooks.slack.com/services/T'.repeat(1 << 15)],
  ])('scans %s in linear time', (_name, text) => {
    const started = performance.now();
    scanForSecrets(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('isPlaceholder', () => {
  it.each([
    ['x'.repeat(24), true],
    ['X'.repeat(16), true],
    ['0'.repeat(32), true],
    ['abababababababababab', true],
    [`${fake(10)}${'*'.repeat(10)}`, true],
    ['IOSFODNN7EXAMPLE', true],
    ['your-api-key-here-please', true],
    ['1234567890abcdefghijklmnopqrstuvwxyz', true],
    [`${fake(20)}xxxxx${fake(20)}`, true],
    [`${fake(20)}Your${fake(20)}`, false],
    ['glpat-'.repeat(10), true],
    ['a1B2c3D4e5F6g7H8'.repeat(3), true],
    [fake(36), false],
    [fake(32, HEX), false],
    [fake(16, UPPER + DIGITS), false],
  ])('judges %j as placeholder: %s', (secret, expected) => {
    expect(isPlaceholder(secret)).toBe(expected);
  });
});

describe('looksLikeText', () => {
  const encode = (value: string): Uint8Array => new TextEncoder().encode(value);
  it.each([
    ['ASCII', encode('<!doctype html><p>hi</p>\n'), true],
    ['UTF-8 with accents and emoji', encode('café 日本 😀\r\n'.repeat(100)), true],
    ['an empty file', new Uint8Array(), true],
    ['tabs and ANSI colours', encode('\tx\u001b[31mred\u001b[0m\f'), true],
    ['Latin-1 text', Uint8Array.from([...encode('caf'), 0xe9, ...encode(' cr'), 0xe8, ...encode('me br'), 0xfb, ...encode('l'), 0xe9, 0x2e]), true],
    ['a NUL byte', Uint8Array.from([0x61, 0x00, 0x62]), false],
    ['a PNG header', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), false],
    ['UTF-16 text', Uint8Array.from([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]), false],
    ['random high bytes', Uint8Array.from({ length: 4096 }, (_, i) => 0x80 + ((i * 37) % 0x7f)), false],
    ['control characters', Uint8Array.from({ length: 100 }, (_, i) => 1 + (i % 7)), false],
    ['a NUL after 8 KB', Uint8Array.from([...encode('a'.repeat(8192)), 0]), true],
    ['a character cut at 8 KB', Uint8Array.from([...encode('a'.repeat(8191)), ...encode('é')]), true],
  ])('judges %s as text: %s', (_name, bytes, expected) => {
    expect(looksLikeText(bytes)).toBe(expected);
  });
});
