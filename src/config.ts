import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { closestName, describeProxyTrust, normaliseEmail, NO_PROXY_TRUST, parseProxyTrust, type AccountPlan, type ProxyTrust } from './rules/index.js';

/** Everything the service can be told from the environment, parsed and validated once. */
export interface Config {
  readonly port: number;
  readonly listenHost: string;
  readonly dataDir: string;
  /** Where request bodies are spooled while they arrive (`<dataDir>/tmp/uploads`); emptied at start. */
  readonly spoolDir: string;
  /**
   * `UWS_USE_FALLBACK` is set: uWebSockets.js would swap in its slow pure-JavaScript server, so
   * Plinth refuses to start (see http/uws.ts).
   */
  readonly uwsFallbackRequested: boolean;
  /**
   * `PLINTH_DATABASE_URL`: the records live in this PostgreSQL database and the local LMDB is a
   * replica (a cluster of identical nodes). Unset: the embedded LMDB is the record. Holds a
   * password: never log it whole.
   */
  readonly databaseUrl?: string;
  readonly threads: number;
  readonly logLevel: LogLevel;
  readonly hosts: HostConfig;
  readonly publicUrls: PublicUrls;
  readonly serve: ServeConfig;
  readonly deploy: DeployConfig;
  readonly api: ApiConfig;
  readonly mail: MailConfig;
  readonly app: AppConfig;
  readonly mcp: McpConfig;
  readonly blobs: BlobsConfig;
  readonly domains: DomainsConfig;
  readonly ops: OpsConfig;
  readonly webhooks: WebhooksConfig;
  /**
   * Name lookups for webhooks and OAuth client metadata documents unanswered at once in the
   * process (each holds a thread of libuv's pool until the system resolver answers); 0 = no cap.
   */
  readonly outboundLookupsAtOnce: number;
  /** Site analytics counted by the serving threads (docs/analytics.md). */
  readonly analytics: AnalyticsConfig;
  /** How often the lifecycle sweeper runs (prune history, collect unreferenced blobs); 0 = never. */
  readonly sweepIntervalMs: number;
  /** Unreferenced blobs younger than this are kept (longer than any deploy takes). */
  readonly blobGraceMs: number;
  /** On SIGTERM/SIGINT, how long requests and deploys in flight may take to finish; 0 = stop at once. */
  readonly stopGraceMs: number;
}

/** Webhooks of sites (docs/webhooks.md). */
export interface WebhooksConfig {
  /** Loopback targets (and plain http to them) are allowed: tests only, never in production. */
  readonly allowLoopback: boolean;
  /** Webhooks one site may have; 0 = no cap. */
  readonly perSite: number;
  /** Deliveries in progress at once per site; 0 = no cap. */
  readonly inFlightPerSite: number;
  /** How long a receiver has to answer one attempt. */
  readonly timeoutMs: number;
  /** Failed deliveries are retried for this long after their event; 0 = one attempt. */
  readonly retryForMs: number;
  /** A webhook is disabled after this many deliveries in a row were given up on; 0 = never. */
  readonly disableAfter: number;
  /** How often the deliverer looks for due deliveries: a new or retried one waits at most this long. */
  readonly pollMs: number;
}

/** Custom domains (docs/sites-api.md "Custom domains") and the TLS terminator's question. */
export interface DomainsConfig {
  /** Custom domains one site may have, per plan; 0 = none. */
  readonly perSite: Readonly<Record<AccountPlan, number>>;
  /** DNS servers (`ip` or `ip:port`) the TXT checks ask; empty: the system's resolvers. */
  readonly dnsServers: readonly string[];
  /** An active domain whose TXT record is gone is suspended after this long; 0 = at the first failed check. */
  readonly graceMs: number;
}

/**
 * The operator listener (`/healthz`, `/readyz`, `/metrics` and the TLS terminator's "may I
 * certify this name?") and what the node tells operators about itself.
 */
export interface OpsConfig {
  /** Port of the operator listener; 0 = none. */
  readonly port: number;
  /** Address it binds to: loopback unless the load balancer, Prometheus or Caddy run on another machine. */
  readonly host: string;
  /** Count requests, deploys and the rest for `/metrics`; false: nothing is counted on the serving path. */
  readonly metrics: boolean;
  /** One JSON line per request on stdout. */
  readonly accessLog: boolean;
  /** `/readyz` fails while the data directory's file system has less free than this; 0 = no bound (a failed write still counts). */
  readonly minFreeBytes: number;
  /**
   * `/readyz` fails while the replica has known of changes it has not applied for longer than
   * this; 0 = no bound (a replica whose applying fails still counts).
   */
  readonly maxReplicaLagMs: number;
}

/** Site analytics: counted in each HTTP thread's memory, written to the store in batches. */
export interface AnalyticsConfig {
  /** Count page views, visitors, 404s and bytes of published sites; false: nothing is counted on the serving path. */
  readonly enabled: boolean;
  /** How often each HTTP thread writes what it counted; a crash loses at most this much. */
  readonly flushMs: number;
  /** Distinct pages, and distinct referrer hosts, kept per site and day; 0 = no cap. */
  readonly maxItemsPerDay: number;
}

/** Where blob bytes live: the local blob folder only, or an S3-compatible bucket with a local cache. */
export interface BlobsConfig {
  /** The bucket that holds every blob (`PLINTH_S3_BUCKET`); unset: blobs live only in `<dataDir>/blobs`. */
  readonly bucket?: string;
  /** Endpoint of a store other than AWS S3 (R2, MinIO, Ceph RGW); unset: AWS's endpoint for the region. */
  readonly endpoint?: string;
  readonly region: string;
  /** Address the bucket in the path (`<endpoint>/<bucket>/<key>`) rather than in the host name. */
  readonly forcePathStyle: boolean;
  /**
   * From `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`); unset: the AWS
   * SDK's default provider chain (profiles, instance and container roles). Secret: never log it.
   */
  readonly credentials?: BucketCredentials;
  /** Byte budget of this node's disk cache of blobs in bucket mode; 0 = no budget (keep every blob). */
  readonly cacheBytes: number;
  /** In a cluster, new blobs and variants up to this size are packed into few bucket objects; 0 = never. */
  readonly packMaxBytes: number;
}

