import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { CLI_SETTINGS, defaultHttpThreads, loadConfig, redactConfig, SERVER_SETTINGS, serverConfigProblems, siteUrl, unknownSettings } from '../src/config.js';

describe('defaultHttpThreads', () => {
  it.each([
    [1, 1],
    [2, 1],
    [4, 3],
    [8, 7],
    [64, 63],
  ])('%i cores → %i HTTP threads (one core left for commits, sweeps and ingest)', (cores, threads) => {
    expect(defaultHttpThreads(cores)).toBe(threads);
  });
});

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(config.threads).toBe(defaultHttpThreads(availableParallelism()));
    expect(config.hosts).toEqual({
      docs: 'localhost',
      api: 'api.localhost',
      mcp: 'mcp.localhost',
      app: 'app.localhost',
      siteDomain: 'sites.localhost',
    });
    expect(config.publicUrls.api).toBe('http://api.localhost:8080');
    expect(siteUrl(config.publicUrls, 'blue-fox-1234')).toBe('http://blue-fox-1234.sites.localhost:8080');
    expect(config.serve.appUrl).toBe('http://app.localhost:8080');
  });

  it('reads every PLINTH_* variable', () => {
    const config = loadConfig({
      PLINTH_PORT: '9000',
      PLINTH_THREADS: '3',
      PLINTH_DATA_DIR: '/tmp/plinth-x',
      PLINTH_API_HOST: 'API.Example.com',
      PLINTH_SITE_DOMAIN: 'example-sites.net',
      PLINTH_PUBLIC_SITE_URL: 'https://{name}.example-sites.net/',
      PLINTH_CACHE_MB: '8',
      PLINTH_LOG_LEVEL: 'warn',
    });
    expect(config.port).toBe(9000);
    expect(config.threads).toBe(3);
    expect(config.dataDir).toBe('/tmp/plinth-x');
    expect(config.hosts.api).toBe('api.example.com');
    expect(config.publicUrls.site).toBe('https://{name}.example-sites.net');
    expect(config.serve.cacheBytes).toBe(8 * 1024 * 1024);
    expect(config.logLevel).toBe('warn');
  });

  it('gives in-flight work 30 seconds on a graceful stop unless told otherwise', () => {
    expect(loadConfig({}).stopGraceMs).toBe(30_000);
    expect(loadConfig({ PLINTH_STOP_GRACE_S: '0' }).stopGraceMs).toBe(0);
  });

  it('bounds an upload to 10 minutes unless told otherwise (0: no bound)', () => {
    expect(loadConfig({}).deploy.uploadTimeoutMs).toBe(600_000);
    expect(loadConfig({ PLINTH_UPLOAD_TIMEOUT_S: '0' }).deploy.uploadTimeoutMs).toBe(0);
  });

  it('reads on a refused body until its client has sent nothing for a second unless told otherwise, from 50 ms to 10 s', () => {
    expect(loadConfig({}).deploy.lingerIdleMs).toBe(1000);
    expect(loadConfig({ PLINTH_LINGER_IDLE_MS: '50' }).deploy.lingerIdleMs).toBe(50);
    expect(loadConfig({ PLINTH_LINGER_IDLE_MS: '10000' }).deploy.lingerIdleMs).toBe(10_000);
    for (const refused of ['0', '49', '10001', '2.5']) {
      expect(() => loadConfig({ PLINTH_LINGER_IDLE_MS: refused })).toThrow(/PLINTH_LINGER_IDLE_MS must be a whole number from 50 to 10000/);
    }
  });

  it('tells a signing-in device to poll every 5 seconds unless told otherwise, from 1 to 60', () => {
    expect(loadConfig({}).app.devicePollIntervalS).toBe(5);
    expect(loadConfig({ PLINTH_DEVICE_POLL_INTERVAL_S: '1' }).app.devicePollIntervalS).toBe(1);
    expect(loadConfig({ PLINTH_DEVICE_POLL_INTERVAL_S: '60' }).app.devicePollIntervalS).toBe(60);
    for (const refused of ['0', '61', '2.5']) {
      expect(() => loadConfig({ PLINTH_DEVICE_POLL_INTERVAL_S: refused })).toThrow(/PLINTH_DEVICE_POLL_INTERVAL_S must be a whole number from 1 to 60/);
    }
  });

  it('looks for due webhook deliveries every second unless told otherwise, at most ten times a second', () => {
    expect(loadConfig({}).webhooks.pollMs).toBe(1000);
    expect(loadConfig({ PLINTH_WEBHOOK_POLL_MS: '100' }).webhooks.pollMs).toBe(100);
    expect(loadConfig({ PLINTH_WEBHOOK_POLL_MS: '60000' }).webhooks.pollMs).toBe(60_000);
    for (const refused of ['0', '99', '60001']) {
      expect(() => loadConfig({ PLINTH_WEBHOOK_POLL_MS: refused })).toThrow(/PLINTH_WEBHOOK_POLL_MS must be a whole number from 100 to 60000/);
    }
  });

  it("caps an MCP batch at 20 messages unless told otherwise (0: only the SDK's own 100)", () => {
    expect(loadConfig({}).mcp.maxBatchMessages).toBe(20);
    expect(loadConfig({ PLINTH_MCP_MAX_BATCH: '0' }).mcp.maxBatchMessages).toBe(0);
    expect(loadConfig({ PLINTH_MCP_MAX_BATCH: '100' }).mcp.maxBatchMessages).toBe(100);
  });

  it('omits the port from public addresses on port 80', () => {
    expect(loadConfig({ PLINTH_PORT: '80' }).publicUrls.app).toBe('http://app.localhost');
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.hosts)).toBe(true);
  });

  it.each([
    [{ PLINTH_PORT: 'eighty' }, 'PLINTH_PORT'],
    [{ PLINTH_PORT: '70000' }, 'PLINTH_PORT'],
    [{ PLINTH_THREADS: '0' }, 'PLINTH_THREADS'],
    [{ PLINTH_LOG_LEVEL: 'loud' }, 'PLINTH_LOG_LEVEL'],
    [{ PLINTH_API_HOST: 'bad host' }, 'PLINTH_API_HOST'],
    [{ PLINTH_APP_HOST: 'api.localhost' }, 'must all differ'],
    [{ PLINTH_API_HOST: 'api.sites.localhost' }, 'under PLINTH_SITE_DOMAIN'],
    [{ PLINTH_PUBLIC_SITE_URL: 'https://sites.example.com' }, '{name}'],
    [{ PLINTH_PUBLIC_APP_URL: 'ftp://app.example.com' }, 'PLINTH_PUBLIC_APP_URL'],
    [{ PLINTH_SWEEP_INTERVAL_S: 'hourly' }, 'PLINTH_SWEEP_INTERVAL_S'],
    [{ PLINTH_BLOB_GRACE_S: '5' }, 'PLINTH_BLOB_GRACE_S'],
    [{ PLINTH_STOP_GRACE_S: '-1' }, 'PLINTH_STOP_GRACE_S'],
    [{ PLINTH_MCP_MAX_BATCH: '101' }, 'PLINTH_MCP_MAX_BATCH'],
    [{ PLINTH_S3_BUCKET: 'No_Such Bucket' }, 'PLINTH_S3_BUCKET'],
    [{ PLINTH_S3_BUCKET: 'ab' }, 'PLINTH_S3_BUCKET'],
    [{ PLINTH_S3_ENDPOINT: 'minio:9000' }, 'PLINTH_S3_ENDPOINT'],
    [{ PLINTH_S3_ENDPOINT: 'ftp://minio.internal' }, 'PLINTH_S3_ENDPOINT'],
    [{ PLINTH_S3_REGION: 'eu west' }, 'PLINTH_S3_REGION'],
    [{ PLINTH_S3_FORCE_PATH_STYLE: 'yes' }, 'PLINTH_S3_FORCE_PATH_STYLE'],
    [{ PLINTH_BLOB_CACHE_MB: '-1' }, 'PLINTH_BLOB_CACHE_MB'],
    [{ AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE' }, 'AWS_SECRET_ACCESS_KEY'],
    [{ PLINTH_TRUST_PROXY: 'yes' }, 'PLINTH_TRUST_PROXY'],
    [{ PLINTH_TRUST_PROXY: '17' }, 'PLINTH_TRUST_PROXY'],
    [{ PLINTH_TRUST_PROXY: '10.0.0.0/33' }, 'PLINTH_TRUST_PROXY'],
    [{ PLINTH_TRUST_PROXY: '10.0.0.0/8, proxy.internal' }, 'PLINTH_TRUST_PROXY'],
  ])('rejects %o naming %s', (env, fragment) => {
    expect(() => loadConfig(env)).toThrow(fragment);
  });

  it('runs no operator listener unless a port is given, binds it to loopback, counts metrics and writes no access log', () => {
    expect(loadConfig({}).ops).toEqual({
      port: 0,
      host: '127.0.0.1',
      metrics: true,
      accessLog: false,
      minFreeBytes: 64 * 1024 * 1024,
      maxReplicaLagMs: 10_000,
    });
    expect(loadConfig({ PLINTH_OPS_PORT: '9100', PLINTH_METRICS: '0', PLINTH_ACCESS_LOG: '1', PLINTH_READY_REPLICA_LAG_S: '0' }).ops).toMatchObject({
      port: 9100,
      metrics: false,
      accessLog: true,
      maxReplicaLagMs: 0,
    });
  });

  it.each([
    [{ PLINTH_TLS_ASK_PORT: '8079' }, { port: 8079, host: '127.0.0.1' }],
    [
      { PLINTH_TLS_ASK_PORT: '8079', PLINTH_TLS_ASK_HOST: '10.0.0.2' },
      { port: 8079, host: '10.0.0.2' },
    ],
    [
      { PLINTH_TLS_ASK_PORT: '9100', PLINTH_OPS_PORT: '9100' },
      { port: 9100, host: '127.0.0.1' },
    ],
    [
      { PLINTH_OPS_PORT: '9100', PLINTH_TLS_ASK_PORT: '' },
      { port: 9100, host: '127.0.0.1' },
    ],
  ])('reads the former ask listener settings as the operator listener: %o', (env, ops) => {
    expect(loadConfig(env).ops).toMatchObject(ops);
  });

  it.each([
    [{ PLINTH_OPS_PORT: '9100', PLINTH_TLS_ASK_PORT: '8079' }, 'PLINTH_TLS_ASK_PORT is the former name of PLINTH_OPS_PORT: set only PLINTH_OPS_PORT'],
    [{ PLINTH_OPS_HOST: '10.0.0.2', PLINTH_TLS_ASK_HOST: '10.0.0.3' }, 'PLINTH_TLS_ASK_HOST is the former name of PLINTH_OPS_HOST'],
    [{ PLINTH_TLS_ASK_PORT: 'ninety' }, 'PLINTH_TLS_ASK_PORT must be a whole number'],
    [{ PLINTH_OPS_HOST: 'two words' }, 'PLINTH_OPS_HOST must be an address'],
    [{ PLINTH_METRICS: 'yes' }, 'PLINTH_METRICS must be 1 or 0'],
    [{ PLINTH_ACCESS_LOG: '2' }, 'PLINTH_ACCESS_LOG must be 1 or 0'],
    [{ PLINTH_READY_MIN_FREE_MB: '-1' }, 'PLINTH_READY_MIN_FREE_MB'],
  ])('rejects operator settings %o', (env, fragment) => {
    expect(() => loadConfig(env)).toThrow(fragment);
  });

  it('keeps blobs in the data directory alone unless a bucket is named', () => {
    const config = loadConfig({});
    expect(config.blobs).toEqual({ region: 'us-east-1', forcePathStyle: false, cacheBytes: 10240 * 1024 * 1024, packMaxBytes: 1048576 });
    expect(Object.isFrozen(config.blobs)).toBe(true);
  });

  it('reads the bucket settings and the standard AWS credentials', () => {
    const config = loadConfig({
      PLINTH_S3_BUCKET: 'plinth-blobs',
      PLINTH_S3_ENDPOINT: 'http://127.0.0.1:9000/',
      PLINTH_S3_REGION: 'auto',
      PLINTH_S3_FORCE_PATH_STYLE: '1',
      PLINTH_BLOB_CACHE_MB: '0',
      PLINTH_BUCKET_PACK_MAX_BYTES: '524288',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-key',
    });
    expect(config.blobs).toEqual({
      bucket: 'plinth-blobs',
      endpoint: 'http://127.0.0.1:9000',
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret-key' },
      cacheBytes: 0,
      packMaxBytes: 524288,
    });
    // Without the AWS variables, the SDK's own provider chain finds credentials.
    expect(loadConfig({ PLINTH_S3_BUCKET: 'plinth-blobs' }).blobs.credentials).toBeUndefined();
    // Packing is on by default (it needs a cluster's ledger to happen at all); 0 turns it off.
    expect(loadConfig({ PLINTH_S3_BUCKET: 'plinth-blobs', PLINTH_BUCKET_PACK_MAX_BYTES: '0' }).blobs.packMaxBytes).toBe(0);
  });

  it('masks the secret key of the bucket in the logged configuration', () => {
    const config = loadConfig({
      PLINTH_S3_BUCKET: 'plinth-blobs',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-key',
      AWS_SESSION_TOKEN: 'token-value',
    });
    const logged = JSON.stringify(redactConfig(config));
    expect(logged).toContain('AKIAEXAMPLE');
    expect(logged).not.toContain('secret-key');
    expect(logged).not.toContain('token-value');
  });

  it('masks a password given in the query of the database or SMTP address in the logged configuration', () => {
    // pg reads every query parameter of PLINTH_DATABASE_URL as a connection option, `password`
    // among them; nodemailer reads `tls.*` ones, `tls.passphrase` among them.
    const config = loadConfig({
      PLINTH_DATABASE_URL: 'postgres://plinth@db.internal:5432/plinth?sslmode=require&password=db-query-secret&sslpassword=ssl-key-secret',
      PLINTH_S3_BUCKET: 'plinth-blobs',
      PLINTH_SMTP_URL: 'smtps://mailer:smtp-secret@smtp.example.com:465?tls.passphrase=tls-key-secret&pool=true',
    });
    const logged = JSON.stringify(redactConfig(config));
    for (const secret of ['db-query-secret', 'ssl-key-secret', 'smtp-secret', 'tls-key-secret']) expect(logged).not.toContain(secret);
    // What an operator reads the line for stays.
    expect(logged).toContain('db.internal:5432/plinth');
    expect(logged).toContain('sslmode=require');
    expect(logged).toContain('smtp.example.com:465');
    expect(logged).toContain('pool=true');
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ PLINTH_PORT: 'x', PLINTH_THREADS: 'y' });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).toContain('PLINTH_PORT');
      expect(String(err)).toContain('PLINTH_THREADS');
    }
  });

  it('listens on loopback unless PLINTH_LISTEN_HOST says otherwise', () => {
    expect(loadConfig({}).listenHost).toBe('127.0.0.1');
    expect(loadConfig({ PLINTH_LISTEN_HOST: '' }).listenHost).toBe('127.0.0.1');
    expect(loadConfig({ PLINTH_LISTEN_HOST: '0.0.0.0' }).listenHost).toBe('0.0.0.0');
  });
});

