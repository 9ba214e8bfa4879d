import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { defaultHttpThreads, loadConfig, siteUrl } from '../src/config.js';

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
  ])('rejects %o naming %s', (env, fragment) => {
    expect(() => loadConfig(env)).toThrow(fragment);
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
});
