import { describe, expect, it } from 'vitest';
import { SECRET_RULES, firstMatchOf, isPlaceholder, scanAllSecrets, scanForSecrets } from '../../src/ingest/secrets.js';

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
  // The secret key as configs spell it: every name, assignment and quote.
  ['an AWS secret key in JS, double-quoted', `  secretAccessKey: "${fake(40, BASE64)}",`, 'aws-secret-access-key'],
  ['an AWS secret key in a template literal', `const creds = { secretAccessKey: \`${fake(40, BASE64)}\` };`, 'aws-secret-access-key'],
  ['an AWS secret key in YAML', `  secret_access_key: ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in YAML, quoted', `aws_secret_access_key: '${fake(40, BASE64)}'`, 'aws-secret-access-key'],
  ['an AWS secret key in .env, quoted', `AWS_SECRET_ACCESS_KEY="${fake(40, BASE64)}"`, 'aws-secret-access-key'],
  ['an AWS secret key exported in a shell script', `export AWS_SECRET_ACCESS_KEY=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in PowerShell', `$env:AWS_SECRET_ACCESS_KEY = "${fake(40, BASE64)}"`, 'aws-secret-access-key'],
  ['an AWS secret key in INI (credentials file)', `aws_secret_access_key=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in JSON (PascalCase, as STS answers)', `"SecretAccessKey": "${fake(40, BASE64)}",`, 'aws-secret-access-key'],
  ['an AWS secret key in TOML', `secret_access_key = "${fake(40, BASE64)}"`, 'aws-secret-access-key'],
  ['an AWS secret key aligned with spaces', `aws_secret_access_key         =     "${fake(40, BASE64)}"`, 'aws-secret-access-key'],
  ['an AWS secret key aligned with a tab (YAML)', `secret_access_key:\t${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key as aws.secretKey', `aws.secretKey=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key as awsSecretKey', `awsSecretKey: '${fake(40, BASE64)}'`, 'aws-secret-access-key'],
  ['an AWS secret key as AWS_SECRET_KEY', `AWS_SECRET_KEY=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in kebab case', `secret-access-key: ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in Spring properties', `cloud.aws.credentials.secret-key=${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in a Dockerfile', `ENV AWS_SECRET_ACCESS_KEY ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key given to the AWS CLI', `aws configure set aws_secret_access_key ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in escaped JSON', `"{\\"secretAccessKey\\":\\"${fake(40, BASE64)}\\"}"`, 'aws-secret-access-key'],
  ['an AWS secret key in XML', `<SecretAccessKey>${fake(40, BASE64)}</SecretAccessKey>`, 'aws-secret-access-key'],
  ['an AWS secret key as a Kubernetes env entry', `- name: AWS_SECRET_ACCESS_KEY\n  value: ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key as an ECS env entry', `{"name": "AWS_SECRET_ACCESS_KEY", "value": "${fake(40, BASE64)}"}`, 'aws-secret-access-key'],
  // The common spellings of the name, each on its own.
  ['an AWS secret key in INI, unquoted and spaced', `aws_secret_access_key = ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  ['an AWS secret key in JSON (snake case)', `"aws_secret_access_key": "${fake(40, BASE64)}",`, 'aws-secret-access-key'],
  ['an AWS secret key as awsSecretAccessKey', `awsSecretAccessKey: '${fake(40, BASE64)}'`, 'aws-secret-access-key'],
  ['an AWS secret key in kebab case with its aws prefix', `aws-secret-access-key: ${fake(40, BASE64)}`, 'aws-secret-access-key'],
  [
    'a Terraform secret_key next to an AWS key id',
    `secret_key = "${fake(40, BASE64)}"\naccess_key = "${'AKIA'}${fake(16, UPPER + DIGITS)}"`,
    'aws-secret-access-key',
  ],
  [
    'a secretKey next to an AWS key id (MinIO client)',
    `{"secretKey": "${fake(40, BASE64)}", "accessKey": "${'AKIA'}${fake(16, UPPER + DIGITS)}"}`,
    'aws-secret-access-key',
  ],
  ['a secret next to an AWS key id (PHP)', `'secret' => '${fake(40, BASE64)}', 'key' => '${'AKIA'}${fake(16, UPPER + DIGITS)}',`, 'aws-secret-access-key'],
  // The pair passed without names is found at the id: the first finding there is the id's.
  ['an AWS key pair as two arguments', `new BasicAWSCredentials("${'AKIA'}${fake(16, UPPER + DIGITS)}", "${fake(40, BASE64)}")`, 'aws-access-key-id'],
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
  ['a Mailchimp key in a one-digit data centre', `${fake(32, HEX)}${'-us'}7`, 'mailchimp-api-key'],
  ['a Discord bot token', `Bot ${discordId}.${fake(6, URLSAFE)}.${fake(38, URLSAFE)}`, 'discord-bot-token'],
  ['a Discord webhook', `https://${'discord.com/api/webhooks'}/${fake(18, DIGITS)}/${fake(68, URLSAFE)}`, 'discord-webhook-url'],
  [
    'a Google service account',
    `{"type": "service_account", ${'"private_key"'}: "${DASHES}BEGIN PRIVATE KEY${DASHES}\\n${fake(64, BASE64)}\\n"}`,
    'gcp-service-account-key',
  ],
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
  ['a Grafana Cloud token', `${'glc_eyJ'}${fake(120, BASE64)}`, 'grafana-token'],
  ['a Supabase token', `${'sbp_'}${fake(40, HEX)}`, 'supabase-token'],
  ['a Supabase secret key', `${'sb_secret_'}${fake(31, URLSAFE)}`, 'supabase-token'],
  ['a Cloudflare origin CA key', `${'v1.0-'}${fake(24, HEX)}-${fake(146, HEX)}`, 'cloudflare-origin-ca-key'],
  ['an Alibaba key id', `${'LTAI'}${fake(20)}`, 'alibaba-access-key-id'],
  ['a Mapbox secret token', `${'sk.eyJ'}${fake(60, URLSAFE)}.${fake(22, URLSAFE)}`, 'mapbox-secret-token'],
  ['a Notion token', `${'ntn_'}${fake(11, DIGITS)}${fake(35)}`, 'notion-token'],
  ['a legacy Notion token', `${'secret_'}${fake(43)}`, 'notion-token'],
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
  // Lookalikes of the AWS secret key that must pass.
  ['the AWS documentation pair', `aws_access_key_id = ${'AKIA'}IOSFODNN7${'EXAMPLE'}\nsecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLE'}KEY"`],
  ['a docs placeholder for the secret key', 'AWS_SECRET_ACCESS_KEY=<your key>'],
  ['a docs placeholder in capitals', 'aws_secret_access_key = YOUR_SECRET_ACCESS_KEY'],
  ['the AWS documentation secret in JSON (snake case)', `"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY${'EXAMPLE'}KEY"`],
  ['a masked secret key in kebab case', `aws-secret-access-key: ${'x'.repeat(40)}`],
  ['a masked secret key as awsSecretAccessKey', `awsSecretAccessKey: '${'*'.repeat(40)}'`],
  ['the secret key from a CI secret', 'AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}'],
  ['the secret key from the environment (JS)', 'secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY,'],
  ['the secret key from the environment (Python)', 'aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"]'],
  ['the secret key from the environment (shell)', 'export AWS_SECRET_ACCESS_KEY="$(aws configure get aws_secret_access_key)"'],
  ['a masked secret key', `secretAccessKey: '${'x'.repeat(40)}'`],
  ['a SHA-1 under the secret key name', `secret_access_key = ${fake(40, HEX)}`],
  ['a 40-character word run under the secret key name', 'aws_secret_access_key = ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn'],
  ['a longer base64 value under the secret key name', `aws_secret_access_key = ${fake(44, BASE64)}`],
  ['a path under a longer name', `aws_secret_access_key_file = /run/secrets/${fake(40, BASE64)}`],
  ['prose about the secret key', 'Set AWS_SECRET_ACCESS_KEY to the secret access key that the IAM console shows once.'],
  ['a Flask secret_key with no AWS key id near', `app.secret_key = '${fake(40, BASE64)}'`],
  ['a Django SECRET_KEY with no AWS key id near', `SECRET_KEY = "${fake(40, BASE64)}"`],
  ['an OAuth clientSecret with no AWS key id near', `clientSecret: '${fake(40, BASE64)}'`],
  ['a secret_key next to a placeholder AWS key id', `access_key = "${'AKIA'}${'X'.repeat(16)}"\nsecret_key = "${fake(40, BASE64)}"`],
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
});

describe('scanAllSecrets', () => {
  const id = (): string => `${'AKIA'}${fake(16, UPPER + DIGITS)}`;
  const secret = (): string => fake(40, BASE64);
  it.each<[string, string, Array<[number, string]>]>([
    [
      'an id, and its secret key on the next line',
      `const c = {\n  accessKeyId: "${id()}",\n  secretAccessKey: "${secret()}",\n};`,
      [
        [2, 'aws-access-key-id'],
        [3, 'aws-secret-access-key'],
      ],
    ],
    [
      'an id and its secret key on one line: both kinds',
      `{"AccessKeyId":"${id()}","SecretAccessKey":"${secret()}"}`,
      [
        [1, 'aws-access-key-id'],
        [1, 'aws-secret-access-key'],
      ],
    ],
    [
      'the secret key before the id on one line',
      `new S3({secretAccessKey: \`${secret()}\`, accessKeyId: \`${id()}\`})`,
      [
        [1, 'aws-secret-access-key'],
        [1, 'aws-access-key-id'],
      ],
    ],
    [
      'two keys of one kind on a line: the line once',
      `a = "${id()}", b = "${id()}"\nc = "${id()}"`,
      [
        [1, 'aws-access-key-id'],
        [2, 'aws-access-key-id'],
      ],
    ],
    [
      'a Terraform provider block',
      `provider "aws" {\n  region     = "eu-west-1"\n  access_key = "${id()}"\n  secret_key = "${secret()}"\n}`,
      [
        [3, 'aws-access-key-id'],
        [4, 'aws-secret-access-key'],
      ],
    ],
    [
      'an AWS key pair as two arguments',
      `boto3.Session('${id()}', '${secret()}')`,
      [
        [1, 'aws-access-key-id'],
        [1, 'aws-secret-access-key'],
      ],
    ],
    [
      'an AWS key pair in an s3:// address',
      `s3://${id()}:${secret()}@bucket/path`,
      [
        [1, 'aws-access-key-id'],
        [1, 'aws-secret-access-key'],
      ],
    ],
    ['an AWS key id beside a SHA-1: only the id', `ids = ["${id()}", "${fake(40, HEX)}"]`, [[1, 'aws-access-key-id']]],
    ['a secret_key far from the id: only the id', `access_key = "${id()}"\n${'#'.repeat(500)}\nsecret_key = "${secret()}"`, [[1, 'aws-access-key-id']]],
    [
      'three kinds on one minified line',
      `x={k:"${id()}",s:"${'ghp_'}${fake(36)}",secret:"${secret()}"};y=1`,
      [
        [1, 'aws-access-key-id'],
        [1, 'github-token'],
        [1, 'aws-secret-access-key'],
      ],
    ],
  ])('reports %s', (_name, text, expected) => {
    expect(scanAllSecrets(text, 50)).toEqual(expected.map(([line, kind]) => ({ line, kind })));
  });

  it('stops at the cap', () => {
    const text = Array.from({ length: 30 }, () => `key = "${id()}"`).join('\n');
    expect(scanAllSecrets(text, 7)).toHaveLength(7);
  });
});

// The scanner's answer, computed the straightforward way: each rule's global regex from the
// start, its first accepted match, the earliest of them (ties to the first rule).
const REFERENCE_PATTERNS = SECRET_RULES.map((rule) => new RegExp(rule.pattern.source, `${rule.pattern.flags}g`));
function referenceFirst(text: string, index: number): number {
  const rule = SECRET_RULES[index]!;
  const pattern = REFERENCE_PATTERNS[index]!;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const secret = match[1];
    if (secret !== undefined && isPlaceholder(secret)) continue;
    if (rule.verify === undefined || rule.verify(text, match.index + match[0].length, match)) return match.index;
  }
  return -1;
}
function referenceScan(text: string): { line: number; kind: string } | undefined {
  let best: { index: number; kind: string } | undefined;
  SECRET_RULES.forEach((rule, index) => {
    const found = referenceFirst(text, index);
    if (found !== -1 && (best === undefined || found < best.index)) best = { index: found, kind: rule.kind };
  });
  if (best === undefined) return undefined;
  const lines = text.slice(0, best.index).match(/\r\n|\r|\n/g);
  return { line: (lines?.length ?? 0) + 1, kind: best.kind };
}

// Random texts for comparing the scanner with the reference: filler that looks like minified web
// code, with real-format fake keys, placeholders, bare keywords and broken keys at random places.
let state = 7;
const random = (n: number): number => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return (state >>> 8) % n;
};
const pick = <T>(items: readonly T[]): T => items[random(items.length)]!;
const run = (length: number, alphabet: string): string => Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');