describe('serverConfigProblems', () => {
  it.each([
    [{}, []],
    [{ PLINTH_S3_BUCKET: 'plinth-blobs' }, []],
    [{ PLINTH_DATABASE_URL: 'postgres://db.internal/plinth', PLINTH_S3_BUCKET: 'plinth-blobs' }, []],
    [{ PLINTH_DATABASE_URL: 'postgres://db.internal/plinth' }, ['PLINTH_DATABASE_URL is set without PLINTH_S3_BUCKET']],
  ])('%o → %j', (env, fragments) => {
    const problems = serverConfigProblems(loadConfig(env));
    expect(problems).toHaveLength(fragments.length);
    for (const [i, fragment] of fragments.entries()) expect(problems[i]).toContain(fragment);
  });
});

describe('unknown settings', () => {
  it.each([
    ['PLINTH_DATABSE_URL', 'PLINTH_DATABASE_URL'],
    ['PLINTH_DATABASE_URI', 'PLINTH_DATABASE_URL'],
    ['PLINTH_S3_BUKET', 'PLINTH_S3_BUCKET'],
    ['PLINTH_THRAEDS', 'PLINTH_THREADS'],
    ['PLINTH_LISTEN_ADDR', 'PLINTH_LISTEN_HOST'],
    ['PLINTH_PORTS', 'PLINTH_PORT'],
    ['PLINTH_APIURL', 'PLINTH_API_URL'],
    ['PLINTH_SITES_LIMIT_FRE', 'PLINTH_SITES_LIMIT_FREE'],
  ])('refuses %s, naming %s as the closest setting', (name, closest) => {
    expect(() => loadConfig({ [name]: 'x' })).toThrow(`${name} is not a setting of Plinth (the closest one is ${closest})`);
  });

  it('refuses an unknown name even when it is set empty', () => {
    expect(() => loadConfig({ PLINTH_DATABSE_URL: '' })).toThrow('PLINTH_DATABSE_URL');
  });

  it("knows the plinth command's own variables, so a shell that exports them can start the server", () => {
    expect(() => loadConfig({ PLINTH_API_URL: 'https://api.example.com', PLINTH_TOKEN: 'pl_x' })).not.toThrow();
  });

  it('leaves variables of other programs alone', () => {
    expect(() => loadConfig({ PLINTHX: '1', MY_PLINTH_PORT: '1', HOME: '/root' })).not.toThrow();
  });

  it('lists unknown names with the other problems, all at once', () => {
    const problems = String(
      (() => {
        try {
          loadConfig({ PLINTH_PORT: 'x', PLINTH_DATABSE_URL: 'postgres://db/plinth', PLINTH_S3_BUKET: 'b' });
        } catch (err) {
          return err;
        }
      })(),
    );
    expect(problems).toContain('PLINTH_PORT');
    expect(problems).toContain('PLINTH_DATABSE_URL');
    expect(problems).toContain('PLINTH_S3_BUKET');
  });

  it('reports them in name order, each with its closest setting', () => {
    expect(unknownSettings({ PLINTH_ZZZ: '1', PLINTH_DATABSE_URL: 'x', PLINTH_PORT: '1' })).toEqual([
      { name: 'PLINTH_DATABSE_URL', closest: 'PLINTH_DATABASE_URL' },
      { name: 'PLINTH_ZZZ', closest: expect.stringMatching(/^PLINTH_/) },
    ]);
  });

  it('reads exactly the names of SERVER_SETTINGS (the list the docs table and the refusal use)', () => {
    const read = new Set<string>();
    const env = new Proxy({} as Record<string, string | undefined>, {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    });
    loadConfig(env);
    expect([...read].filter((name) => name.startsWith('PLINTH_')).sort()).toEqual([...SERVER_SETTINGS].sort());
    for (const name of CLI_SETTINGS) expect(SERVER_SETTINGS as readonly string[]).not.toContain(name);
  });
});
