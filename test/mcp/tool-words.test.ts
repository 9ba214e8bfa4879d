import { describe, expect, it } from 'vitest';
import { inToolWords } from '../../src/mcp/tool-words.js';

describe('REST calls in messages, as MCP tools', () => {
  it.each([
    ['Check GET /v1/sites/my-site and retry.', 'Check get_site {"site": "my-site"} and retry.'],
    ['with GET /v1/sites/my-site (field live_revision.id)', 'with get_site {"site": "my-site"} (field live_revision.id)'],
    ['GET /v1/sites/my-site/files lists its files', 'list_files {"site": "my-site"} lists its files'],
    ['GET /v1/sites/my-site/files/<path> returns each', 'read_file {"site": "my-site", "path": "<path>"} returns each'],
    ['List them with GET /v1/sites/my-site/files/css/a.css.', 'List them with read_file {"site": "my-site", "path": "css/a.css"}.'],
    ['Pick one from GET /v1/sites/x-y/revisions; older', 'Pick one from list_revisions {"site": "x-y"}; older'],
    ['GET /v1/sites/x-y/members lists the members.', 'list_members {"site": "x-y"} lists the members.'],
    ['GET /v1/sites lists the sites your API token can reach.', 'list_sites lists the sites your API token can reach.'],
    ['delete one with DELETE /v1/sites/<name>, or', 'delete one with delete_site {"site": "<name>"}, or'],
    ['Delete it with DELETE /v1/sites/s/revisions/rev_2.', 'Delete it with delete_revision {"site": "s", "revision": "rev_2"}.'],
    [
      'Turn it on with PUT /v1/sites/s/access; GET /v1/sites/s/access shows it.',
      'Turn it on with set_access {"site": "s"}; get_access {"site": "s"} shows it.',
    ],
    [
      'Call DELETE /v1/sites/s/members/a%40b.c without ?confirm to get a new one.',
      'Call remove_member {"site": "s", "email": "a@b.c"} without "confirm" to get a new one.',
    ],
    ['send it as the X-Base-Revision header (archives) or "base_revision" (JSON), then', 'send it as "base_revision", then'],
    ['(the live revision id from GET /v1/sites/<name>).', '(the live revision id from get_site {"site": "<name>"}).'],
    [
      'make it live with POST /v1/sites/s/promote {"revision": "rev_2", "base_revision": "rev_1"}.',
      'make it live with promote_site {"site": "s", "revision": "rev_2", "base_revision": "rev_1"}.',
    ],
    ['POST /v1/sites/s/rollback makes one live again.', 'rollback_site {"site": "s"} makes one live again.'],
    [
      'Upload them to POST /v1/deploy?manifest=mf_abc, as archives; GET /v1/deploy/manifest/mf_abc tells what is still missing.',
      'Upload them to deploy_site {"manifest": "mf_abc"}, as archives; get_deploy {"manifest": "mf_abc"} tells what is still missing.',
    ],
    [
      'Publish with POST /v1/deploy?manifest=mf_abc and an empty body within 24 hours.',
      'Publish with deploy_site {"manifest": "mf_abc"} and no files within 24 hours.',
    ],
    ['start again with a new manifest (POST /v1/deploy/manifest).', 'start again with a new manifest (start_deploy).'],
    // No tool reads an approval: its page is where the result is told.
    ['That page shows whether it was deleted (so does GET /v1/approvals/ap_x-Y_9).', 'That page shows whether it was deleted.'],
    // Named on purpose as the REST API's: left alone.
    ['or with GET /v1/sites/s/files/big.mp4 on the REST API.', 'or with GET /v1/sites/s/files/big.mp4 on the REST API.'],
    ['Nothing to do here.', 'Nothing to do here.'],
  ])('%s', (rest, mcp) => {
    expect(inToolWords(rest)).toBe(mcp);
  });
});