const WORDS = [
  'function',
  'return',
  'const',
  'margin',
  'color',
  'class',
  'path',
  'pattern',
  'patch',
  'secret',
  'Secret',
  'SECRET',
  'aws',
  'AWS',
  'await',
  'mailgun',
  'MailGun',
  'discord',
  'discordapp',
  'key',
  'token',
  'glob',
  'global',
  'gloas',
  'label',
  'skip',
  'sk',
  'hf',
  'r8',
  'SK',
  'dapi',
  'api',
  'org',
  'pat',
  'live',
  'us',
  'BEGIN',
  'PRIVATE',
  'KEY',
  'AccountKey',
  'access_token',
  'production',
  'hooks',
  'slack',
  'com',
  'eyJ',
  'v1',
  'dp',
  'hvs',
  'EAAA',
  'Object',
  'Math',
  'NaN',
  'private_key',
  'secret_access_key',
  'aws_secret_key',
  'SecretAccessKey',
  'cache',
  'the',
  'and',
];
// Non-Latin-1 characters whose low byte is a keyword character, and a few others.
const ODD_CHARS = ['é', '日本', '😀', 'Ł', 'ſ', 'K', 'ı', ...'glsSKAkyp_-.'.split('').map((char) => String.fromCharCode(0x100 | char.charCodeAt(0)))];
const SEPARATORS = [' ', '.', '-', '_', '"', "'", ':', '=', '/', '\n', '\r\n', '\r', '{', '}', ';', ',', '(', ')', '$', '+', '\\n', ' = ', ': '];
const ALPHABETS = [ALNUM, HEX, URLSAFE, BASE64, DIGITS, UPPER + DIGITS, LOWER, `${HEX}-`];

