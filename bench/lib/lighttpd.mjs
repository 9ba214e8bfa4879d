// lighttpd as a second reference server (one process, event loop, sendfile), with the same
// corpus, host routing, content types and response headers as the nginx config.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startChild } from './proc.mjs';

export function writeLighttpdConfig({ workDir, sitesDir, port, siteDomain, mainSite, types }) {
  const mime = Object.entries(types)
    .map(([ext, type]) => `  ".${ext}" => "${type}"`)
    .join(',\n');
  const domainRe = siteDomain.replace(/\./g, '\\.');
  const conf = `# Written by bench/serve.mjs; recreated every run.
server.modules = ("mod_evhost", "mod_setenv")
server.bind = "127.0.0.1"
server.port = ${port}
server.document-root = "${join(sitesDir, mainSite)}"
server.pid-file = "${join(workDir, 'lighttpd.pid')}"
server.errorlog = "${join(workDir, 'lighttpd-error.log')}"
server.max-keep-alive-requests = 100000
server.max-keep-alive-idle = 65
server.max-fds = 8192
server.stat-cache-engine = "simple"
server.tag = ""
index-file.names = ("index.html")
mimetype.assign = (
${mime}
)
# s00042.sites.localhost: %3 is the first label.
$HTTP["host"] =~ "^[a-z0-9-]+\\.${domainRe}$" { evhost.path-pattern = "${sitesDir}/%3/" }
setenv.add-response-header = ("X-Content-Type-Options" => "nosniff", "Referrer-Policy" => "strict-origin-when-cross-origin")
$HTTP["url"] =~ "(\\.html|/)$" {
  setenv.add-response-header += ("Cache-Control" => "public, max-age=60", "Vary" => "Accept-Encoding")
} else $HTTP["url"] =~ "\\.(css|js|svg|json|txt)$" {
  setenv.add-response-header += ("Cache-Control" => "public, max-age=300", "Vary" => "Accept-Encoding")
} else {
  setenv.add-response-header += ("Cache-Control" => "public, max-age=300")
}
`;
  const confPath = join(workDir, 'lighttpd.conf');
  writeFileSync(confPath, conf);
  return confPath;
}

/** Starts lighttpd in the foreground (-D) so the child PID is the server; stop it by PID. */
export function startLighttpd(confPath, workDir, cpus) {
  return startChild('lighttpd', ['-D', '-f', confPath], { logPath: join(workDir, 'lighttpd-stdout.log'), cpus });
}
