// nginx as the reference server: the bench writes its own config and runs it as a child process.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChild } from './proc.mjs';

/**
 * Config tuned the way an operator would for static files: sendfile, open_file_cache sized for the
 * whole working set, no access log, long keep-alive. `types` maps extension → the exact
 * Content-Type Plinth sends, and add_header mirrors Plinth's headers, so both send like responses.
 */
export function writeNginxConfig({ workDir, sitesDir, port, workers, siteDomain, mainSite, types }) {
  const tmp = join(workDir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const typeLines = Object.entries(types)
    .map(([ext, type]) => `    "${type}" ${ext};`)
    .join('\n');
  const domainRe = siteDomain.replace(/\./g, '\\.');
  const headers = `
    index index.html;
    etag on;
    add_header Cache-Control $plinth_cache_control;
    add_header X-Content-Type-Options nosniff;
    add_header Referrer-Policy strict-origin-when-cross-origin;
    add_header Vary $plinth_vary;`;
  const conf = `# Written by bench/serve.mjs; recreated every run.
daemon off;
master_process on;
user root;
worker_processes ${workers};
pid ${join(workDir, `nginx-${workers}w.pid`)};
error_log ${join(workDir, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  types {
${typeLines}
  }
  default_type application/octet-stream;
  access_log off;
  server_tokens off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65s;
  keepalive_requests 100000;
  # Each server idles for minutes while the bench measures the others (bench/serve.mjs rounds);
  # Plinth's caches do not expire with time, so nginx's should not either.
  open_file_cache max=20000 inactive=1h;
  open_file_cache_valid 60s;
  open_file_cache_errors on;
  # Precompressed files (<file>.gz, written by the bench for text files) for clients that accept
  # gzip, as Plinth serves its stored variants; no compression on the fly.
  gzip_static on;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  # $uri is the final one (after index.html), so / gets the HTML policy like in Plinth.
  map $uri $plinth_cache_control { ~\\.html$ "public, max-age=60"; default "public, max-age=300"; }
  # Plinth varies only compressible types; an empty value makes add_header send nothing.
  map $uri $plinth_vary { ~\\.(html|css|js|svg|json|txt)$ "Accept-Encoding"; default ""; }
  server {
    # reuseport spreads connections over workers like Plinth's SO_REUSEPORT threads.
    listen 127.0.0.1:${port} reuseport default_server;
    server_name ${mainSite}.${siteDomain};
    root ${join(sitesDir, mainSite)};${headers}
  }
  server {
    listen 127.0.0.1:${port};
    server_name "~^(?<site>[a-z0-9-]+)\\.${domainRe}$";
    root ${sitesDir}/$site;${headers}
  }
}
`;
  const confPath = join(workDir, `nginx-${workers}w.conf`);
  writeFileSync(confPath, conf);
  return confPath;
}

/** Starts nginx in the foreground (daemon off) so the child PID is the master; stop it by PID. */
export function startNginx(confPath, workDir, cpus) {
  return startChild('nginx', ['-c', confPath, '-p', workDir, '-e', join(workDir, 'nginx-error.log')], {
    logPath: join(workDir, 'nginx-stdout.log'),
    cpus,
  });
}