export interface BucketCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface ApiConfig {
  /** REST and MCP requests one credential (token) may make per minute (each message of an MCP batch counts); 0 = no cap. */
  readonly ratePerCredentialPerMinute: number;
  /** REST and MCP requests one network (IPv4 /24, IPv6 /64) may make per minute, batches as above; 0 = no cap. */
  readonly ratePerNetworkPerMinute: number;
  /** Sites an account may own, per plan (creating one more gets `429 limit`). */
  readonly sitesLimit: Readonly<Record<AccountPlan, number>>;
}

export interface AppConfig {
  /** Sign-in e-mails one address may be sent per hour; 0 = no cap. */
  readonly signInPerAddressPerHour: number;
  /** Sign-in e-mails one network (IPv4 /24, IPv6 /64) may ask for per hour; 0 = no cap. */
  readonly signInPerNetworkPerHour: number;
  /** Sign-in codes that may be tried for one address per day, right or wrong; 0 = no cap. */
  readonly signInCodesPerAddressPerDay: number;
  /** Abuse reports one network may file per hour; 0 = no cap. */
  readonly reportsPerHour: number;
  /** Invite e-mails one address may be sent per hour, by anyone to any site; 0 = no cap. */
  readonly invitesPerAddressPerHour: number;
  /** Invite e-mails one account may send per hour, across its sites; 0 = no cap. */
  readonly invitesPerAccountPerHour: number;
  /** Where new abuse reports are e-mailed for the operator; unset: only stored. */
  readonly abuseEmail?: string;
  /** Shows the local outbox (sign-in links, invites) at `<app>/outbox`: for local installs only. */
  readonly outboxPage: boolean;
  /** Session cookies get `Secure` (the app is served over https). */
  readonly secureCookies: boolean;
  /** Device sign-ins (RFC 8628, `plinth login`) one network may start per hour; 0 = no cap. */
  readonly deviceAuthorizationsPerHour: number;
  /** Wrong user codes one account, and one network, may type per hour on the device page; 0 = no cap. */
  readonly deviceCodeTriesPerHour: number;
  /**
   * Seconds a device is told to wait between polls of the token endpoint (RFC 8628 `interval`),
   * and the spacing below which a poll gets `slow_down`.
   */
  readonly devicePollIntervalS: number;
}

export interface McpConfig {
  /**
   * Browser origins allowed to call the MCP server besides our own hosts and loopback pages
   * (`PLINTH_MCP_ALLOWED_ORIGINS`); `*` allows any. Requests without `Origin` are not affected.
   */
  readonly allowedOrigins: readonly string[];
  /** OAuth client registrations one network may make per hour; 0 = no cap. */
  readonly registrationsPerHour: number;
  /** Client metadata documents one network may make the server fetch per hour; 0 = no cap. */
  readonly metadataFetchesPerHour: number;
  /**
   * Messages one JSON-RPC batch may carry (protocol 2025-03-26, the one revision with batches);
   * 0 = no cap of ours, leaving the SDK's own 100.
   */
  readonly maxBatchMessages: number;
}

export interface MailConfig {
  /**
   * `smtp://[user:pass@]host[:port]` (STARTTLS when offered) or `smtps://…` (TLS from the start);
   * unset: e-mails are written to `<dataDir>/outbox/` instead. Holds a secret: never log it whole.
   */
  readonly smtpUrl?: string;
  /** The From address of e-mails we send. */
  readonly from: string;
}

export interface DeployConfig {
  /** Anonymous sites one network (IPv4 /24, IPv6 /64) may create per hour; 0 = no cap. */
  readonly anonSitesPerHour: number;
  /** Anonymous deploys (creates and site-token updates) per network per hour; 0 = no cap. */
  readonly anonDeploysPerHour: number;
  /** Which proxies in front may name the client in X-Forwarded-For (`PLINTH_TRUST_PROXY`). */
  readonly trustProxy: ProxyTrust;
  /** Ingest worker threads per HTTP thread; all of them together stay within the core count. */
  readonly ingestThreads: number;
  /** Deploys allowed to wait for an ingest worker per HTTP thread before new ones get 503. */
  readonly ingestQueue: number;
  /** Ingest worker threads per HTTP thread kept started while no deploy runs (at most ingestThreads). */
  readonly ingestIdleThreads: number;
  /** Bytes of small text files a deploy gzips before its answer; 0 (the default) = every variant after (serving makes gzip on demand until then). */
  readonly compressBeforePublishBytes: number;
  /** A deploy whose files total at most this many bytes is made durable by its commit, with one sync (blob-journal.ts); 0 = every deploy syncs its blob files first. */
  readonly journalBytes: number;
  /** Upload intake per request while the thread is busy serving, bytes/s; 0 never paces. */
  readonly pacedUploadBytesPerSecond: number;
  /** A thread serving more requests per second than this counts as busy. */
  readonly busyRequestsPerSecond: number;
  /** A deploy's whole body must arrive within this long; 0 = no bound (uWS's 16 KB/s floor still applies). */
  readonly uploadTimeoutMs: number;
  /**
   * While a refused body is read on before the answer (a lingering close), a client that sends
   * nothing for this long is taken to have stopped sending, and the answer goes out.
   */
  readonly lingerIdleMs: number;
  /**
   * Bytes the deploy bodies an HTTP thread receives into memory, instead of a spool file, may hold
   * together; 0 = always spool. A body is held in memory only with a Content-Length of at most
   * `memoryBodyMaxBytes`.
   */
  readonly memoryBodyBytes: number;
  /** Largest deploy body received into memory (a 16 MB part of a large site plus its archive overhead fits); 0 = always spool. */
  readonly memoryBodyMaxBytes: number;
  /**
   * Uploads not yet published (open manifests) one account, site token or anonymous network may
   * hold, in multiples of its plan's per-site limit; 0 = no cap.
   */
  readonly unpublishedSites: number;
  readonly siteRules: SiteRulesConfig;
}

