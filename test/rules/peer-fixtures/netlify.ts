/**
 * netlify/build at 21737c06df2466a7bb58c5a1ff0f63c828a4a5d4: the verdicts of packages/redirect-parser/tests/line-parser.test.ts and
 * packages/headers-parser/tests/line-parser.test.ts on their fixture files (each file's text copied
 * here), and packages/headers-parser/tests/for-regexp.test.ts (which paths a path line matches,
 * read off the regular expression it asserts) replayed as `_headers` files. Left out: the
 * large_45000_redirects_file and large_headers_file inputs of the benchmarks (no verdict), the
 * duplicate and success_two files (no test reads them), netlify.toml cases, and the for-regexp rows
 * whose path does not start with / (a `_headers` line like that is no path line).
 */
import type { PeerCase } from './types.js';

export const NETLIFY_CASES: PeerCase[] = [
  {
    id: 'netlify/redirects/empty',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | empty',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/empty',
    },
    file: '_redirects',
    text: '',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/empty_line',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | empty_line',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/empty_line',
    },
    file: '_redirects',
    text: '/blog/my-post.php  /blog/my-post\n\n/blog/my-post-two.php  /blog/my-post-two\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/blog/my-post.php',
          to: '/blog/my-post',
          status: 301,
          defaulted: true,
        },
        {
          line: 3,
          from: '/blog/my-post-two.php',
          to: '/blog/my-post-two',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/blog/my-post.php',
        status: 301,
        location: '/blog/my-post',
      },
    ],
  },
  {
    id: 'netlify/redirects/multiple_lines',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | multiple_lines',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/multiple_lines',
    },
    file: '_redirects',
    text: '/10thmagnitude   http://www.10thmagnitude.com/   301\n/bananastand     http://eepurl.com/Lgde5         301\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/10thmagnitude',
          to: 'http://www.10thmagnitude.com/',
          status: 301,
        },
        {
          line: 2,
          from: '/bananastand',
          to: 'http://eepurl.com/Lgde5',
          status: 301,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/bananastand',
        status: 301,
        location: 'http://eepurl.com/Lgde5',
      },
    ],
  },
  {
    id: 'netlify/redirects/line_trim',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | line_trim',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/line_trim',
    },
    file: '_redirects',
    text: '  /home              /\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/home',
          to: '/',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/comment_full',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | comment_full',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/comment_full',
    },
    file: '_redirects',
    text: '# this is just an old leftover\n/blog/my-post.php  /blog/my-post\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 2,
          from: '/blog/my-post.php',
          to: '/blog/my-post',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/comment_inline',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | comment_inline',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/comment_inline',
    },
    file: '_redirects',
    text: '/blog/my-post.php  /blog/my-post # this is just an old leftover\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/blog/my-post.php',
          to: '/blog/my-post',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/blog/my-post.php',
        status: 301,
        location: '/blog/my-post',
      },
    ],
  },
  {
    id: 'netlify/redirects/from_simple',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | from_simple',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/from_simple',
    },
    file: '_redirects',
    text: '/home              /\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/home',
          to: '/',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/home',
        status: 301,
        location: '/',
      },
    ],
  },
  {
    id: 'netlify/redirects/from_absolute_uri',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | from_absolute_uri',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/from_absolute_uri',
    },
    file: '_redirects',
    text: 'http://hello.bitballoon.com/* http://www.hello.com/:splat\n',
    scope: 'outside',
    peer: {
      redirects: [
        {
          line: 1,
          from: 'http://hello.bitballoon.com/*',
          to: 'http://www.hello.com/:splat',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/b',
        host: 'hello.bitballoon.com',
        files: [],
        status: 301,
        location: 'http://www.hello.com/a/b',
      },
      {
        path: '/a/b',
        host: 'other.example',
        files: [],
        status: 404,
      },
    ],
  },
  {
    id: 'netlify/redirects/query',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | query',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/query',
    },
    file: '_redirects',
    text: '/      page=news      /news\n/blog  post=:post_id  /blog/:post_id\n/      _escaped_fragment_=/about    /about\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/',
          to: '/news',
          status: 301,
          defaulted: true,
          query: {
            page: 'news',
          },
        },
        {
          line: 2,
          from: '/blog',
          to: '/blog/:post_id',
          status: 301,
          defaulted: true,
          query: {
            post: ':post_id',
          },
        },
        {
          line: 3,
          from: '/',
          to: '/about',
          status: 301,
          defaulted: true,
          query: {
            _escaped_fragment_: '/about',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/blog?post=12',
        status: 301,
        location: '/blog/12',
      },
    ],
  },
  {
    id: 'netlify/redirects/to_anchor',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | to_anchor',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/to_anchor',
    },
    file: '_redirects',
    text: '/blog/my-post-ads.php  /blog/my-post#ads # this is a valid anchor with a comment\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/blog/my-post-ads.php',
          to: '/blog/my-post#ads',
          status: 301,
          defaulted: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/blog/my-post-ads.php',
        status: 301,
        location: '/blog/my-post#ads',
      },
    ],
  },
  {
    id: 'netlify/redirects/to_splat_no_force',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | to_splat_no_force',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/to_splat_no_force',
    },
    file: '_redirects',
    text: '/*  https://www.bitballoon.com/:splat 301\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/*',
          to: 'https://www.bitballoon.com/:splat',
          status: 301,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/b',
        files: [],
        status: 301,
        location: 'https://www.bitballoon.com/a/b',
      },
    ],
  },
  {
    id: 'netlify/redirects/to_splat_force',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | to_splat_force',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/to_splat_force',
    },
    file: '_redirects',
    text: '/*  https://www.bitballoon.com/:splat 301!\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/*',
          to: 'https://www.bitballoon.com/:splat',
          status: 301,
          force: true,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/index.html',
        status: 301,
        location: 'https://www.bitballoon.com/index.html',
      },
    ],
  },
  {
    id: 'netlify/redirects/to_path_forward',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | to_path_forward',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/to_path_forward',
    },
    file: '_redirects',
    text: '/admin/* 200\n/admin/* 200!\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/admin/*',
          to: '/admin/:splat',
          status: 200,
        },
        {
          line: 2,
          from: '/admin/*',
          to: '/admin/:splat',
          status: 200,
          force: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/proxy',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | proxy',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/proxy',
    },
    file: '_redirects',
    text: '/api/*  https://api.bitballoon.com/*   200\n',
    scope: 'proxy',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/api/*',
          to: 'https://api.bitballoon.com/*',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/status',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | status',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/status',
    },
    file: '_redirects',
    text: '/test https://www.bitballoon.com/test=hello 301\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/test',
          to: 'https://www.bitballoon.com/test=hello',
          status: 301,
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/test',
        status: 301,
        location: 'https://www.bitballoon.com/test=hello',
      },
    ],
  },
  {
    id: 'netlify/redirects/status_force',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | status_force',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/status_force',
    },
    file: '_redirects',
    text: '/test https://www.bitballoon.com/test=hello 301!\n',
    scope: 'dialect',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/test',
          to: 'https://www.bitballoon.com/test=hello',
          status: 301,
          force: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_country',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_country',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_country',
    },
    file: '_redirects',
    text: '/  /china 302 Country=ch,tw\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/',
          to: '/china',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_country_language',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_country_language',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_country_language',
    },
    file: '_redirects',
    text: '/  /china 302 Country=il Language=en\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/',
          to: '/china',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_role',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_role',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_role',
    },
    file: '_redirects',
    text: '/admin/*  /admin/:splat 200 Role=admin\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/admin/*',
          to: '/admin/:splat',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_roles',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_roles',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_roles',
    },
    file: '_redirects',
    text: '/member/*  /member/:splat 200 Role=admin,member\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/member/*',
          to: '/member/:splat',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_query',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_query',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_query',
    },
    file: '_redirects',
    text: '/donate source=:source email=:email /donate/usa?source=:source&email=:email 302 Country=us\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/donate',
          to: '/donate/usa?source=:source&email=:email',
          status: 302,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_country_case',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_country_case',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_country_case',
    },
    file: '_redirects',
    text: '/old-path /new-path 200 Country=US\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/old-path',
          to: '/new-path',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_language_case',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_language_case',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_language_case',
    },
    file: '_redirects',
    text: '/old-path /new-path 200 Language=en\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/old-path',
          to: '/new-path',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/conditions_role_case',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | conditions_role_case',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/conditions_role_case',
    },
    file: '_redirects',
    text: '/old-path /new-path 200 Role=admin\n',
    scope: 'visitor_condition',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/old-path',
          to: '/new-path',
          status: 200,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/signed',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | signed',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/signed',
    },
    file: '_redirects',
    text: '/api/*   https://api.example.com/:splat   200!  Sign=API_SECRET\n',
    scope: 'proxy',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/api/*',
          to: 'https://api.example.com/:splat',
          status: 200,
          force: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/signed_backward_compat',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Parses _redirects | signed_backward_compat',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/signed_backward_compat',
    },
    file: '_redirects',
    text: '/api/*   https://api.example.com/:splat   200!  signed=API_SECRET\n',
    scope: 'proxy',
    peer: {
      redirects: [
        {
          line: 1,
          from: '/api/*',
          to: 'https://api.example.com/:splat',
          status: 200,
          force: true,
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/redirects/invalid_url',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_url',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_url',
    },
    file: '_redirects',
    text: 'http:// /to\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/redirects/invalid_dot_netlify_url',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_dot_netlify_url',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_dot_netlify_url',
    },
    file: '_redirects',
    text: 'http://example.com/.netlify/from /to\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
    chosen: [
      {
        line: 1,
        choice: 'netlify_paths',
      },
    ],
  },
  {
    id: 'netlify/redirects/invalid_dot_netlify_path',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_dot_netlify_path',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_dot_netlify_path',
    },
    file: '_redirects',
    text: '/.netlify/from /to\n',
    scope: 'outside',
    peer: {
      redirects: [],
      refused: [1],
    },
    chosen: [
      {
        line: 1,
        choice: 'netlify_paths',
      },
    ],
  },
  {
    id: 'netlify/redirects/invalid_status',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_status',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_status',
    },
    file: '_redirects',
    text: '/from /to not_a_status\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/redirects/invalid_no_to_no_status',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_no_to_no_status',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_no_to_no_status',
    },
    file: '_redirects',
    text: '/m/scge/legal\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/redirects/invalid_no_to_status',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_no_to_status',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_no_to_status',
    },
    file: '_redirects',
    text: '/swfobject.html?detectflash=false 301\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/redirects/invalid_no_to_query',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_no_to_query',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_no_to_query',
    },
    file: '_redirects',
    text: '/m/scge/legal source=:source\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/redirects/invalid_no_slash',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_no_slash',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_no_slash',
    },
    file: '_redirects',
    text: '/\tindex.html\n/blog\tblog.html\n/trt-therapy-san-diego\ttrt-therapy-san-diego.html\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [1, 2, 3],
    },
  },
  {
    id: 'netlify/redirects/invalid_mistaken_headers',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/redirect-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_mistaken_headers',
      fixture: 'packages/redirect-parser/tests/fixtures/redirects_file/invalid_mistaken_headers',
    },
    file: '_redirects',
    text: '# Protect backups with Basic Auth\n/backup/*\n    Basic-Auth: dev@terraeclipse.com:nud-feud-contour\n',
    scope: 'dialect',
    peer: {
      redirects: [],
      refused: [2, 3],
    },
  },
  {
    id: 'netlify/headers/empty',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | empty',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/empty',
    },
    file: '_headers',
    text: '',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [],
    },
  },
  {
    id: 'netlify/headers/trim_line_path',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | trim_line_path',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/trim_line_path',
    },
    file: '_headers',
    text: '  /path\n',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [],
    },
    note: 'An indented path line with no headers under it: an empty block, nothing to send.',
  },
  {
    id: 'netlify/headers/trim_line_values',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | trim_line_values',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/trim_line_values',
    },
    file: '_headers',
    text: '/path\ntest: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/path',
        headers: {
          test: 'one',
        },
      },
    ],
  },
  {
    id: 'netlify/headers/empty_line',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | empty_line',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/empty_line',
    },
    file: '_headers',
    text: '/path\n\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/headers/comment',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | comment',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/comment',
    },
    file: '_headers',
    text: '/path\n  # comment\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/headers/success',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | success',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/success',
    },
    file: '_headers',
    text: '/path\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/path',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/path/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/other',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers/no_colon',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | no_colon',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/no_colon',
    },
    file: '_headers',
    text: '/path\n  test = one\n',
    scope: 'outside',
    peer: {
      headers: [],
      refused: [],
    },
    chosen: [
      {
        line: 2,
        choice: 'header_without_colon',
      },
    ],
  },
  {
    id: 'netlify/headers/trim_name',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | trim_name',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/trim_name',
    },
    file: '_headers',
    text: '/path\n  test : one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/headers/trim_value',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | trim_value',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/trim_value',
    },
    file: '_headers',
    text: '/path\n  test:   one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
  },
  {
    id: 'netlify/headers/multiple_values',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Parses _headers | multiple_values',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/multiple_values',
    },
    file: '_headers',
    text: '/path\n  test: one\n  test: two\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/path',
          set: {
            test: 'one, two',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/path',
        headers: {
          test: 'one, two',
        },
      },
    ],
  },
  {
    id: 'netlify/headers/invalid_value_name',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_value_name',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/invalid_value_name',
    },
    file: '_headers',
    text: '/path\n  : one\n',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [2],
    },
  },
  {
    id: 'netlify/headers/invalid_value_string',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_value_string',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/invalid_value_string',
    },
    file: '_headers',
    text: '/path\n  test:\n',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [2],
    },
  },
  {
    id: 'netlify/headers/invalid_for_order',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/line-parser.test.ts',
      case: 'Validate syntax errors | invalid_for_order',
      fixture: 'packages/headers-parser/tests/fixtures/headers_file/invalid_for_order',
    },
    file: '_headers',
    text: '  test: one\n/path\n',
    scope: 'dialect',
    peer: {
      headers: [],
      refused: [1],
    },
  },
  {
    id: 'netlify/headers-path/single_slash',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | single_slash',
    },
    file: '_headers',
    text: '/\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/whitespaces',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | whitespaces',
    },
    file: '_headers',
    text: '/ /\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/ /',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/trim_end',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | trim_end',
    },
    file: '_headers',
    text: '/a \n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/b',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/trim_start',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | trim_start',
    },
    file: '_headers',
    text: '/ a\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/ a',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/%20a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/placeholder',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | placeholder',
    },
    file: '_headers',
    text: '/a/:b\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/:b',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/x',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/x/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
      {
        path: '/a/x/y',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_slash',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_slash',
    },
    file: '_headers',
    text: '/*\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/*',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/x',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/x/y.css',
        headers: {
          test: 'one',
        },
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_append',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_append',
    },
    file: '_headers',
    text: '/*/a\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/*/a',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/x/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/x/y/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/x/b',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_prepend',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_prepend',
    },
    file: '_headers',
    text: '/a/*\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/*',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/x/y',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/b/x',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_surround',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_surround',
    },
    file: '_headers',
    text: '/a/*/b\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/*/b',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/x/b',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/x/y/b',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/b',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/x',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_multiple',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_multiple',
    },
    file: '_headers',
    text: '/a/*/*\n  test: one\n',
    scope: 'outside',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/*/*',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/x/y',
        headers: {
          test: 'one',
        },
        choice: 'one_splat',
      },
    ],
    chosen: [
      {
        line: 1,
        choice: 'one_splat',
      },
    ],
  },
  {
    id: 'netlify/headers-path/wildcard_inside',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | wildcard_inside',
    },
    file: '_headers',
    text: '/a/b*c\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/b*c',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/bc',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/bxc',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/bx/yc',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/bx',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/trailing_slash',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | trailing_slash',
    },
    file: '_headers',
    text: '/a/\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a/',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/b',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/regexp_escape',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | regexp_escape',
    },
    file: '_headers',
    text: '/a.\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '/a.',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a.',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/ab',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/double_slash_single',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | double_slash_single',
    },
    file: '_headers',
    text: '//\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '//',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
    ],
  },
  {
    id: 'netlify/headers-path/double_slash_multiple',
    host: 'netlify',
    source: {
      repo: 'netlify/build',
      commit: '21737c06df2466a7bb58c5a1ff0f63c828a4a5d4',
      test: 'packages/headers-parser/tests/for-regexp.test.ts',
      case: 'Add forRegExp when minimal is false | double_slash_multiple',
    },
    file: '_headers',
    text: '//a//b//\n  test: one\n',
    scope: 'dialect',
    peer: {
      headers: [
        {
          line: 1,
          path: '//a//b//',
          set: {
            test: 'one',
          },
        },
      ],
      refused: [],
    },
    requests: [
      {
        path: '/a/b',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a/b/',
        headers: {
          test: 'one',
        },
      },
      {
        path: '/a',
        absent: ['test'],
      },
    ],
  },
];
