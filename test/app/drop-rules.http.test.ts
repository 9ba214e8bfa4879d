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

describe('drop to publish with rules files', () => {
  it('names every refused line of both files on the page', async () => {
    const client = new AppClient(server);
    const csrf = await client.formToken('/publish');
    const posted = await client.postMultipart(
      '/publish',
      { csrf },
      {
        field: 'archive',
        filename: 'site.tar.gz',
        content: tgzBytes([
          ['index.html', INDEX],
          ['_redirects', '/ok /fine # moved in 2024\n/a /b 299\n/c\n'],
          ['_headers', '  /*\n    X-Frame-Options: DENY\n    Set-Cookie: a=1\n'],
        ]),
      },
    );
    expect(posted.status, posted.text.slice(0, 300)).toBe(400);
    for (const line of ['_redirects line 2 (unknown_status)', '_redirects line 3 (missing_to)', '_headers line 3 (header_not_allowed)']) {
      expect(posted.text).toContain(line);
    }
    expect(posted.text).not.toContain('Your site is live');
  });
});