function filler(): string {
  switch (random(9)) {
    case 0:
    case 1:
      return pick(WORDS) + (random(3) === 0 ? run(random(6), ALNUM) : '');
    case 2:
      return run(1 + random(70), pick(ALPHABETS));
    case 3:
      return `.c-${run(4, LOWER)}{color:#${run(6, HEX)};margin:${random(40)}px}`;
    case 4:
      return pick(ODD_CHARS);
    case 5:
      return pick(['-----', '----', '------BEGIN ', '-----BEGIN RSA PRIVATE KEY-----\n', '-----END PRIVATE KEY-----', '--']);
    default:
      return pick(SEPARATORS);
  }
}

// A keyword of the rule with its classes filled in at random, and random case under `i`.
function keywordOf(rule: (typeof SECRET_RULES)[number]): string {
  const word = pick(rule.keywords ?? ['xx']);
  let out = '';
  for (let i = 0; i < word.length; i++) {
    let char = word[i]!;
    if (char === '[') {
      const close = word.indexOf(']', i + 2);
      const body = word
        .slice(i + 1, close)
        .replace(/(.)-(.)/g, (_all, from: string, to: string) =>
          Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, k) => String.fromCharCode(from.charCodeAt(0) + k)).join(''),
        );
      char = pick([...body]);
      i = close;
    }
    out += rule.pattern.flags.includes('i') && random(2) === 0 ? char.toUpperCase() : char;
  }
  return out;
}

