// Deterministic test sites for the deploy benches: text (html, css, js) and incompressible
// "images", so runs differ only where a seed says so.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function noise(bytes, seed) {
  const out = Buffer.alloc(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < bytes; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, Math.min(i, bytes - 4));
  }
  return out;
}

const WORDS = 'static site publish deploy revision agent archive token serve visitor page style script image font render layout'.split(' ');

export function text(bytes, seed, kind) {
  let out = '';
  let i = seed;
  while (out.length < bytes) {
    i = (i * 1103515245 + 12345) >>> 0;
    const word = WORDS[i % WORDS.length];
    out +=
      kind === 'js'
        ? `function ${word}${i % 997}(a){return a+${i % 100};}\n`
        : kind === 'css'
          ? `.${word}-${i % 97}{margin:${i % 40}px;color:#${(i % 0xffffff).toString(16)}}\n`
          : `<p class="${word}">${word} ${i % 1000} ${word}</p>\n`;
  }
  return `${kind === 'html' ? '<!doctype html><html><body>\n' : ''}${out.slice(0, bytes)}${kind === 'html' ? '</body></html>\n' : ''}`;
}

/** A site of `files` files and about `bytes` bytes: 40% text (html, css, js), 60% images. */
export function writeSite(dir, files, bytes, seed) {
  rmSync(dir, { recursive: true, force: true });
  const textFiles = Math.round(files * 0.4);
  const imageFiles = files - textFiles;
  const textBytes = Math.floor((bytes * 0.4) / textFiles);
  const imageBytes = Math.floor((bytes * 0.6) / imageFiles);
  const put = (path, content) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  };
  put('index.html', text(textBytes, seed, 'html'));
  for (let i = 1; i < textFiles; i++) {
    const kind = ['html', 'css', 'js'][i % 3];
    put(`${kind === 'html' ? 'pages' : kind}/f${i}.${kind}`, text(textBytes, seed + i, kind));
  }
  for (let i = 0; i < imageFiles; i++) put(`img/i${i}.jpg`, Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), noise(imageBytes - 3, seed * 7919 + i)]));
}

/** Adds 40 internal links to every page and 10 url() to every style sheet of a site `writeSite` made. */
export function addLinks(dir) {
  const walk = (sub) => readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(sub, e.name)) : [join(sub, e.name)]));
  const files = walk('.');
  const html = files.filter((f) => f.endsWith('.html'));
  const images = files.filter((f) => f.endsWith('.jpg'));
  for (const [n, file] of files.entries()) {
    const path = join(dir, file);
    if (file.endsWith('.html')) {
      const links = Array.from({ length: 40 }, (_, k) =>
        k % 2
          ? `<a href="/${html[(n + k) % html.length].replace(/^\.\//, '')}">page</a>`
          : `<img src="/${images[(n + k) % images.length].replace(/^\.\//, '')}" alt="">`,
      ).join('\n');
      writeFileSync(path, readFileSync(path, 'utf8').replace('</body>', `${links}\n</body>`));
    } else if (file.endsWith('.css')) {
      const urls = Array.from({ length: 10 }, (_, k) => `.bg${k}{background:url(/${images[(n + k) % images.length].replace(/^\.\//, '')})}`).join('\n');
      writeFileSync(path, `${readFileSync(path, 'utf8')}\n${urls}\n`);
    }
  }
}
