import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { sha256, siteFiles, type Corpus } from './corpus.js';
import { CONTENT_TYPES } from './site-plan.js';

/**
 * `plinth load export`: the corpus as a folder tree (`sites/<name>/…`, the bytes rebuilt from the
 * seeds and checked against the corpus's sha256) and an nginx configuration (`nginx.conf`, for the
 * `http` context) that serves it as Plinth does: the site from the Host header's first label,
 * `/about` from about.html and `/docs/` from docs/index.html, the site's 404.html, the `_redirects`
 * of the corpus, the same content types, Cache-Control and security headers, and gzip. So
 * `plinth load run --compare` can put Plinth and nginx side by side on the same files.
 */
export interface ExportResult {
  sites: number;
  files: number;
  bytes: number;
  config: string;
}

export function exportCorpus(corpus: Corpus, options: { dir: string; listen: string }): ExportResult {
  const root = resolve(options.dir);
  const redirects: Array<[string, string]> = [];
  let files = 0;
  let bytes = 0;
  for (const site of corpus.sites) {
    const made = siteFiles(site.seed, corpus.scale);
    const hostname = new URL(site.url).hostname;
    for (const expected of site.files) {
      const file = made.find((candidate) => candidate.path === expected.path);
      if (!file || sha256(file.bytes) !== expected.sha256)
        throw new Error(`${site.name}/${expected.path} cannot be rebuilt from the corpus's seed (made by another version?)`);
      const path = join(root, 'sites', site.name, ...file.path.split('/'));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.bytes);
      files++;
      bytes += file.bytes.length;
      if (file.path === '_redirects') {
        for (const line of file.bytes.toString('utf8').split('\n')) {
          const [from, to] = line.trim().split(/\s+/);
          if (from?.startsWith('/') && to) redirects.push([`${hostname}${from}`, to]);
        }
      }
    }
  }
  const config = nginxConfig({ root, listen: options.listen, redirects });
  writeFileSync(join(root, 'nginx.conf'), config);
  return { sites: corpus.sites.length, files, bytes, config: join(root, 'nginx.conf') };
}

const quote = (value: string): string => `"${value.replace(/["\\$]/g, (c) => `\\${c}`)}"`;

export function nginxConfig(options: { root: string; listen: string; redirects: Array<[string, string]> }): string {
  const types = Object.entries(CONTENT_TYPES).map(([ext, type]) => `        ${type.split(';')[0]} ${ext};`);
  return `# Written by \`plinth load export\`: the load corpus served as Plinth serves it, for
# \`plinth load run --compare\`. Include it in nginx's http context (e.g. conf.d/).
map_hash_bucket_size 256;
map_hash_max_size 262144;
map $sent_http_content_type $plinth_load_cache_control {
    ~^text/html "public, max-age=60";
    default "public, max-age=300";
}
map "$host$uri" $plinth_load_redirect {
    default "";
${options.redirects.map(([from, to]) => `    ${quote(from)} ${quote(to)};`).join('\n')}
}
server {
    listen ${options.listen};
    server_name ~^(?<plinth_load_site>[a-z0-9-]+)\\.;
    root "${join(options.root, 'sites').replace(/["\\$]/g, (c) => `\\${c}`)}/$plinth_load_site";
    types {
${types.join('\n')}
    }
    default_type application/octet-stream;
    charset utf-8;
    charset_types text/css text/javascript;
    gzip on;
    gzip_vary on;
    gzip_min_length 256;
    gzip_types text/css text/javascript;
    server_tokens off;
    add_header Cache-Control $plinth_load_cache_control always;
    add_header X-Content-Type-Options nosniff always;
    add_header Referrer-Policy strict-origin-when-cross-origin always;
    error_page 404 /404.html;
    location = /_redirects { return 404; }
    location = /_headers { return 404; }
    location / {
        if ($plinth_load_redirect) { return 301 $plinth_load_redirect; }
        try_files $uri $uri.html $uri/ =404;
    }
}
`;
}
