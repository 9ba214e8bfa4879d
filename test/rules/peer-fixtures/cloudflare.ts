/**
 * cloudflare/workers-sdk at f8308360283f97d33e188aee2e19c1ef9c09524a, packages/workers-shared: the cases of
 * utils/tests/parseRedirects.{valid,invalid}.test.ts and parseHeaders.{valid,invalid}.test.ts
 * (each input copied as the test writes it; those built with a template are built the same way
 * here), and of asset-worker/tests/rules-engine.test.ts and handler.test.ts, whose rules are written
 * as the `_redirects` or `_headers` that makes them. Left out: the "custom limits" tests (they call
 * the parser with options a site cannot set), and handler cases about ETags, caching, analytics
 * and html_handling, which are not about rules files.
 */
import type { PeerCase } from './types.js';

const WRITTEN: PeerCase[] = [
  {
    id: 'cloudflare/parseRedirects/handle-a-single-rule',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should handle a single rule',
    },
    file: '_redirects',
    text: '/a /b 301',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        status: 301,
        location: '/b',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/ignore-blank-lines',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should ignore blank lines',
    },
    file: '_redirects',
    text: '\n/a /b 301\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/trim-whitespace',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should trim whitespace',
    },
    file: '_redirects',
    text: '\n  /a /b 301\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/ignore-comments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should ignore comments',
    },
    file: '_redirects',
    text: '\n  # This is a comment\n  /a /b 301\n  # And one here too.\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 3,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/handle-a-single-comment-only-line',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should handle a single comment-only line',
    },
    file: '_redirects',
    text: '# This is just a comment',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/handle-an-indented-comment-only-line',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should handle an indented comment-only line',
    },
    file: '_redirects',
    text: '  # indented comment',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/handle-multiple-consecutive-comment-lines',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should handle multiple consecutive comment lines',
    },
    file: '_redirects',
    text: '\n# First comment\n# Second comment\n  # Indented comment\n/a /b 301\n# Comment after rule\n# Another comment\n/c /d\n# Final comment\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 5,
          from: '/a',
          to: '/b',
          status: 301,
        },
        {
          line: 8,
          from: '/c',
          to: '/d',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/handle-a-file-with-only-comments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should handle a file with only comments',
    },
    file: '_redirects',
    text: '\n# This file has no redirects\n# Just comments\n  # Some indented\n# And more comments\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/default-to-302',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should default to 302',
    },
    file: '_redirects',
    text: '\n  /a /b 302\n  /c /d\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b',
          status: 302,
        },
        {
          line: 3,
          from: '/c',
          to: '/d',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/c',
        status: 302,
        location: '/d',
        choice: 'default_status',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/preserve-querystrings-on-to',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should preserve querystrings on to',
    },
    file: '_redirects',
    text: '\n  /a /b?query=string 302\n  /c?this=rejected /d 301\n  /ext https://some.domain:1234/route?q=string#anchor\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b?query=string',
          status: 302,
        },
        {
          line: 3,
          from: '/c',
          to: '/d',
          status: 301,
        },
        {
          line: 4,
          from: '/ext',
          to: 'https://some.domain:1234/route?q=string#anchor',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        status: 302,
        location: '/b?query=string',
      },
      {
        path: '/c?this=rejected',
        status: 301,
        location: '/d?this=rejected',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/preserve-fragments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should preserve fragments',
    },
    file: '_redirects',
    text: '\n  /a /b#blah 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b#blah',
          status: 302,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        status: 302,
        location: '/b#blah',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/preserve-fragments-which-contain-a-hash-sign',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should preserve fragments which contain a hash sign',
    },
    file: '_redirects',
    text: '\n  /a /b##blah-1 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b##blah-1',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/preserve-fragments-which-contain-a-hash-sign-and-are-full-urls',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should preserve fragments which contain a hash sign and are full URLs',
    },
    file: '_redirects',
    text: '\n  /a https://example.com/b##blah-1 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: 'https://example.com/b##blah-1',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/accept-200-proxying-redirects',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should accept 200 (proxying) redirects',
    },
    file: '_redirects',
    text: '\n\t/a /b 200\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b',
          status: 200,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        files: ['b'],
        status: 200,
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/accept-absolute-urls-that-end-with-index-html',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should accept absolute URLs that end with index.html',
    },
    file: '_redirects',
    text: '\n\t/foo https://bar.com/index.html 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/foo',
          to: 'https://bar.com/index.html',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/accept-going-to-absolute-urls-with-ports',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should accept going to absolute URLs with ports',
    },
    file: '_redirects',
    text: '\n\t/foo https://bar.com:123/index.html 302\n\t/cat https://cat.com:12345 302\n\t/dog https://dog.com:12345\n\t',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/foo',
          to: 'https://bar.com:123/index.html',
          status: 302,
        },
        {
          line: 3,
          from: '/cat',
          to: 'https://cat.com:12345/',
          status: 302,
        },
        {
          line: 4,
          from: '/dog',
          to: 'https://dog.com:12345/',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/accept-relative-urls-that-don-t-point-to-html-files',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: "parseRedirects should accept relative URLs that don't point to .html files",
    },
    file: '_redirects',
    text: '\n\t/* /foo 200\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/*',
          to: '/foo',
          status: 200,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/x/y',
        files: ['foo'],
        status: 200,
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments',
    },
    file: '_redirects',
    text: '/a /b 301 # redirect a to b',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        status: 301,
        location: '/b',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments-without-status-code',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments without status code',
    },
    file: '_redirects',
    text: '/a /b # redirect with default status',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments-after-url-fragments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments after URL fragments',
    },
    file: '_redirects',
    text: '/a /b#section 301 # redirect to section',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b#section',
          status: 301,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments-without-space-after-hash',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments without space after hash',
    },
    file: '_redirects',
    text: '/a /b 301 #no space comment',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-multiple-rules-with-inline-comments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support multiple rules with inline comments',
    },
    file: '_redirects',
    text: '\n    /a /b 301 # first rule\n    /c /d # second rule with default status\n    # full line comment\n    /e /f 307 # third rule\n  ',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/a',
          to: '/b',
          status: 301,
        },
        {
          line: 3,
          from: '/c',
          to: '/d',
          status: 302,
          defaulted: true,
        },
        {
          line: 5,
          from: '/e',
          to: '/f',
          status: 307,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments-with-absolute-urls-containing-fragments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments with absolute URLs containing fragments',
    },
    file: '_redirects',
    text: '/a https://x.com/b#c # comment',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: 'https://x.com/b#c',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-empty-inline-comments-just-hash',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support empty inline comments (just hash)',
    },
    file: '_redirects',
    text: '/a /b #',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/support-inline-comments-with-multiple-hashes-in-url-fragment',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.valid.test.ts',
      case: 'parseRedirects should support inline comments with multiple hashes in URL fragment',
    },
    file: '_redirects',
    text: '/a /b##anchor # comment',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/a',
          to: '/b##anchor',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseRedirects/reject-malformed-lines',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should reject malformed lines',
    },
    file: '_redirects',
    text: '\n    # Single token\n    /c\n    # Four tokens\n    /d /e 302 !important\n  ',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [3, 5],
    },
  },
  {
    id: 'cloudflare/parseRedirects/reject-invalid-status-codes',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should reject invalid status codes',
    },
    file: '_redirects',
    text: '\n    # Valid token sails through\n    /a /b 301\n    # 418 NOT OK\n    /c /d 418\n  ',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 3,
          from: '/a',
          to: '/b',
          status: 301,
        },
      ],
      refused: [5],
    },
  },
  {
    id: 'cloudflare/parseRedirects/reject-duplicate-from-paths',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: "parseRedirects should reject duplicate 'from' paths",
    },
    file: '_redirects',
    text: "\n    # Valid entry\n    /a /b\n    # Nonsensical but permitted (for now)\n    /b /a\n    # Duplicate 'from'\n    /a /c\n  ",
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 3,
          from: '/a',
          to: '/b',
          status: 302,
          defaulted: true,
        },
        {
          line: 5,
          from: '/b',
          to: '/a',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [7],
    },
    chosen: [
      {
        line: 7,
        choice: 'duplicate_from',
      },
    ],
    requests: [
      {
        path: '/a',
        status: 302,
        location: '/b',
        choice: 'default_status',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/reject-malformed-urls',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should reject malformed URLs',
    },
    file: '_redirects',
    text: "\n  # Spaces rejected on token length\n  /some page /somewhere else\n  # OK with URL escaped encoding\n  /some%20page /somewhere%20else\n  # Unescaped URLs are handled OK by Deno, so escape & pass them through\n  /://so;`me /nons:/&@%+~{}ense\n  # Absolute URLs aren't OK for 'from', but are fine for 'to'\n  https://yeah.com https://nah.com\n  /nah https://yeah.com\n  # This is actually parsed as /yeah.com, which we might want to detect but is ok for now\n  yeah.com https://nah.com\n",
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 5,
          from: '/some%20page',
          to: '/somewhere%20else',
          status: 302,
          defaulted: true,
        },
        {
          line: 7,
          from: '/://so;%60me',
          to: '/nons:/&@%+~%7B%7Dense',
          status: 302,
          defaulted: true,
        },
        {
          line: 10,
          from: '/nah',
          to: 'https://yeah.com/',
          status: 302,
          defaulted: true,
        },
        {
          line: 12,
          from: '/yeah.com',
          to: 'https://nah.com/',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [3, 9],
    },
    requests: [
      {
        path: '/some%20page',
        status: 302,
        location: '/somewhere%20else',
        choice: 'default_status',
      },
    ],
    chosen: [
      {
        line: 9,
        choice: 'host_rules_in_redirects',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/reject-non-relative-urls-for-proxying-200-redirects',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should reject non-relative URLs for proxying (200) redirects',
    },
    file: '_redirects',
    text: '\n\t/a https://example.com/b 200\n',
    scope: 'proxy',
    peer: {
      redirects: [],
      refused: [2],
    },
  },
  {
    id: 'cloudflare/parseRedirects/reject-wildcard-patterns-to-index',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should reject wildcard patterns to index',
    },
    file: '_redirects',
    text: '\n/* /index.html 200\n/* /index 200\n/ /index.html\n/ /index\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [2, 3, 4, 5],
    },
    chosen: [
      {
        line: 2,
        choice: 'spa_rewrite',
      },
      {
        line: 3,
        choice: 'spa_rewrite',
      },
      {
        line: 4,
        choice: 'spa_rewrite',
      },
      {
        line: 5,
        choice: 'spa_rewrite',
      },
    ],
  },
  {
    id: 'cloudflare/parseRedirects/allow-root-patterns-to-index-when-html-handling-disabled',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseRedirects.invalid.test.ts',
      case: 'parseRedirects should allow root patterns to index when HTML handling disabled',
    },
    file: '_redirects',
    text: '\n/* /index.html 200\n/* /index 200\n/ /index.html\n/ /index\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 4,
          from: '/',
          to: '/index.html',
          status: 302,
          defaulted: true,
        },
      ],
      refused: [2, 3, 5],
    },
    chosen: [
      {
        line: 2,
        choice: 'spa_rewrite',
      },
      {
        line: 3,
        choice: 'spa_rewrite',
      },
      {
        line: 5,
        choice: 'duplicate_from',
      },
    ],
    note: 'Run with html_handling "none".',
  },
  {
    id: 'cloudflare/parseHeaders/handle-a-single-rule',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should handle a single rule',
    },
    file: '_headers',
    text: '/a\n  Name: Value',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a',
          set: {
            name: 'Value',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        headers: {
          name: 'Value',
        },
      },
    ],
  },
  {
    id: 'cloudflare/parseHeaders/handle-headers-with-exclamation-marks',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should handle headers with exclamation marks',
    },
    file: '_headers',
    text: '/a\n  !Name: Value',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a',
          set: {
            '!name': 'Value',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseHeaders/ignore-blank-lines',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should ignore blank lines',
    },
    file: '_headers',
    text: '\n/a\n\nName: Value\n\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 2,
          path: '/a',
          set: {
            name: 'Value',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseHeaders/trim-whitespace',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should trim whitespace',
    },
    file: '_headers',
    text: '\n                /a\n    Name         :           Value\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 2,
          path: '/a',
          set: {
            name: 'Value',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseHeaders/ignore-comments',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should ignore comments',
    },
    file: '_headers',
    text: '\n  # This is a comment\n  /a\n  # And one here too.\n  Name: Value\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 3,
          path: '/a',
          set: {
            name: 'Value',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseHeaders/combine-headers-together',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should combine headers together',
    },
    file: '_headers',
    text: '\n  /a\n    Set-Cookie: test=cookie; expires=never\n    Set-Cookie: another=cookie; magic!\n\n  /b\n    A: ABBA\n    B: BABA\n',
    scope: 'outside',
    peer: {
      headers: [
        {
          line: 2,
          path: '/a',
          set: {
            'set-cookie': 'test=cookie; expires=never, another=cookie; magic!',
          },
        },
        {
          line: 6,
          path: '/b',
          set: {
            a: 'ABBA',
            b: 'BABA',
          },
        },
      ],
      refused: [],
    },
    note: 'Plinth refuses Set-Cookie (published sites cannot set cookies).',
  },
  {
    id: 'cloudflare/parseHeaders/support-setting-hosts',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should support setting hosts',
    },
    file: '_headers',
    text: '\n  https://example.com\n    a: a\n  https://example.com/\n    b: b\n  https://example.com/blog\n    c: c\n  /blog\n    d:d\n  https://:subdomain.example.*/path\n    e:e\n',
    scope: 'outside',
    peer: {
      headers: [
        {
          line: 2,
          path: 'https://example.com/',
          set: {
            a: 'a',
          },
        },
        {
          line: 4,
          path: 'https://example.com/',
          set: {
            b: 'b',
          },
        },
        {
          line: 6,
          path: 'https://example.com/blog',
          set: {
            c: 'c',
          },
        },
        {
          line: 8,
          path: '/blog',
          set: {
            d: 'd',
          },
        },
        {
          line: 10,
          path: 'https://:subdomain.example.*/path',
          set: {
            e: 'e',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        host: 'example.com',
        headers: {
          a: 'a',
          b: 'b',
        },
        absent: ['c', 'd'],
      },
      {
        path: '/blog',
        host: 'example.com',
        headers: {
          c: 'c',
          d: 'd',
        },
      },
      {
        path: '/blog',
        host: 'other.example',
        headers: {
          d: 'd',
        },
        absent: ['c'],
      },
      {
        path: '/path',
        host: 'my.example.dev',
        headers: {
          e: 'e',
        },
      },
    ],
  },
  {
    id: 'cloudflare/parseHeaders/add-unset-headers',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.valid.test.ts',
      case: 'parseHeaders should add unset headers',
    },
    file: '_headers',
    text: '/a\n  Name: Value\n  ! Place',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a',
          set: {
            name: 'Value',
          },
          remove: ['Place'],
        },
      ],
      refused: [],
    },
  },
  {
    id: 'cloudflare/parseHeaders/reject-malformed-initial-lines',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject malformed initial lines',
    },
    file: '_headers',
    text: '\n    # A single token before a path\n    c\n    # A header before a path\n    Access-Control-Allow-Origin: *\n  ',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [3, 5],
    },
  },
  {
    id: 'cloudflare/parseHeaders/reject-invalid-headers',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject invalid headers',
    },
    file: '_headers',
    text: "\n    # Valid header sails through\n    /a\n      Name:       Value\n    #\n    /b\n      I'm invalid!\n      !x-content-type\n      But: I'm okay!\n      ! Content-Type: application/json\n  ",
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 3,
          path: '/a',
          set: {
            name: 'Value',
          },
        },
        {
          line: 6,
          path: '/b',
          set: {
            but: "I'm okay!",
          },
        },
      ],
      refused: [7, 8, 10],
    },
  },
  {
    id: 'cloudflare/parseHeaders/reject-any-rules-after-the-first-100',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject any rules after the first 100',
    },
    file: '_headers',
    text: "\n    # COMMENTS DON'T COUNT TOWARDS TOTAL VALID RULES\n    /a/0\nx-index: 0\n/a/1\nx-index: 1\n/a/2\nx-index: 2\n/a/3\nx-index: 3\n/a/4\nx-index: 4\n/a/5\nx-index: 5\n/a/6\nx-index: 6\n/a/7\nx-index: 7\n/a/8\nx-index: 8\n/a/9\nx-index: 9\n/a/10\nx-index: 10\n/a/11\nx-index: 11\n/a/12\nx-index: 12\n/a/13\nx-index: 13\n/a/14\nx-index: 14\n/a/15\nx-index: 15\n/a/16\nx-index: 16\n/a/17\nx-index: 17\n/a/18\nx-index: 18\n/a/19\nx-index: 19\n/a/20\nx-index: 20\n/a/21\nx-index: 21\n/a/22\nx-index: 22\n/a/23\nx-index: 23\n/a/24\nx-index: 24\n/a/25\nx-index: 25\n/a/26\nx-index: 26\n/a/27\nx-index: 27\n/a/28\nx-index: 28\n/a/29\nx-index: 29\n/a/30\nx-index: 30\n/a/31\nx-index: 31\n/a/32\nx-index: 32\n/a/33\nx-index: 33\n/a/34\nx-index: 34\n/a/35\nx-index: 35\n/a/36\nx-index: 36\n/a/37\nx-index: 37\n/a/38\nx-index: 38\n/a/39\nx-index: 39\n/a/40\nx-index: 40\n/a/41\nx-index: 41\n/a/42\nx-index: 42\n/a/43\nx-index: 43\n/a/44\nx-index: 44\n/a/45\nx-index: 45\n/a/46\nx-index: 46\n/a/47\nx-index: 47\n/a/48\nx-index: 48\n/a/49\nx-index: 49\n/a/50\nx-index: 50\n/a/51\nx-index: 51\n/a/52\nx-index: 52\n/a/53\nx-index: 53\n/a/54\nx-index: 54\n/a/55\nx-index: 55\n/a/56\nx-index: 56\n/a/57\nx-index: 57\n/a/58\nx-index: 58\n/a/59\nx-index: 59\n/a/60\nx-index: 60\n/a/61\nx-index: 61\n/a/62\nx-index: 62\n/a/63\nx-index: 63\n/a/64\nx-index: 64\n/a/65\nx-index: 65\n/a/66\nx-index: 66\n/a/67\nx-index: 67\n/a/68\nx-index: 68\n/a/69\nx-index: 69\n/a/70\nx-index: 70\n/a/71\nx-index: 71\n/a/72\nx-index: 72\n/a/73\nx-index: 73\n/a/74\nx-index: 74\n/a/75\nx-index: 75\n/a/76\nx-index: 76\n/a/77\nx-index: 77\n/a/78\nx-index: 78\n/a/79\nx-index: 79\n/a/80\nx-index: 80\n/a/81\nx-index: 81\n/a/82\nx-index: 82\n/a/83\nx-index: 83\n/a/84\nx-index: 84\n/a/85\nx-index: 85\n/a/86\nx-index: 86\n/a/87\nx-index: 87\n/a/88\nx-index: 88\n/a/89\nx-index: 89\n/a/90\nx-index: 90\n/a/91\nx-index: 91\n/a/92\nx-index: 92\n/a/93\nx-index: 93\n/a/94\nx-index: 94\n/a/95\nx-index: 95\n/a/96\nx-index: 96\n/a/97\nx-index: 97\n/a/98\nx-index: 98\n/a/99\nx-index: 99\n/a/100\nx-index: 100\n/a/101\nx-index: 101\n/a/102\nx-index: 102\n/a/103\nx-index: 103\n/a/104\nx-index: 104\n/a/105\nx-index: 105\n/a/106\nx-index: 106\n/a/107\nx-index: 107\n/a/108\nx-index: 108\n/a/109\nx-index: 109\n/a/110\nx-index: 110\n/a/111\nx-index: 111\n/a/112\nx-index: 112\n/a/113\nx-index: 113\n/a/114\nx-index: 114\n/a/115\nx-index: 115\n/a/116\nx-index: 116\n/a/117\nx-index: 117\n/a/118\nx-index: 118\n/a/119\nx-index: 119\n/a/120\nx-index: 120\n/a/121\nx-index: 121\n/a/122\nx-index: 122\n/a/123\nx-index: 123\n/a/124\nx-index: 124\n/a/125\nx-index: 125\n/a/126\nx-index: 126\n/a/127\nx-index: 127\n/a/128\nx-index: 128\n/a/129\nx-index: 129\n/a/130\nx-index: 130\n/a/131\nx-index: 131\n/a/132\nx-index: 132\n/a/133\nx-index: 133\n/a/134\nx-index: 134\n/a/135\nx-index: 135\n/a/136\nx-index: 136\n/a/137\nx-index: 137\n/a/138\nx-index: 138\n/a/139\nx-index: 139\n/a/140\nx-index: 140\n/a/141\nx-index: 141\n/a/142\nx-index: 142\n/a/143\nx-index: 143\n/a/144\nx-index: 144\n/a/145\nx-index: 145\n/a/146\nx-index: 146\n/a/147\nx-index: 147\n/a/148\nx-index: 148\n/a/149\nx-index: 149\n    # BUT DO GET COUNTED AS TOTAL LINES SKIPPED\n  ",
    scope: 'outside',
    peer: {
      headers: [
        {
          line: 3,
          path: '/a/0',
          set: {
            'x-index': '0',
          },
        },
        {
          line: 5,
          path: '/a/1',
          set: {
            'x-index': '1',
          },
        },
        {
          line: 7,
          path: '/a/2',
          set: {
            'x-index': '2',
          },
        },
        {
          line: 9,
          path: '/a/3',
          set: {
            'x-index': '3',
          },
        },
        {
          line: 11,
          path: '/a/4',
          set: {
            'x-index': '4',
          },
        },
        {
          line: 13,
          path: '/a/5',
          set: {
            'x-index': '5',
          },
        },
        {
          line: 15,
          path: '/a/6',
          set: {
            'x-index': '6',
          },
        },
        {
          line: 17,
          path: '/a/7',
          set: {
            'x-index': '7',
          },
        },
        {
          line: 19,
          path: '/a/8',
          set: {
            'x-index': '8',
          },
        },
        {
          line: 21,
          path: '/a/9',
          set: {
            'x-index': '9',
          },
        },
        {
          line: 23,
          path: '/a/10',
          set: {
            'x-index': '10',
          },
        },
        {
          line: 25,
          path: '/a/11',
          set: {
            'x-index': '11',
          },
        },
        {
          line: 27,
          path: '/a/12',
          set: {
            'x-index': '12',
          },
        },
        {
          line: 29,
          path: '/a/13',
          set: {
            'x-index': '13',
          },
        },
        {
          line: 31,
          path: '/a/14',
          set: {
            'x-index': '14',
          },
        },
        {
          line: 33,
          path: '/a/15',
          set: {
            'x-index': '15',
          },
        },
        {
          line: 35,
          path: '/a/16',
          set: {
            'x-index': '16',
          },
        },
        {
          line: 37,
          path: '/a/17',
          set: {
            'x-index': '17',
          },
        },
        {
          line: 39,
          path: '/a/18',
          set: {
            'x-index': '18',
          },
        },
        {
          line: 41,
          path: '/a/19',
          set: {
            'x-index': '19',
          },
        },
        {
          line: 43,
          path: '/a/20',
          set: {
            'x-index': '20',
          },
        },
        {
          line: 45,
          path: '/a/21',
          set: {
            'x-index': '21',
          },
        },
        {
          line: 47,
          path: '/a/22',
          set: {
            'x-index': '22',
          },
        },
        {
          line: 49,
          path: '/a/23',
          set: {
            'x-index': '23',
          },
        },
        {
          line: 51,
          path: '/a/24',
          set: {
            'x-index': '24',
          },
        },
        {
          line: 53,
          path: '/a/25',
          set: {
            'x-index': '25',
          },
        },
        {
          line: 55,
          path: '/a/26',
          set: {
            'x-index': '26',
          },
        },
        {
          line: 57,
          path: '/a/27',
          set: {
            'x-index': '27',
          },
        },
        {
          line: 59,
          path: '/a/28',
          set: {
            'x-index': '28',
          },
        },
        {
          line: 61,
          path: '/a/29',
          set: {
            'x-index': '29',
          },
        },
        {
          line: 63,
          path: '/a/30',
          set: {
            'x-index': '30',
          },
        },
        {
          line: 65,
          path: '/a/31',
          set: {
            'x-index': '31',
          },
        },
        {
          line: 67,
          path: '/a/32',
          set: {
            'x-index': '32',
          },
        },
        {
          line: 69,
          path: '/a/33',
          set: {
            'x-index': '33',
          },
        },
        {
          line: 71,
          path: '/a/34',
          set: {
            'x-index': '34',
          },
        },
        {
          line: 73,
          path: '/a/35',
          set: {
            'x-index': '35',
          },
        },
        {
          line: 75,
          path: '/a/36',
          set: {
            'x-index': '36',
          },
        },
        {
          line: 77,
          path: '/a/37',
          set: {
            'x-index': '37',
          },
        },
        {
          line: 79,
          path: '/a/38',
          set: {
            'x-index': '38',
          },
        },
        {
          line: 81,
          path: '/a/39',
          set: {
            'x-index': '39',
          },
        },
        {
          line: 83,
          path: '/a/40',
          set: {
            'x-index': '40',
          },
        },
        {
          line: 85,
          path: '/a/41',
          set: {
            'x-index': '41',
          },
        },
        {
          line: 87,
          path: '/a/42',
          set: {
            'x-index': '42',
          },
        },
        {
          line: 89,
          path: '/a/43',
          set: {
            'x-index': '43',
          },
        },
        {
          line: 91,
          path: '/a/44',
          set: {
            'x-index': '44',
          },
        },
        {
          line: 93,
          path: '/a/45',
          set: {
            'x-index': '45',
          },
        },
        {
          line: 95,
          path: '/a/46',
          set: {
            'x-index': '46',
          },
        },
        {
          line: 97,
          path: '/a/47',
          set: {
            'x-index': '47',
          },
        },
        {
          line: 99,
          path: '/a/48',
          set: {
            'x-index': '48',
          },
        },
        {
          line: 101,
          path: '/a/49',
          set: {
            'x-index': '49',
          },
        },
        {
          line: 103,
          path: '/a/50',
          set: {
            'x-index': '50',
          },
        },
        {
          line: 105,
          path: '/a/51',
          set: {
            'x-index': '51',
          },
        },
        {
          line: 107,
          path: '/a/52',
          set: {
            'x-index': '52',
          },
        },
        {
          line: 109,
          path: '/a/53',
          set: {
            'x-index': '53',
          },
        },
        {
          line: 111,
          path: '/a/54',
          set: {
            'x-index': '54',
          },
        },
        {
          line: 113,
          path: '/a/55',
          set: {
            'x-index': '55',
          },
        },
        {
          line: 115,
          path: '/a/56',
          set: {
            'x-index': '56',
          },
        },
        {
          line: 117,
          path: '/a/57',
          set: {
            'x-index': '57',
          },
        },
        {
          line: 119,
          path: '/a/58',
          set: {
            'x-index': '58',
          },
        },
        {
          line: 121,
          path: '/a/59',
          set: {
            'x-index': '59',
          },
        },
        {
          line: 123,
          path: '/a/60',
          set: {
            'x-index': '60',
          },
        },
        {
          line: 125,
          path: '/a/61',
          set: {
            'x-index': '61',
          },
        },
        {
          line: 127,
          path: '/a/62',
          set: {
            'x-index': '62',
          },
        },
        {
          line: 129,
          path: '/a/63',
          set: {
            'x-index': '63',
          },
        },
        {
          line: 131,
          path: '/a/64',
          set: {
            'x-index': '64',
          },
        },
        {
          line: 133,
          path: '/a/65',
          set: {
            'x-index': '65',
          },
        },
        {
          line: 135,
          path: '/a/66',
          set: {
            'x-index': '66',
          },
        },
        {
          line: 137,
          path: '/a/67',
          set: {
            'x-index': '67',
          },
        },
        {
          line: 139,
          path: '/a/68',
          set: {
            'x-index': '68',
          },
        },
        {
          line: 141,
          path: '/a/69',
          set: {
            'x-index': '69',
          },
        },
        {
          line: 143,
          path: '/a/70',
          set: {
            'x-index': '70',
          },
        },
        {
          line: 145,
          path: '/a/71',
          set: {
            'x-index': '71',
          },
        },
        {
          line: 147,
          path: '/a/72',
          set: {
            'x-index': '72',
          },
        },
        {
          line: 149,
          path: '/a/73',
          set: {
            'x-index': '73',
          },
        },
        {
          line: 151,
          path: '/a/74',
          set: {
            'x-index': '74',
          },
        },
        {
          line: 153,
          path: '/a/75',
          set: {
            'x-index': '75',
          },
        },
        {
          line: 155,
          path: '/a/76',
          set: {
            'x-index': '76',
          },
        },
        {
          line: 157,
          path: '/a/77',
          set: {
            'x-index': '77',
          },
        },
        {
          line: 159,
          path: '/a/78',
          set: {
            'x-index': '78',
          },
        },
        {
          line: 161,
          path: '/a/79',
          set: {
            'x-index': '79',
          },
        },
        {
          line: 163,
          path: '/a/80',
          set: {
            'x-index': '80',
          },
        },
        {
          line: 165,
          path: '/a/81',
          set: {
            'x-index': '81',
          },
        },
        {
          line: 167,
          path: '/a/82',
          set: {
            'x-index': '82',
          },
        },
        {
          line: 169,
          path: '/a/83',
          set: {
            'x-index': '83',
          },
        },
        {
          line: 171,
          path: '/a/84',
          set: {
            'x-index': '84',
          },
        },
        {
          line: 173,
          path: '/a/85',
          set: {
            'x-index': '85',
          },
        },
        {
          line: 175,
          path: '/a/86',
          set: {
            'x-index': '86',
          },
        },
        {
          line: 177,
          path: '/a/87',
          set: {
            'x-index': '87',
          },
        },
        {
          line: 179,
          path: '/a/88',
          set: {
            'x-index': '88',
          },
        },
        {
          line: 181,
          path: '/a/89',
          set: {
            'x-index': '89',
          },
        },
        {
          line: 183,
          path: '/a/90',
          set: {
            'x-index': '90',
          },
        },
        {
          line: 185,
          path: '/a/91',
          set: {
            'x-index': '91',
          },
        },
        {
          line: 187,
          path: '/a/92',
          set: {
            'x-index': '92',
          },
        },
        {
          line: 189,
          path: '/a/93',
          set: {
            'x-index': '93',
          },
        },
        {
          line: 191,
          path: '/a/94',
          set: {
            'x-index': '94',
          },
        },
        {
          line: 193,
          path: '/a/95',
          set: {
            'x-index': '95',
          },
        },
        {
          line: 195,
          path: '/a/96',
          set: {
            'x-index': '96',
          },
        },
        {
          line: 197,
          path: '/a/97',
          set: {
            'x-index': '97',
          },
        },
        {
          line: 199,
          path: '/a/98',
          set: {
            'x-index': '98',
          },
        },
        {
          line: 201,
          path: '/a/99',
          set: {
            'x-index': '99',
          },
        },
        {
          line: 203,
          path: '/a/100',
          set: {
            'x-index': '100',
          },
        },
      ],
      refused: [
        205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234,
        235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264,
        265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294,
        295, 296, 297, 298, 299, 300, 301, 302,
      ],
    },
    note: 'Cloudflare keeps 101 blocks (it counts before adding the last); Plinth keeps PLINTH_HEADERS_MAX_BLOCKS (100).',
    chosen: [
      {
        line: 203,
        through: 302,
        choice: 'caps',
      },
    ],
  },
  {
    id: 'cloudflare/parseHeaders/reject-paths-with-multiple-wildcards',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject paths with multiple wildcards',
    },
    file: '_headers',
    text: '\n  # Multiple wildcards in an absolute URL\n  https://*.pages.dev/*\n    x-custom: value\n  # Multiple wildcards in a relative path\n  /blog/*/posts/*\n    x-custom: value\n  # Single wildcard is fine\n  https://*.pages.dev/\n    x-custom: value\n  /blog/*\n    x-custom: value\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 9,
          path: 'https://*.pages.dev/',
          set: {
            'x-custom': 'value',
          },
        },
        {
          line: 11,
          path: '/blog/*',
          set: {
            'x-custom': 'value',
          },
        },
      ],
      refused: [3, 6],
    },
  },
  {
    id: 'cloudflare/parseHeaders/reject-paths-combining-wildcard-with-splat-placeholder',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject paths combining wildcard with :splat placeholder',
    },
    file: '_headers',
    text: '\n  # Wildcard + :splat in an absolute URL\n  https://*.pages.dev/:splat\n    x-custom: value\n  # Wildcard + :splat in a relative path\n  /blog/*/:splat\n    x-custom: value\n  # Just :splat without wildcard is fine\n  /blog/:splat\n    x-custom: value\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 9,
          path: '/blog/:splat',
          set: {
            'x-custom': 'value',
          },
        },
      ],
      refused: [3, 6],
    },
    requests: [
      {
        path: '/blog/x',
        headers: {
          'x-custom': 'value',
        },
      },
      {
        path: '/blog/x/y',
        absent: ['x-custom'],
      },
    ],
  },
  {
    id: 'cloudflare/parseHeaders/reject-malformed-urls',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/utils/tests/parseHeaders.invalid.test.ts',
      case: 'parseHeaders should reject malformed URLs',
    },
    file: '_headers',
    text: '\n  # Spaces should be URI encoded\n  /some page with spaces\n    valid: yup\n  # OK with URL escaped encoding\n  /some%20page\n    valid: yup\n  # Unescaped URLs are handled OK by Deno, so escape & pass them through\n  /://so;`me\n    valid: yup\n  /nons:/&@%+~{}ense\n    valid: yup\n  # Absolute URLs with a non-https protocol should be rejected\n  https://yeah.com\n    valid: yup\n  http://nah.com/blog\n    invalid: things\n  # Absolute URLs with a port should be rejected\n  https://nah.com:8080\n    invalid: also\n  https://nah.com:8080/blog\n    invalid: 2\n  //yeah.com/blog\n    valid: things\n  /yeah\n    valid: yup\n  /yeah.com\n    valid: yup\n  # Anything standalone is interpreted as a invalid header pair\n  nah.com\n  :\n  test:\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 3,
          path: '/some%20page%20with%20spaces',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 6,
          path: '/some%20page',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 9,
          path: '/://so;%60me',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 11,
          path: '/nons:/&@%+~%7B%7Dense',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 14,
          path: 'https://yeah.com/',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 23,
          path: '//yeah.com/blog',
          set: {
            valid: 'things',
          },
        },
        {
          line: 25,
          path: '/yeah',
          set: {
            valid: 'yup',
          },
        },
        {
          line: 27,
          path: '/yeah.com',
          set: {
            valid: 'yup',
          },
        },
      ],
      refused: [16, 19, 21, 30, 31, 32],
    },
    requests: [
      {
        path: '/some%20page%20with%20spaces',
        headers: {
          valid: 'yup',
        },
      },
    ],
  },
  {
    id: 'cloudflare/rules-engine/simple-pathname',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/rules-engine.test.ts',
      case: 'rules engine > it should match simple pathname hosts',
    },
    file: '_headers',
    text: '/test\n  x-rule: 1\n/some%20page\n  x-rule: 2\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/test',
          set: {
            'x-rule': '1',
          },
        },
        {
          line: 3,
          path: '/some%20page',
          set: {
            'x-rule': '2',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/test',
        headers: {
          'x-rule': '1',
        },
      },
      {
        path: '/some%20page',
        headers: {
          'x-rule': '2',
        },
      },
    ],
  },
  {
    id: 'cloudflare/rules-engine/cross-host',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/rules-engine.test.ts',
      case: 'rules engine > it should match cross-host requests',
    },
    file: '_headers',
    text: '/test\n  x-rule-1: 1\n/anotherpage\n  x-rule-2: 2\nhttps://custom.domain/test\n  x-rule-3: 3\nhttps://another.domain/test\n  x-rule-4: 4\n//fake.host/actually-a-path\n  x-rule-5: 5\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/test',
          set: {
            'x-rule-1': '1',
          },
        },
        {
          line: 3,
          path: '/anotherpage',
          set: {
            'x-rule-2': '2',
          },
        },
        {
          line: 5,
          path: 'https://custom.domain/test',
          set: {
            'x-rule-3': '3',
          },
        },
        {
          line: 7,
          path: 'https://another.domain/test',
          set: {
            'x-rule-4': '4',
          },
        },
        {
          line: 9,
          path: '//fake.host/actually-a-path',
          set: {
            'x-rule-5': '5',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/test',
        host: 'custom.domain',
        headers: {
          'x-rule-1': '1',
          'x-rule-3': '3',
        },
        absent: ['x-rule-2', 'x-rule-4', 'x-rule-5'],
      },
      {
        path: '//fake.host/actually-a-path',
        host: 'example.com',
        headers: {
          'x-rule-5': '5',
        },
        absent: ['x-rule-1'],
      },
    ],
  },
  {
    id: 'cloudflare/rules-engine/funky',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/rules-engine.test.ts',
      case: 'rules engine > it should escape funky rules',
    },
    file: '_headers',
    text: '/$~.%20/!+-/[bo|%7Bo%7D]...()\n  x-rule: 1\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/$~.%20/!+-/[bo|%7Bo%7D]...()',
          set: {
            'x-rule': '1',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/$~.%20/!+-/[bo%7C%7Bo%7D]...()',
        headers: {
          'x-rule': '1',
        },
      },
    ],
  },
  {
    id: 'cloudflare/rules-engine/splats-and-placeholders',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/rules-engine.test.ts',
      case: 'rules engine > it should support splats and placeholders (its path rules)',
    },
    file: '_redirects',
    text: '/foo/test/* /1/:splat 302\n/foo/* /2/:splat 302\n/blog/:code/:name /3/:name/:code 302\n/blog/* /4/:splat 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/foo/test/*',
          to: '/1/:splat',
          status: 302,
        },
        {
          line: 2,
          from: '/foo/*',
          to: '/2/:splat',
          status: 302,
        },
        {
          line: 3,
          from: '/blog/:code/:name',
          to: '/3/:name/:code',
          status: 302,
        },
        {
          line: 4,
          from: '/blog/*',
          to: '/4/:splat',
          status: 302,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/foo/test/yes',
        files: [],
        status: 302,
        location: '/1/yes',
      },
      {
        path: '/foo/test/',
        files: [],
        status: 302,
        location: '/1/',
      },
      {
        path: '/foo/test',
        files: [],
        status: 302,
        location: '/2/test',
        choice: 'splat_matches_parent',
      },
      {
        path: '/foo/',
        files: [],
        status: 302,
        location: '/2/',
      },
      {
        path: '/foo',
        files: [],
        status: 404,
        choice: 'splat_matches_parent',
      },
      {
        path: '/blog/123/tricycle',
        files: [],
        status: 302,
        location: '/3/tricycle/123',
      },
    ],
    note: 'Its last two rules are for one host name: a case of their own below.',
  },
  {
    id: 'cloudflare/rules-engine/host-placeholders',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/rules-engine.test.ts',
      case: 'rules engine > it should support splats and placeholders (its host rules)',
    },
    file: '_headers',
    text: 'https://:subdomain.pages.:tld/*\n  x-rule-5: 5/:subdomain/:tld/:splat\n  x-match-5: yes\nhttps://next.:subdomain.pages.:tld/*\n  x-rule-6: 6/:subdomain/\n  x-match-6: yes\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: 'https://:subdomain.pages.:tld/*',
          set: {
            'x-rule-5': '5/:subdomain/:tld/:splat',
            'x-match-5': 'yes',
          },
        },
        {
          line: 4,
          path: 'https://next.:subdomain.pages.:tld/*',
          set: {
            'x-rule-6': '6/:subdomain/',
            'x-match-6': 'yes',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/magic',
        host: 'my.pages.dev',
        headers: {
          'x-match-5': 'yes',
        },
        absent: ['x-match-6'],
      },
      {
        path: '/magic',
        host: 'next.my.pages.dev',
        headers: {
          'x-match-6': 'yes',
        },
        absent: ['x-match-5'],
      },
      {
        path: '/magic',
        host: 'my.pages.dev',
        headers: {
          'x-rule-5': '5/my/dev/magic',
        },
        choice: 'header_placeholders',
      },
    ],
    note: "The engine test's host rules, written as the _headers that makes them (Cloudflare reads a host in _headers; its _redirects parser refuses one).",
  },
  {
    id: 'cloudflare/handler/custom-redirects',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/handler.test.ts',
      case: '_redirects > evaluates custom redirects (its path rules)',
    },
    file: '_redirects',
    text: '/foo /bar 301\n/proxy /other 200\n/proxy-explicit /other.html 200\n/competeForwards /hostless 302\n/competeBackwards /hostless 302\n/dynamic/:seg /:seg/new-dynamic/?with#params 302\n/dynamic/:seg1/:seg2/:seg3 https://fakehost/:seg3/:seg1/:seg2/new-dynamic/?with#params 302\n/splat/* /:splat/new-splat 302\n/splat/foo/* /will-never-fire 302\n/but/this/will/* /too 302\n/but/this/* /will 302\n/partialSplat* /new-partialSplat:splat 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/foo',
          to: '/bar',
          status: 301,
        },
        {
          line: 2,
          from: '/proxy',
          to: '/other',
          status: 200,
        },
        {
          line: 3,
          from: '/proxy-explicit',
          to: '/other.html',
          status: 200,
        },
        {
          line: 4,
          from: '/competeForwards',
          to: '/hostless',
          status: 302,
        },
        {
          line: 5,
          from: '/competeBackwards',
          to: '/hostless',
          status: 302,
        },
        {
          line: 6,
          from: '/dynamic/:seg',
          to: '/:seg/new-dynamic/?with#params',
          status: 302,
        },
        {
          line: 7,
          from: '/dynamic/:seg1/:seg2/:seg3',
          to: 'https://fakehost/:seg3/:seg1/:seg2/new-dynamic/?with#params',
          status: 302,
        },
        {
          line: 8,
          from: '/splat/*',
          to: '/:splat/new-splat',
          status: 302,
        },
        {
          line: 9,
          from: '/splat/foo/*',
          to: '/will-never-fire',
          status: 302,
        },
        {
          line: 10,
          from: '/but/this/will/*',
          to: '/too',
          status: 302,
        },
        {
          line: 11,
          from: '/but/this/*',
          to: '/will',
          status: 302,
        },
        {
          line: 12,
          from: '/partialSplat*',
          to: '/new-partialSplat:splat',
          status: 302,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/foo',
        files: ['foo'],
        status: 301,
        location: '/bar',
        choice: 'file_first',
      },
      {
        path: '/foo',
        files: [],
        status: 301,
        location: '/bar',
      },
      {
        path: '/proxy',
        files: ['other'],
        status: 200,
      },
      {
        path: '/proxy-explicit',
        files: ['other.html'],
        status: 200,
      },
      {
        path: '/competeForwards',
        files: [],
        status: 302,
        location: '/hostless',
      },
      {
        path: '/dynamic/abc',
        files: [],
        status: 302,
        location: '/abc/new-dynamic/?with#params',
      },
      {
        path: '/dynamic/a/b/c',
        files: [],
        status: 302,
        location: 'https://fakehost/c/a/b/new-dynamic/?with#params',
      },
      {
        path: '/splat/foo/bar/baz',
        files: [],
        status: 302,
        location: '/foo/bar/baz/new-splat',
      },
      {
        path: '/splat/',
        files: [],
        status: 302,
        location: '/new-splat',
      },
      {
        path: '/splat/foo/nope',
        files: [],
        status: 302,
        location: '/foo/nope/new-splat',
      },
      {
        path: '/but/this/match',
        files: [],
        status: 302,
        location: '/will',
      },
      {
        path: '/but/this/will/match',
        files: [],
        status: 302,
        location: '/too',
      },
      {
        path: '/partialSplatfoo/bar/baz',
        files: [],
        status: 302,
        location: '/new-partialSplatfoo/bar/baz',
      },
    ],
    note: 'Its rules for one host name and its placeholder inside a segment are cases of their own below.',
  },
  {
    id: 'cloudflare/handler/host-rules',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/handler.test.ts',
      case: '_redirects > evaluates custom redirects (its host rules)',
    },
    file: '_redirects',
    text: '/competeForwards /hostless 302\nhttps://example.com/competeForwards /withhost 302\nhttps://example.com/competeBackwards /withhost 302\n/competeBackwards /hostless 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/competeForwards',
          to: '/hostless',
          status: 302,
        },
        {
          line: 2,
          from: 'https://example.com/competeForwards',
          to: '/withhost',
          status: 302,
        },
        {
          line: 3,
          from: 'https://example.com/competeBackwards',
          to: '/withhost',
          status: 302,
        },
        {
          line: 4,
          from: '/competeBackwards',
          to: '/hostless',
          status: 302,
        },
      ],
      refused: [],
    },
    chosen: [
      {
        line: 2,
        choice: 'host_rules_in_redirects',
      },
      {
        line: 3,
        choice: 'host_rules_in_redirects',
      },
    ],
    requests: [
      {
        path: '/competeForwards',
        host: 'example.com',
        files: [],
        status: 302,
        location: '/hostless',
      },
      {
        path: '/competeBackwards',
        host: 'example.com',
        files: [],
        status: 302,
        location: '/withhost',
      },
      {
        path: '/competeBackwards',
        host: 'other.example',
        files: [],
        status: 302,
        location: '/hostless',
      },
    ],
    note: "The handler is given these rules as configuration; from a _redirects file Cloudflare's parser would refuse lines 2 and 3 (a from with a host), which Plinth reads as Netlify does.",
  },
  {
    id: 'cloudflare/handler/partial-placeholder',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/handler.test.ts',
      case: '_redirects > evaluates custom redirects (its placeholder inside a segment)',
    },
    file: '_redirects',
    text: '/partialPlaceholder:placeholder /new-partialPlaceholder:placeholder 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/partialPlaceholder:placeholder',
          to: '/new-partialPlaceholder:placeholder',
          status: 302,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/partialPlaceholderfoo',
        files: [],
        status: 302,
        location: '/new-partialPlaceholderfoo',
      },
    ],
  },
  {
    id: 'cloudflare/handler/double-slash',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/handler.test.ts',
      case: '_redirects > should prevent external redirects via double slash',
    },
    file: '_redirects',
    text: '/foo/* /:splat 302\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/foo/*',
          to: '/:splat',
          status: 302,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/foo//google.com',
        files: [],
        status: 302,
        location: '/google.com',
      },
    ],
  },
  {
    id: 'cloudflare/handler/custom-headers',
    host: 'cloudflare',
    source: {
      repo: 'cloudflare/workers-sdk',
      commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
      test: 'packages/workers-shared/asset-worker/tests/handler.test.ts',
      case: '_headers > attaches custom headers',
    },
    file: '_headers',
    text: '/\n  X-Custom-Header: Custom-Value\n/foo\n  X-Custom-Foo-Header: Custom-Foo-Value\n/bang/:placeheld\n  X-Custom-Bang-Header: Custom-Bang-Value :placeheld\n/art/*\n  X-Custom-Art-Header: Custom-Art-Value :splat\n  Set-Cookie: me\n/art/nested/attack\n  Set-Cookie: me too\n/system/override\n  ETag: very rogue\n/system/underride\n  ! ETAg\n/art/nested/unset/attack*\n  ! Set-Cookie\n  Set-Cookie: hijack\n/art/nested/unset/attack/totalunset\n  ! Set-Cookie\n/foo.html\n  X-Custom-Foo-HTML-Header: Custom-Foo-HTML-Value\n',
    scope: 'outside',
    peer: {
      headers: [
        {
          line: 1,
          path: '/',
          set: {
            'X-Custom-Header': 'Custom-Value',
          },
        },
        {
          line: 3,
          path: '/foo',
          set: {
            'X-Custom-Foo-Header': 'Custom-Foo-Value',
          },
        },
        {
          line: 5,
          path: '/bang/:placeheld',
          set: {
            'X-Custom-Bang-Header': 'Custom-Bang-Value :placeheld',
          },
        },
        {
          line: 7,
          path: '/art/*',
          set: {
            'X-Custom-Art-Header': 'Custom-Art-Value :splat',
            'Set-Cookie': 'me',
          },
        },
        {
          line: 10,
          path: '/art/nested/attack',
          set: {
            'Set-Cookie': 'me too',
          },
        },
        {
          line: 12,
          path: '/system/override',
          set: {
            ETag: 'very rogue',
          },
        },
        {
          line: 14,
          path: '/system/underride',
          set: {},
          remove: ['ETAg'],
        },
        {
          line: 16,
          path: '/art/nested/unset/attack*',
          set: {
            'Set-Cookie': 'hijack',
          },
          remove: ['Set-Cookie'],
        },
        {
          line: 19,
          path: '/art/nested/unset/attack/totalunset',
          set: {},
          remove: ['Set-Cookie'],
        },
        {
          line: 21,
          path: '/foo.html',
          set: {
            'X-Custom-Foo-HTML-Header': 'Custom-Foo-HTML-Value',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        headers: {
          'X-Custom-Header': 'Custom-Value',
        },
        absent: ['X-Custom-Foo-Header'],
      },
      {
        path: '/bang/baz',
        headers: {
          'X-Custom-Bang-Header': 'Custom-Bang-Value baz',
        },
        choice: 'header_placeholders',
      },
      {
        path: '/bang/baz/abba',
        absent: ['X-Custom-Bang-Header'],
      },
    ],
    note: 'Plinth refuses Set-Cookie and ETag, and removing ETag (they belong to the server).',
  },
];

export const CLOUDFLARE_CASES: PeerCase[] = [...WRITTEN, ...built()];

/** The cases whose input the test builds from a template: built the same way here. */
function built(): PeerCase[] {
  const source = (test: string, name: string) => ({
    repo: 'cloudflare/workers-sdk' as const,
    commit: 'f8308360283f97d33e188aee2e19c1ef9c09524a',
    test: `packages/workers-shared/utils/tests/${test}`,
    case: name,
  });
  const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
  const defaulted = (line: number, from: string, to: string) => ({ line, from, to, status: 302, defaulted: true });
  const statics = (n: number) => Array.from({ length: n }, (_, i) => `/a/${i} /b/${i}`).join('\n');
  const dynamics = (n: number) => Array.from({ length: n }, (_, i) => `/a/${i}/* /b/${i}/:splat`).join('\n');
  const counted = (body: string) => `\n    # COMMENTS DON'T COUNT TOWARDS TOTAL VALID RULES\n    ${body}\n    # BUT DO GET COUNTED AS TOTAL LINES SKIPPED\n  `;
  return [
    {
      id: 'cloudflare/parseRedirects/reject-lines-longer-than-2000-chars',
      host: 'cloudflare',
      source: source('parseRedirects.invalid.test.ts', 'parseRedirects should reject lines longer than ${maxLineLength} chars'),
      file: '_redirects',
      text: `\n    # Valid entry\n    /a /b\n    # Jumbo comment line OK, ignored as normal\n    ${'#'.repeat(2001)}\n    # Huge path names rejected\n    /${'a'.repeat(2000)} /${'b'.repeat(2000)} 301\n  `,
      scope: 'dialect',
      peer: { redirects: [defaulted(3, '/a', '/b')], refused: [7] },
    },
    {
      id: 'cloudflare/parseRedirects/reject-dynamic-rules-after-the-first-100',
      host: 'cloudflare',
      source: source('parseRedirects.invalid.test.ts', 'parseRedirects should reject any dynamic rules after the first 100'),
      file: '_redirects',
      text: counted(dynamics(150)),
      scope: 'outside',
      peer: { redirects: range(0, 100).map((i) => defaulted(3 + i, `/a/${i}/*`, `/b/${i}/:splat`)), refused: range(103, 153) },
      chosen: [{ line: 103, through: 152, choice: 'caps' }],
      note: 'Cloudflare keeps the first 100 rules with * or :name; Plinth takes up to PLINTH_REDIRECTS_MAX_RULES rules of any kind.',
    },
    {
      id: 'cloudflare/parseRedirects/reject-static-rules-after-the-first-2000',
      host: 'cloudflare',
      source: source('parseRedirects.invalid.test.ts', 'parseRedirects should reject any static rules after the first ${maxStaticRedirectRules}'),
      file: '_redirects',
      text: counted(statics(2050)),
      scope: 'dialect',
      peer: { redirects: range(0, 2000).map((i) => defaulted(3 + i, `/a/${i}`, `/b/${i}`)), refused: range(2003, 2053) },
    },
    {
      id: 'cloudflare/parseRedirects/reject-a-combination-of-static-and-dynamic-rules',
      host: 'cloudflare',
      source: source('parseRedirects.invalid.test.ts', 'parseRedirects should reject a combination of lots of static and dynamic rules'),
      file: '_redirects',
      text: `\n    # COMMENTS DON'T COUNT TOWARDS TOTAL VALID RULES\n    ${statics(2050)}\n      ${dynamics(150)}\n    # BUT DO GET COUNTED AS TOTAL LINES SKIPPED\n  `,
      scope: 'outside',
      peer: {
        redirects: [
          ...range(0, 2000).map((i) => defaulted(3 + i, `/a/${i}`, `/b/${i}`)),
          ...range(0, 100).map((i) => defaulted(2053 + i, `/a/${i}/*`, `/b/${i}/:splat`)),
        ],
        refused: [...range(2003, 2053), ...range(2153, 2203)],
      },
      chosen: [{ line: 2053, through: 2202, choice: 'caps' }],
      note: 'Cloudflare counts rules with * or :name (100) apart from the others (2000); Plinth counts them together.',
    },
    {
      id: 'cloudflare/parseHeaders/reject-lines-longer-than-2000-chars',
      host: 'cloudflare',
      source: source('parseHeaders.invalid.test.ts', 'parseHeaders should reject lines longer than 2000 chars'),
      file: '_headers',
      text: `\n    # Valid entry\n    /a\n      Name: Value\n    # Jumbo comment line OK, ignored as normal\n    ${'#'.repeat(1001)}\n    # Huge path names rejected\n    /b\n      Name: Value\n      ${'a'.repeat(1001)}: ${'b'.repeat(1001)}\n  `,
      scope: 'dialect',
      peer: {
        headers: [
          { line: 3, path: '/a', set: { name: 'Value' } },
          { line: 8, path: '/b', set: { name: 'Value' } },
        ],
        refused: [10],
      },
    },
  ];
}