function secretish(): string {
  const [, positive] = pick(POSITIVES);
  switch (random(10)) {
    case 0:
    case 1:
      return positive;
    case 2: // The same format, other random characters.
      return positive.replace(/[A-Za-z0-9]/g, (char, at: number) =>
        at < 12 || random(3) !== 0 ? char : pick([...(/[0-9]/.test(char) ? DIGITS : /[a-f]/.test(char) ? HEX : /[a-z]/.test(char) ? LOWER : UPPER)]),
      );
    case 3: // Cut short, or with a character changed.
      return random(2) === 0
        ? positive.slice(0, random(positive.length))
        : (() => {
            const at = random(positive.length);
            return positive.slice(0, at) + pick([...`${ALNUM}-_.`, ...ODD_CHARS]) + positive.slice(at + 1);
          })();
    case 4:
      return pick(NEGATIVES)[1].slice(0, 2000);
    case 5: {
      const rule = pick(SECRET_RULES);
      const lead = rule.keywordAt ? run(rule.keywordAt, random(2) === 0 ? HEX : ALNUM) : '';
      return lead + keywordOf(rule) + run(random(120), pick(ALPHABETS));
    }
    case 6: // A placeholder run into by a second key of the same kind.
      return `${keywordOf(pick(SECRET_RULES))}${pick(['example-', 'xxxxxxxxxxxx', 'your-key-', ''])}${positive}`;
    case 7:
      return `${Buffer.from(`${10 ** 17 + random(10 ** 9)}`).toString('base64')}.${run(6, URLSAFE)}.${run(27 + random(12), URLSAFE)}`;
    case 8:
      return `${run(32, HEX)}-us${random(100)}`;
    default:
      return `${pick(WORDS)}${positive}`;
  }
}

