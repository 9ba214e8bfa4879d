import { describe, expect, it } from 'vitest';
import { tgzBytes } from '../helpers/archive-bytes.js';
import { AppClient } from './http-client.js';
import { useAppServer } from '../helpers/fixtures.js';

/**
 * A drop whose `_redirects` or `_headers` the server cannot honour: the page names every refused
 * line, as the API's answer does, and nothing is published.
 */

const INDEX = '<!doctype html><html lang="en"><head><title>Dropped</title></head><body><h1>Dropped</h1></body></html>';

const server = useAppServer();

/** Drops an archive of these files on the signed-out drop page, as a form without the page's script posts it. */
async function drop(files: Array<[string, string]>) {
  const client = new AppClient(server);
  const csrf = await client.formToken('/publish');
  return client.postMultipart('/publish', { csrf }, { field: 'archive', filename: 'site.tar.gz', content: tgzBytes([['index.html', INDEX], ...files]) });
}

describe('drop to publish with rules files', () => {
  it('names every refused line of both files on the page', async () => {
    const posted = await drop([
      ['_redirects', '/ok /fine # moved in 2024\n/a /b 299\n/c\n'],
      ['_headers', '  /*\n    X-Frame-Options: DENY\n    Set-Cookie: a=1\n'],
    ]);
    expect(posted.status, posted.text.slice(0, 300)).toBe(400);
    for (const line of ['_redirects line 2 (unknown_status)', '_redirects line 3 (missing_to)', '_headers line 3 (header_not_allowed)']) {
      expect(posted.text).toContain(line);
    }
    expect(posted.text).not.toContain('Your site is live');
  });

  it('says in words what each refused line needs, as the API, MCP and the CLI do, not only its reason code', async () => {
    const posted = await drop([['_redirects', '/fr /fr/index.html 302 Country=fr\n/api/* https://api.example.com/:splat 200\n']]);
    expect(posted.status, posted.text.slice(0, 300)).toBe(400);
    expect(posted.text).toContain('_redirects line 1 (unsupported_condition)');
    expect(posted.text).toContain('Plinth does not support Country= conditions');
    expect(posted.text).toContain('_redirects line 2 (proxy_not_supported)');
    expect(posted.text).toContain('Plinth does not proxy to other hosts');
  });

  it('does not offer signing in for a _redirects over the cap every plan has', async () => {
    const rules = Array.from({ length: 50_000 }, (_, i) => `/old-${i} /new-${i} 301`).join('\n');
    expect(rules.length).toBeGreaterThan(1024 * 1024);
    const posted = await drop([['_redirects', rules]]);
    expect(posted.status, posted.text.slice(0, 300)).toBe(413);
    expect(posted.text).toContain('_redirects may be at most 1 MB on every plan');
    expect(posted.text).not.toContain('Sign in to publish more');
  });

  it('still offers signing in when the site is over its total and its largest file is a _redirects within its cap', async () => {
    const comments = Array.from({ length: 12_000 }, (_, i) => `# note ${i} ${'x'.repeat(50)}`).join('\n');
    const posted = await drop([
      ['_redirects', `${comments}\n/a /b 301\n`],
      ['data.txt', 'y'.repeat(400_000)],
    ]);
    expect(posted.status, posted.text.slice(0, 300)).toBe(413);
    expect(posted.text).toContain('Sign in to publish more');
  });
});