/** Caps on a site's `_redirects` and `_headers`, and on the link check's answer; 0 turns a cap off. */
export interface SiteRulesConfig {
  readonly maxRedirectRules: number;
  readonly maxRedirectLineChars: number;
  readonly maxHeaderBlocks: number;
  readonly maxHeaderLineChars: number;
  /** Segments of one path pattern in either file. */
  readonly maxPatternSegments: number;
  /** Query conditions of all `_redirects` rules together. */
  readonly maxRedirectConditions: number;
  /** Header lines of all `_headers` blocks together. */
  readonly maxHeaderLines: number;
  /** Patterns with a `*` inside the path (`/*.xml`) in each file. */
  readonly maxInnerSplats: number;
  /** Bytes of each of `_redirects` and `_headers`. */
  readonly maxRulesFileBytes: number;
  /** Broken links listed in a deploy's answer (all are counted). */
  readonly maxLinkWarnings: number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Host names (lower-case, no port) that the router matches a request's Host header against. */
export interface HostConfig {
  readonly docs: string;
  readonly api: string;
  readonly mcp: string;
  readonly app: string;
  /** Sites live at `<name>.<siteDomain>`. */
  readonly siteDomain: string;
}

/** Absolute addresses used in responses, e-mails and pages; no trailing slash. */
export interface PublicUrls {
  readonly docs: string;
  readonly api: string;
  readonly mcp: string;
  readonly app: string;
  /** Site address template; `{name}` is replaced by the site name. */
  readonly site: string;
}

export interface ServeConfig {
  /** Byte budget of each HTTP thread's cache of hot file bodies. */
  readonly cacheBytes: number;
  /** Estimated-byte budget of each HTTP thread's cache of site records and resolved URLs. */
  readonly siteCacheBytes: number;
  /** Files larger than this are streamed from disk instead of cached whole. */
  readonly streamThresholdBytes: number;
  /** Longest request URL accepted, in bytes; longer gets 414. */
  readonly maxUrlBytes: number;
  readonly appUrl: string;
  /** Password-protected and members-only sites (serve/access.ts). */
  readonly access: SiteAccessConfig;
}

export interface SiteAccessConfig {
  /** Site passwords one network (IPv4 /24, IPv6 /64) may try per hour, by form or HTTP Basic; 0 = no cap. */
  readonly passwordTriesPerHour: number;
  /** Passwords all networks together may try on one site per hour; 0 = no cap. */
  readonly passwordTriesPerSitePerHour: number;
  /** Password hashes (scrypt) one process runs at once; more tries get 503. 0 = no bound. */
  readonly passwordHashesAtOnce: number;
  /** Access cookies get `Secure` and the `__Host-` prefix (sites are served over https). */
  readonly secureCookies: boolean;
  /** Which proxies in front may name the client in X-Forwarded-For (as `PLINTH_TRUST_PROXY`). */
  readonly trustProxy: ProxyTrust;
}

type Env = Record<string, string | undefined>;

/**
 * Every environment variable the server reads: the one list that the settings table of
 * docs/operating.md is checked against, and that `loadConfig` refuses any other `PLINTH_*` name
 * by. A name `loadConfig` reads must be here (its environment is typed by this list), and a test
 * checks that it reads every name here.
 */
export const SERVER_SETTINGS = [
  'PLINTH_PORT',
  'PLINTH_LISTEN_HOST',
  'PLINTH_THREADS',
  'PLINTH_DATA_DIR',
  'PLINTH_DATABASE_URL',
  'PLINTH_LOG_LEVEL',
  'PLINTH_DOCS_HOST',
  'PLINTH_API_HOST',
  'PLINTH_MCP_HOST',
  'PLINTH_APP_HOST',
  'PLINTH_SITE_DOMAIN',
  'PLINTH_PUBLIC_DOCS_URL',
  'PLINTH_PUBLIC_API_URL',
  'PLINTH_PUBLIC_MCP_URL',
  'PLINTH_PUBLIC_APP_URL',
  'PLINTH_PUBLIC_SITE_URL',
  'PLINTH_SWEEP_INTERVAL_S',
  'PLINTH_BLOB_GRACE_S',
  'PLINTH_STOP_GRACE_S',
  'PLINTH_S3_BUCKET',
  'PLINTH_S3_ENDPOINT',
  'PLINTH_S3_REGION',
  'PLINTH_S3_FORCE_PATH_STYLE',
  'PLINTH_BLOB_CACHE_MB',
  'PLINTH_BUCKET_PACK_MAX_BYTES',
  'PLINTH_CACHE_MB',
  'PLINTH_SITE_CACHE_MB',
  'PLINTH_STREAM_THRESHOLD_KB',
  'PLINTH_MAX_URL_BYTES',
  'PLINTH_ANON_SITES_PER_HOUR',
  'PLINTH_ANON_DEPLOYS_PER_HOUR',
  'PLINTH_TRUST_PROXY',
  'PLINTH_INGEST_THREADS',
  'PLINTH_INGEST_QUEUE',
  'PLINTH_INGEST_IDLE_THREADS',
  'PLINTH_COMPRESS_BEFORE_PUBLISH_KB',
  'PLINTH_DEPLOY_JOURNAL_KB',
  'PLINTH_UPLOAD_PACE_MB_S',
  'PLINTH_UPLOAD_PACE_ABOVE_RPS',
  'PLINTH_UPLOAD_TIMEOUT_S',
  'PLINTH_LINGER_IDLE_MS',
  'PLINTH_MEMORY_BODY_MB',
  'PLINTH_MEMORY_BODY_MAX_MB',
  'PLINTH_REDIRECTS_MAX_RULES',
  'PLINTH_REDIRECTS_MAX_LINE',
  'PLINTH_HEADERS_MAX_BLOCKS',
  'PLINTH_HEADERS_MAX_LINE',
  'PLINTH_RULES_FILE_KB',
  'PLINTH_RULES_MAX_SEGMENTS',
  'PLINTH_REDIRECTS_MAX_CONDITIONS',
  'PLINTH_HEADERS_MAX_LINES',
  'PLINTH_RULES_MAX_INNER_SPLATS',
  'PLINTH_LINK_WARNINGS',
  'PLINTH_UNPUBLISHED_SITES',
  'PLINTH_API_RATE_PER_CREDENTIAL',
  'PLINTH_API_RATE_PER_NETWORK',
  'PLINTH_SITES_LIMIT_FREE',
  'PLINTH_SITES_LIMIT_PROMPTER',
  'PLINTH_SITES_LIMIT_BUILDER',
  'PLINTH_SITES_LIMIT_TEAM',
  'PLINTH_SITES_LIMIT_COMPANY',
  'PLINTH_DOMAINS_FREE',
  'PLINTH_DOMAINS_PROMPTER',
  'PLINTH_DOMAINS_BUILDER',
  'PLINTH_DOMAINS_TEAM',
  'PLINTH_DOMAINS_COMPANY',
  'PLINTH_DNS_SERVERS',
  'PLINTH_DOMAIN_GRACE_S',
  'PLINTH_OPS_PORT',
  'PLINTH_OPS_HOST',
  'PLINTH_TLS_ASK_PORT',
  'PLINTH_TLS_ASK_HOST',
  'PLINTH_METRICS',
  'PLINTH_ACCESS_LOG',
  'PLINTH_ANALYTICS',
  'PLINTH_ANALYTICS_FLUSH_MS',
  'PLINTH_ANALYTICS_ITEMS_PER_DAY',
  'PLINTH_READY_MIN_FREE_MB',
  'PLINTH_READY_REPLICA_LAG_S',
  'PLINTH_SMTP_URL',
  'PLINTH_MAIL_FROM',
  'PLINTH_SIGNIN_EMAILS_PER_ADDRESS',
  'PLINTH_SIGNIN_EMAILS_PER_NETWORK',
  'PLINTH_SIGNIN_CODES_PER_ADDRESS',
  'PLINTH_REPORTS_PER_HOUR',
  'PLINTH_INVITE_EMAILS_PER_ADDRESS',
  'PLINTH_INVITE_EMAILS_PER_ACCOUNT',
  'PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK',
  'PLINTH_SITE_PASSWORD_TRIES_PER_SITE',
  'PLINTH_SITE_PASSWORD_HASHES',
  'PLINTH_ABUSE_EMAIL',
  'PLINTH_MCP_ALLOWED_ORIGINS',
  'PLINTH_MCP_MAX_BATCH',
  'PLINTH_OAUTH_REGISTRATIONS_PER_HOUR',
  'PLINTH_OAUTH_METADATA_FETCHES_PER_NETWORK',
  'PLINTH_DEVICE_AUTHORIZATIONS_PER_HOUR',
  'PLINTH_DEVICE_CODE_TRIES_PER_HOUR',
  'PLINTH_DEVICE_POLL_INTERVAL_S',
  'PLINTH_OUTBOX_PAGE',
  'PLINTH_WEBHOOK_ALLOW_LOOPBACK',
  'PLINTH_WEBHOOKS_PER_SITE',
  'PLINTH_WEBHOOK_IN_FLIGHT_PER_SITE',
  'PLINTH_WEBHOOK_TIMEOUT_S',
  'PLINTH_WEBHOOK_RETRY_FOR_S',
  'PLINTH_WEBHOOK_DISABLE_AFTER',
  'PLINTH_WEBHOOK_POLL_MS',
  'PLINTH_OUTBOUND_LOOKUPS',
] as const;

export type ServerSetting = (typeof SERVER_SETTINGS)[number];

/**
 * The plinth CLI's own variables (packages/cli, `loadCliSettings`). The server does not read them,
 * but knows them: a shell that exports them for the command can still start the server.
 */
export const CLI_SETTINGS = ['PLINTH_API_URL', 'PLINTH_TOKEN'] as const;

/** The variables besides ours that the server reads: the AWS SDK's standard ones, and uWS's switch. */
type OtherVariable = 'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY' | 'AWS_SESSION_TOKEN' | 'UWS_USE_FALLBACK';

/** The environment as `loadConfig` sees it: reading a name that is not in the lists above does not compile. */
type SettingsEnv = { readonly [name in ServerSetting | OtherVariable]?: string };

const KNOWN_SETTINGS: ReadonlySet<string> = new Set<string>([...SERVER_SETTINGS, ...CLI_SETTINGS]);

/**
 * `PLINTH_*` variables that are set but are no setting of ours, each with the known setting
 * closest to it. A mistyped name would otherwise be ignored, and the server would start on its
 * defaults (a node meant for a cluster running alone on the cluster's bucket).
 */
export function unknownSettings(env: Env): Array<{ name: string; closest: string }> {
  return Object.keys(env)
    .filter((name) => name.startsWith('PLINTH_') && env[name] !== undefined && !KNOWN_SETTINGS.has(name))
    .sort()
    .map((name) => ({ name, closest: closestName(name, [...KNOWN_SETTINGS])! }));
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
// S3's rule for new buckets (3–63 characters: lower-case letters, digits, dots and hyphens), which
// R2, MinIO and Ceph RGW follow too.
const BUCKET_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const HOST_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * HTTP threads when PLINTH_THREADS is unset: one per core but one. The spare core runs what is
 * not serving (the main thread's commits and sweeps, the ingest pool, TLS or a proxy in front)
 * so visitors' threads are never preempted by it; measured in bench/RESULTS.md.
 */
export function defaultHttpThreads(cores: number): number {
  return Math.max(1, cores - 1);
}

/**
 * Builds the configuration from `PLINTH_*` variables. Collects every problem before failing so an
 * operator fixes them all in one go; the result is frozen.
 */
export function loadConfig(source: Env = process.env): Readonly<Config> {
  const env: SettingsEnv = source;
  const problems: string[] = unknownSettings(source).map(
    ({ name, closest }) => `${name} is not a setting of Plinth (the closest one is ${closest}); correct or unset it (docs/operating.md lists every setting)`,
  );

  const int = (name: ServerSetting, fallback: number, min: number, max: number, raw = env[name]): number => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const host = (name: ServerSetting, fallback: string): string => {
    const value = (env[name] ?? fallback).trim().toLowerCase();
    if (!HOST_PATTERN.test(value)) problems.push(`${name} must be a host name such as "api.example.com" (got "${env[name]}")`);
    return value;
  };
  const flag = (name: ServerSetting, fallback: boolean): boolean => {
    const raw = (env[name] ?? '').trim();
    if (!['0', '1', 'true', 'false', ''].includes(raw)) problems.push(`${name} must be 1 or 0 (got "${raw}")`);
    return raw === '' ? fallback : raw === '1' || raw === 'true';
  };
  // A setting that replaced an older one: either name works, both only if they agree.
  const renamed = (name: ServerSetting, old: ServerSetting): { name: ServerSetting; raw?: string } => {
    const value = env[name]?.trim() || undefined;
    const before = env[old]?.trim() || undefined;
    if (value !== undefined && before !== undefined && value !== before) problems.push(`${old} is the former name of ${name}: set only ${name}`);
    return value === undefined && before !== undefined ? { name: old, raw: before } : { name, raw: value };
  };
  const url = (name: ServerSetting, fallback: string): string => {
    const value = (env[name] ?? fallback).trim().replace(/\/+$/, '');
    try {
      const parsed = new URL(value.replace('{name}', 'x'));
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    } catch {
      problems.push(`${name} must be an http(s) address (got "${env[name]}")`);
    }
    return value;
  };

  const port = int('PLINTH_PORT', 8080, 0, 65535);
  const threads = int('PLINTH_THREADS', defaultHttpThreads(availableParallelism()), 1, 256);
  // Loopback unless told otherwise: a local install (whose outbox page shows sign-in codes) is
  // reachable from this machine only, and a node behind a load balancer elsewhere says so.
  const listenHost = (env.PLINTH_LISTEN_HOST ?? '').trim() || '127.0.0.1';
  const dataDir = resolve(env.PLINTH_DATA_DIR?.trim() || './data');
  const logLevelRaw = (env.PLINTH_LOG_LEVEL ?? 'info').trim().toLowerCase();
  if (!LOG_LEVELS.includes(logLevelRaw as LogLevel)) {
    problems.push(`PLINTH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${env.PLINTH_LOG_LEVEL}")`);
  }
  const logLevel = LOG_LEVELS.includes(logLevelRaw as LogLevel) ? (logLevelRaw as LogLevel) : 'info';

  const hosts: HostConfig = {
    docs: host('PLINTH_DOCS_HOST', 'localhost'),
    api: host('PLINTH_API_HOST', 'api.localhost'),
    mcp: host('PLINTH_MCP_HOST', 'mcp.localhost'),
    app: host('PLINTH_APP_HOST', 'app.localhost'),
    siteDomain: host('PLINTH_SITE_DOMAIN', 'sites.localhost'),
  };
  const named = [hosts.docs, hosts.api, hosts.mcp, hosts.app];
  if (new Set(named).size !== named.length) problems.push('PLINTH_DOCS_HOST, PLINTH_API_HOST, PLINTH_MCP_HOST and PLINTH_APP_HOST must all differ');
  if (named.some((h) => h.endsWith(`.${hosts.siteDomain}`))) problems.push('no service host may sit under PLINTH_SITE_DOMAIN');

  // Local defaults carry the port so the addresses we hand out work with no proxy in front.
  const suffix = port === 80 || port === 0 ? '' : `:${port}`;
  const publicUrls: PublicUrls = {
    docs: url('PLINTH_PUBLIC_DOCS_URL', `http://${hosts.docs}${suffix}`),
    api: url('PLINTH_PUBLIC_API_URL', `http://${hosts.api}${suffix}`),
    mcp: url('PLINTH_PUBLIC_MCP_URL', `http://${hosts.mcp}${suffix}`),
    app: url('PLINTH_PUBLIC_APP_URL', `http://${hosts.app}${suffix}`),
    site: url('PLINTH_PUBLIC_SITE_URL', `http://{name}.${hosts.siteDomain}${suffix}`),
  };
  if (!publicUrls.site.includes('{name}')) problems.push('PLINTH_PUBLIC_SITE_URL must contain {name}');

  const trustProxyParsed = parseProxyTrust(env.PLINTH_TRUST_PROXY ?? '0');
  if (!trustProxyParsed.ok) {
    problems.push(
      `PLINTH_TRUST_PROXY must be 0, a number of proxy hops, or a comma list of proxy addresses and networks: ${trustProxyParsed.problem} (got "${env.PLINTH_TRUST_PROXY}")`,
    );
  }
  const deploy: DeployConfig = {
    anonSitesPerHour: int('PLINTH_ANON_SITES_PER_HOUR', 10, 0, 1_000_000),
    anonDeploysPerHour: int('PLINTH_ANON_DEPLOYS_PER_HOUR', 60, 0, 1_000_000),
    trustProxy: trustProxyParsed.ok ? trustProxyParsed.trust : NO_PROXY_TRUST,
    ingestThreads: int('PLINTH_INGEST_THREADS', Math.max(1, Math.floor(availableParallelism() / threads)), 1, 64),
    ingestQueue: int('PLINTH_INGEST_QUEUE', 16, 0, 10_000),
    ingestIdleThreads: int('PLINTH_INGEST_IDLE_THREADS', 1, 0, 64),
    compressBeforePublishBytes: int('PLINTH_COMPRESS_BEFORE_PUBLISH_KB', 0, 0, 1024 * 1024) * 1024,
    journalBytes: int('PLINTH_DEPLOY_JOURNAL_KB', 2048, 0, 64 * 1024) * 1024,
    pacedUploadBytesPerSecond: int('PLINTH_UPLOAD_PACE_MB_S', 64, 0, 100_000) * 1024 * 1024,
    busyRequestsPerSecond: int('PLINTH_UPLOAD_PACE_ABOVE_RPS', 2000, 1, 10_000_000),
    uploadTimeoutMs: int('PLINTH_UPLOAD_TIMEOUT_S', 600, 0, 24 * 3600) * 1000,
    lingerIdleMs: int('PLINTH_LINGER_IDLE_MS', 1000, 50, 10_000),
    memoryBodyBytes: int('PLINTH_MEMORY_BODY_MB', 128, 0, 65536) * 1024 * 1024,
    memoryBodyMaxBytes: int('PLINTH_MEMORY_BODY_MAX_MB', 32, 0, 90) * 1024 * 1024,
    siteRules: {
      maxRedirectRules: int('PLINTH_REDIRECTS_MAX_RULES', 2000, 0, 1_000_000),
      maxRedirectLineChars: int('PLINTH_REDIRECTS_MAX_LINE', 1000, 0, 1_000_000),
      maxHeaderBlocks: int('PLINTH_HEADERS_MAX_BLOCKS', 100, 0, 1_000_000),
      maxHeaderLineChars: int('PLINTH_HEADERS_MAX_LINE', 2000, 0, 1_000_000),
      maxPatternSegments: int('PLINTH_RULES_MAX_SEGMENTS', 32, 0, 1_000_000),
      maxRedirectConditions: int('PLINTH_REDIRECTS_MAX_CONDITIONS', 2000, 0, 1_000_000),
      maxHeaderLines: int('PLINTH_HEADERS_MAX_LINES', 100, 0, 1_000_000),
      maxInnerSplats: int('PLINTH_RULES_MAX_INNER_SPLATS', 40, 0, 1_000_000),
      maxRulesFileBytes: int('PLINTH_RULES_FILE_KB', 1024, 0, 1024 * 1024) * 1024,
      maxLinkWarnings: int('PLINTH_LINK_WARNINGS', 50, 0, 1_000_000),
    },
    unpublishedSites: int('PLINTH_UNPUBLISHED_SITES', 2, 0, 1000),
  };

  const serve: ServeConfig = {
    cacheBytes: int('PLINTH_CACHE_MB', 64, 0, 65536) * 1024 * 1024,
    siteCacheBytes: int('PLINTH_SITE_CACHE_MB', 64, 0, 65536) * 1024 * 1024,
    streamThresholdBytes: int('PLINTH_STREAM_THRESHOLD_KB', 16 * 1024, 16, 1024 * 1024) * 1024,
    maxUrlBytes: int('PLINTH_MAX_URL_BYTES', 4096, 256, 65536),
    appUrl: publicUrls.app,
    access: {
      passwordTriesPerHour: int('PLINTH_SITE_PASSWORD_TRIES_PER_NETWORK', 30, 0, 1_000_000),
      passwordTriesPerSitePerHour: int('PLINTH_SITE_PASSWORD_TRIES_PER_SITE', 100, 0, 1_000_000),
      passwordHashesAtOnce: int('PLINTH_SITE_PASSWORD_HASHES', 2, 0, 1024),
      secureCookies: publicUrls.site.startsWith('https:'),
      trustProxy: deploy.trustProxy,
    },
  };

  const api: ApiConfig = {
    ratePerCredentialPerMinute: int('PLINTH_API_RATE_PER_CREDENTIAL', 600, 0, 10_000_000),
    ratePerNetworkPerMinute: int('PLINTH_API_RATE_PER_NETWORK', 1200, 0, 10_000_000),
    sitesLimit: {
      free: int('PLINTH_SITES_LIMIT_FREE', 3, 0, 10_000_000),
      prompter: int('PLINTH_SITES_LIMIT_PROMPTER', 20, 0, 10_000_000),
      builder: int('PLINTH_SITES_LIMIT_BUILDER', 100, 0, 10_000_000),
      team: int('PLINTH_SITES_LIMIT_TEAM', 300, 0, 10_000_000),
      company: int('PLINTH_SITES_LIMIT_COMPANY', 1000, 0, 10_000_000),
    },
  };

  const smtpUrl = env.PLINTH_SMTP_URL?.trim() || undefined;
  if (smtpUrl !== undefined) {
    try {
      const parsed = new URL(smtpUrl);
      if ((parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || parsed.hostname === '') throw new Error('scheme');
    } catch {
      problems.push('PLINTH_SMTP_URL must look like smtp://user:pass@host:587 or smtps://host:465');
    }
  }
  const mail: MailConfig = {
    smtpUrl,
    from: (env.PLINTH_MAIL_FROM ?? '').trim() || `Plinth <no-reply@${hosts.docs}>`,
  };
  if (/[\r\n]/.test(mail.from)) problems.push('PLINTH_MAIL_FROM must be one line');

  const abuseEmail = env.PLINTH_ABUSE_EMAIL?.trim() || undefined;
  if (abuseEmail !== undefined && normaliseEmail(abuseEmail) === undefined) problems.push(`PLINTH_ABUSE_EMAIL must be an e-mail address (got "${abuseEmail}")`);
  const outboxRaw = (env.PLINTH_OUTBOX_PAGE ?? '').trim();
  if (!['', '0', '1'].includes(outboxRaw)) problems.push(`PLINTH_OUTBOX_PAGE must be 1 or 0 (got "${outboxRaw}")`);
  // A local install (no relay, app on a *.localhost address) shows its outbox, so a person can
  // sign in without a mail server; anywhere else it stays off unless asked for.
  const appHostname = safeHostname(publicUrls.app);
  const localApp = appHostname === 'localhost' || appHostname.endsWith('.localhost') || appHostname === '127.0.0.1';
  const app: AppConfig = {
    signInPerAddressPerHour: int('PLINTH_SIGNIN_EMAILS_PER_ADDRESS', 5, 0, 1_000_000),
    signInPerNetworkPerHour: int('PLINTH_SIGNIN_EMAILS_PER_NETWORK', 30, 0, 1_000_000),
    signInCodesPerAddressPerDay: int('PLINTH_SIGNIN_CODES_PER_ADDRESS', 20, 0, 1_000_000),
    reportsPerHour: int('PLINTH_REPORTS_PER_HOUR', 10, 0, 1_000_000),
    invitesPerAddressPerHour: int('PLINTH_INVITE_EMAILS_PER_ADDRESS', 10, 0, 1_000_000),
    invitesPerAccountPerHour: int('PLINTH_INVITE_EMAILS_PER_ACCOUNT', 100, 0, 1_000_000),
    abuseEmail,
    outboxPage: outboxRaw === '' ? smtpUrl === undefined && localApp : outboxRaw === '1',
    secureCookies: publicUrls.app.startsWith('https:'),
    deviceAuthorizationsPerHour: int('PLINTH_DEVICE_AUTHORIZATIONS_PER_HOUR', 30, 0, 1_000_000),
    deviceCodeTriesPerHour: int('PLINTH_DEVICE_CODE_TRIES_PER_HOUR', 10, 0, 1_000_000),
    devicePollIntervalS: int('PLINTH_DEVICE_POLL_INTERVAL_S', 5, 1, 60),
  };

  const allowedOrigins: string[] = [];
  for (const raw of (env.PLINTH_MCP_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    if (raw === '*') {
      allowedOrigins.push('*');
      continue;
    }
    try {
      const parsed = new URL(raw);
      if (parsed.origin === 'null' || parsed.origin !== raw.replace(/\/$/, '').toLowerCase()) throw new Error('not an origin');
      allowedOrigins.push(parsed.origin);
    } catch {
      problems.push(`PLINTH_MCP_ALLOWED_ORIGINS must list origins such as https://example.com, or * (got "${raw}")`);
    }
  }
  const mcp: McpConfig = {
    allowedOrigins,
    registrationsPerHour: int('PLINTH_OAUTH_REGISTRATIONS_PER_HOUR', 30, 0, 1_000_000),
    metadataFetchesPerHour: int('PLINTH_OAUTH_METADATA_FETCHES_PER_NETWORK', 60, 0, 1_000_000),
    // The SDK's transport refuses more than 100 whatever is set here, so more cannot be promised.
    maxBatchMessages: int('PLINTH_MCP_MAX_BATCH', 20, 0, 100),
  };

  const bucket = env.PLINTH_S3_BUCKET?.trim() || undefined;
  if (bucket !== undefined && !BUCKET_PATTERN.test(bucket)) problems.push(`PLINTH_S3_BUCKET must be a bucket name such as "plinth-blobs" (got "${bucket}")`);
  const endpoint = env.PLINTH_S3_ENDPOINT?.trim() ? url('PLINTH_S3_ENDPOINT', '') : undefined;
  const region = (env.PLINTH_S3_REGION ?? '').trim().toLowerCase() || 'us-east-1';
  if (!REGION_PATTERN.test(region)) problems.push(`PLINTH_S3_REGION must be a region name such as "eu-west-1" or "auto" (got "${env.PLINTH_S3_REGION}")`);
  const pathStyleRaw = (env.PLINTH_S3_FORCE_PATH_STYLE ?? '0').trim();
  if (!['0', '1', 'true', 'false', ''].includes(pathStyleRaw)) problems.push(`PLINTH_S3_FORCE_PATH_STYLE must be 1 or 0 (got "${pathStyleRaw}")`);
  // The standard AWS variables; left unset, the SDK's own provider chain finds credentials.
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim() || undefined;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim() || undefined;
  const sessionToken = env.AWS_SESSION_TOKEN?.trim() || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  const blobs: BlobsConfig = {
    ...(bucket !== undefined ? { bucket } : {}),
    ...(endpoint !== undefined ? { endpoint } : {}),
    region,
    forcePathStyle: pathStyleRaw === '1' || pathStyleRaw === 'true',
    ...(accessKeyId !== undefined && secretAccessKey !== undefined
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) } }
      : {}),
    cacheBytes: int('PLINTH_BLOB_CACHE_MB', 10240, 0, 64 * 1024 * 1024) * 1024 * 1024,
    // On by default: a packed file's place travels with its records to every node's replica, so a
    // node serves it with PostgreSQL away too. Only a cluster (a node with a ledger) packs.
    packMaxBytes: int('PLINTH_BUCKET_PACK_MAX_BYTES', 1024 * 1024, 0, 8 * 1024 * 1024),
  };

  const dnsServers: string[] = [];
  for (const raw of (env.PLINTH_DNS_SERVERS ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    if (isDnsServer(raw)) dnsServers.push(raw);
    else problems.push(`PLINTH_DNS_SERVERS must list IP addresses, optionally with a port (1.1.1.1, 127.0.0.1:5353, [::1]:53) (got "${raw}")`);
  }
  const domains: DomainsConfig = {
    perSite: {
      free: int('PLINTH_DOMAINS_FREE', 1, 0, 10_000),
      prompter: int('PLINTH_DOMAINS_PROMPTER', 5, 0, 10_000),
      builder: int('PLINTH_DOMAINS_BUILDER', 20, 0, 10_000),
      team: int('PLINTH_DOMAINS_TEAM', 50, 0, 10_000),
      company: int('PLINTH_DOMAINS_COMPANY', 100, 0, 10_000),
    },
    dnsServers,
    graceMs: int('PLINTH_DOMAIN_GRACE_S', 3 * 24 * 3600, 0, 365 * 24 * 3600) * 1000,
  };

  // The operator listener took over the TLS ask listener, whose settings still work.
  const opsPort = renamed('PLINTH_OPS_PORT', 'PLINTH_TLS_ASK_PORT');
  const opsHost = renamed('PLINTH_OPS_HOST', 'PLINTH_TLS_ASK_HOST');
  const opsHostValue = opsHost.raw ?? '127.0.0.1';
  if (/\s/.test(opsHostValue)) problems.push(`${opsHost.name} must be an address to listen on (got "${opsHostValue}")`);
  const ops: OpsConfig = {
    port: int(opsPort.name, 0, 0, 65535, opsPort.raw),
    host: opsHostValue,
    metrics: flag('PLINTH_METRICS', true),
    accessLog: flag('PLINTH_ACCESS_LOG', false),
    minFreeBytes: int('PLINTH_READY_MIN_FREE_MB', 64, 0, 1024 * 1024) * 1024 * 1024,
    maxReplicaLagMs: int('PLINTH_READY_REPLICA_LAG_S', 10, 0, 24 * 3600) * 1000,
  };

  const webhooks: WebhooksConfig = {
    allowLoopback: flag('PLINTH_WEBHOOK_ALLOW_LOOPBACK', false),
    perSite: int('PLINTH_WEBHOOKS_PER_SITE', 10, 0, 1000),
    inFlightPerSite: int('PLINTH_WEBHOOK_IN_FLIGHT_PER_SITE', 3, 0, 1000),
    timeoutMs: int('PLINTH_WEBHOOK_TIMEOUT_S', 10, 1, 60) * 1000,
    retryForMs: int('PLINTH_WEBHOOK_RETRY_FOR_S', 24 * 3600, 0, 7 * 24 * 3600) * 1000,
    disableAfter: int('PLINTH_WEBHOOK_DISABLE_AFTER', 5, 0, 1000),
    // At least every 100 ms: each look is a query of the queue (of PostgreSQL's, in a cluster, on every node).
    pollMs: int('PLINTH_WEBHOOK_POLL_MS', 1000, 100, 60_000),
  };

  const analytics: AnalyticsConfig = {
    enabled: flag('PLINTH_ANALYTICS', true),
    // At least every 30 s, so counts are readable within a minute of the visits.
    flushMs: int('PLINTH_ANALYTICS_FLUSH_MS', 10_000, 50, 30_000),
    maxItemsPerDay: int('PLINTH_ANALYTICS_ITEMS_PER_DAY', 1000, 0, 1_000_000),
  };

  // Read before the problems are reported, so a bad value here is reported with the rest.
  const sweepIntervalMs = int('PLINTH_SWEEP_INTERVAL_S', 3600, 0, 7 * 24 * 3600) * 1000;
  const blobGraceMs = int('PLINTH_BLOB_GRACE_S', 3600, 60, 30 * 24 * 3600) * 1000;
  const stopGraceMs = int('PLINTH_STOP_GRACE_S', 30, 0, 3600) * 1000;
  const outboundLookupsAtOnce = int('PLINTH_OUTBOUND_LOOKUPS', 2, 0, 64);

  const databaseUrl = env.PLINTH_DATABASE_URL?.trim() || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\/./.test(databaseUrl)) problems.push('PLINTH_DATABASE_URL must be a postgres:// URL');

  if (problems.length > 0) {
    throw new Error(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  const spoolDir = join(dataDir, 'tmp', 'uploads');
  const uwsFallbackRequested = (env.UWS_USE_FALLBACK ?? '') !== '';
  return deepFreeze({
    port,
    listenHost,
    dataDir,
    spoolDir,
    uwsFallbackRequested,
    ...(databaseUrl ? { databaseUrl } : {}),
    threads,
    logLevel,
    hosts,
    publicUrls,
    serve,
    deploy,
    sweepIntervalMs,
    blobGraceMs,
    stopGraceMs,
    api,
    mail,
    app,
    mcp,
    blobs,
    domains,
    ops,
    webhooks,
    outboundLookupsAtOnce,
    analytics,
  });
}

/**
 * What a server cannot run with although every setting is valid alone (`plinth admin` can: it
 * moves records alone, and manages accounts without touching blobs). Empty when it can start.
 */
export function serverConfigProblems(config: Readonly<Config>): string[] {
  const problems: string[] = [];
  if (config.databaseUrl !== undefined && config.blobs.bucket === undefined) {
    // Without a shared bucket a node keeps the blobs of the deploys it takes on its own disk, and
    // every other node answers those sites with errors.
    problems.push(
      "PLINTH_DATABASE_URL is set without PLINTH_S3_BUCKET: the nodes of a cluster share their blobs through a bucket. Set PLINTH_S3_BUCKET (and the other PLINTH_S3_* settings) to the cluster's bucket.",
    );
  }
  return problems;
}

/** An IPv4 or IPv6 address with an optional port, as node:dns `setServers` takes them. */
function isDnsServer(value: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : isIP(value) === 6 ? [value, undefined] : value.split(':');
  if (address === undefined || isIP(address) === 0) return false;
  return port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
}

function safeHostname(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** The public address of a site, from the configured template. */
export function siteUrl(urls: PublicUrls, name: string): string {
  return urls.site.replace('{name}', name);
}

/**
 * The address of a site at one of its custom domains: the scheme and port of the site addresses
 * (custom domains reach the same listener, behind the same TLS terminator).
 */
export function domainUrl(urls: PublicUrls, domain: string): string {
  const template = new URL(urls.site.replace('{name}', 'x'));
  return `${template.protocol}//${domain}${template.port === '' ? '' : `:${template.port}`}`;
}

/**
 * The config as it may be logged: the passwords of the SMTP and database addresses (in their user
 * part or their query), the bucket's secret key and session token replaced by `***`.
 */
export function redactConfig(config: Readonly<Config>): Record<string, unknown> {
  const { credentials } = config.blobs;
  const blobs =
    credentials === undefined
      ? config.blobs
      : {
          ...config.blobs,
          credentials: {
            accessKeyId: credentials.accessKeyId,
            secretAccessKey: '***',
            ...(credentials.sessionToken !== undefined ? { sessionToken: '***' } : {}),
          },
        };
  const trustProxy = describeProxyTrust(config.deploy.trustProxy);
  return {
    ...config,
    deploy: { ...config.deploy, trustProxy },
    serve: { ...config.serve, access: { ...config.serve.access, trustProxy } },
    mail: { ...config.mail, ...(config.mail.smtpUrl !== undefined ? { smtpUrl: loggableUrl(config.mail.smtpUrl) } : {}) },
    blobs,
    ...(config.databaseUrl ? { databaseUrl: loggableUrl(config.databaseUrl) } : {}),
  };
}

/**
 * Query parameters that carry a secret: pg takes every parameter of a database address as a
 * connection option (`password`, `sslpassword`), nodemailer its SMTP address's `tls.*` ones
 * (`tls.passphrase`).
 */
const SECRET_PARAMETER = /pass|secret|token/i;

/** An address as it may be logged: its password, and every query parameter that names a secret, `***`. */
export function loggableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of new Set(parsed.searchParams.keys())) if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return '***';
  }
}

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object') deepFreeze(inner as object);
  }
  return Object.freeze(value);
}