function randomText(pieces: number): string {
  let text = '';
  for (let i = 0; i < pieces; i++) text += random(4) === 0 ? secretish() : filler();
  return text;
}

describe('scanForSecrets against a per-rule regex scan', () => {
  it('scans every rule by its keywords, except the Discord bot token', () => {
    expect(SECRET_RULES.filter((rule) => !rule.keywords?.length).map((rule) => rule.kind)).toEqual(['discord-bot-token']);
  });

  it.each(SECRET_RULES.map((rule, index) => [index, rule.kind] as const))('finds the examples for rule %i (%s) by its keywords', (index) => {
    const texts = POSITIVES.map(([, secret]) => `<p>config</p>\n${secret}\n`).filter((text) => referenceFirst(text, index) !== -1);
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(firstMatchOf(text, index)).toBe(referenceFirst(text, index));
  });

  it('agrees on 3000 random texts', () => {
    let found = 0;
    for (let i = 0; i < 3000; i++) {
      const text = randomText(1 + random(80));
      const expected = referenceScan(text);
      if (expected !== undefined) found++;
      expect(scanForSecrets(text), JSON.stringify(text)).toEqual(expected);
    }
    expect(found).toBeGreaterThan(1000);
  });

  it('agrees rule by rule on 200 random texts', () => {
    for (let i = 0; i < 200; i++) {
      const text = randomText(1 + random(80));
      const expected = SECRET_RULES.map((_, index) => referenceFirst(text, index));
      expect(
        SECRET_RULES.map((_, index) => firstMatchOf(text, index)),
        JSON.stringify(text),
      ).toEqual(expected);
    }
  });

  // The scanner reads the text in 32 KB chunks, four characters at a time.
  it('finds every example at every alignment: at the end of a text, and across 32 KB', () => {
    for (const [, secret, kind] of POSITIVES) {
      const starts = [1, 2, 3, 4, 5, 6, 7, 8];
      for (let d = -4; d <= 4; d++) starts.push(32768 + d, 32768 - secret.length + d);
      for (const start of starts) {
        const text = `${' '.repeat(start - 1)}\n${secret}`;
        expect(scanForSecrets(text), `${kind} at ${start}`).toEqual({ line: 2, kind });
        expect(scanForSecrets(`${text}\n${' '.repeat(start % 5)}`), `${kind} at ${start}`).toEqual({ line: 2, kind });
      }
    }
  });

  it('agrees on large texts with keys across chunk boundaries', () => {
    for (let i = 0; i < 30; i++) {
      let text = '';
      const size = 40_000 + random(100_000);
      while (text.length < size) {
        // Pieces of filler, and now and then a key ending or starting near a multiple of 32K.
        const boundary = (Math.floor(text.length / 32768) + 1) * 32768;
        text += random(50) === 0 && boundary - text.length < 400 ? run(boundary - text.length - random(40), LOWER) + secretish() : filler();
      }
      expect(scanForSecrets(text)).toEqual(referenceScan(text));
      expect(SECRET_RULES.map((_, index) => firstMatchOf(text, index))).toEqual(SECRET_RULES.map((_, index) => referenceFirst(text, index)));
    }
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
