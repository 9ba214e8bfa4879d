// Drop to publish (account app). Without this file the form uploads an archive as a plain
// multipart post; with it, a person can also choose or drag a folder: it is packed here into ONE
// .tar.gz (a small ustar writer and the browser's CompressionStream), sent as the request body
// with upload progress, and the server checks it exactly as it checks an API deploy.
(() => {
  'use strict';

  // Left out before packing, so a project's dependencies are never uploaded; the server would
  // skip them anyway (with every other rule it applies to any archive).
  const SKIPPED_FOLDERS = new Set(['node_modules', '.git']);
  const ARCHIVE_NAME = /\.(zip|tar\.gz|tgz|tar)$/i;
  const encoder = new TextEncoder();

  function formatBytes(bytes) {
    if (bytes < 1024) return `${bytes} bytes`;
    if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
    return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  }

  // --- A ustar writer: 512-byte headers, contents padded to 512, two zero blocks at the end. ---
  function octal(value, width) {
    return value.toString(8).padStart(width - 1, '0') + '\0';
  }

  function put(header, offset, length, text) {
    header.set(encoder.encode(text).subarray(0, length), offset);
  }

  function tarHeader(name, size, type) {
    const header = new Uint8Array(512);
    put(header, 0, 100, name);
    put(header, 100, 8, octal(0o644, 8));
    put(header, 108, 8, octal(0, 8));
    put(header, 116, 8, octal(0, 8));
    put(header, 124, 12, octal(size, 12));
    put(header, 136, 12, octal(Math.floor(Date.now() / 1000), 12));
    put(header, 148, 8, '        ');
    put(header, 156, 1, type);
    put(header, 257, 6, 'ustar\0');
    put(header, 263, 2, '00');
    let sum = 0;
    for (const byte of header) sum += byte;
    put(header, 148, 8, octal(sum, 7) + ' ');
    return header;
  }

  // A pax record "<length> path=<value>\n", where the length counts its own digits too.
  function paxRecord(key, value) {
    const body = ` ${key}=${value}\n`;
    const bodyLength = encoder.encode(body).length;
    let length = bodyLength + String(bodyLength).length;
    if (String(length).length !== String(bodyLength).length) length = bodyLength + String(length).length;
    return encoder.encode(length + body);
  }

  function padding(size) {
    const rest = size % 512;
    return rest === 0 ? [] : [new Uint8Array(512 - rest)];
  }

  /** One tar of the files as a Blob: the files' own Blobs are parts of it, read only when sent. */
  function tarOf(files) {
    const parts = [];
    for (const { path, file } of files) {
      let name = path;
      if (encoder.encode(path).length > 100) {
        // Longer names travel in a pax header, as GNU tar and bsdtar write them.
        const record = paxRecord('path', path);
        parts.push(tarHeader('PaxHeader', record.length, 'x'), record, ...padding(record.length));
        name = 'long-name';
      }
      parts.push(tarHeader(name, file.size, '0'), file, ...padding(file.size));
    }
    parts.push(new Uint8Array(1024));
    return new Blob(parts, { type: 'application/x-tar' });
  }

  async function gzip(blob) {
    if (typeof CompressionStream !== 'function') return { body: blob, type: 'application/x-tar' };
    const stream = blob.stream().pipeThrough(new CompressionStream('gzip'));
    return { body: await new Response(stream).blob(), type: 'application/gzip' };
  }

  // --- Files from a folder chooser or a drop. ---
  /** Drops folders named in SKIPPED_FOLDERS (anywhere in the tree) and notes each one left out. */
  function withoutSkipped(files, leftOut) {
    return files.filter(({ path }) => {
      const segments = path.split('/');
      const at = segments.findIndex((segment) => SKIPPED_FOLDERS.has(segment));
      if (at === -1) return true;
      leftOut.add(`${segments.slice(0, at + 1).join('/')}/`);
      return false;
    });
  }

  function fileOf(entry) {
    return new Promise((resolve, reject) => entry.file(resolve, reject));
  }

  async function entriesOf(directory) {
    const reader = directory.createReader();
    const all = [];
    // readEntries answers in batches (100 in Chromium) until it answers an empty one.
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) return all;
      all.push(...batch);
    }
  }

  async function walk(entry, files, leftOut) {
    const path = entry.fullPath.replace(/^\//, '');
    if (entry.isDirectory) {
      if (SKIPPED_FOLDERS.has(entry.name)) {
        leftOut.add(`${path}/`);
        return;
      }
      for (const child of await entriesOf(entry)) await walk(child, files, leftOut);
    } else if (entry.isFile) {
      files.push({ path, file: await fileOf(entry) });
    }
  }

  // --- One form: status, errors, upload. ---
  function enhance(form) {
    const zone = form.querySelector('[data-drop-zone]');
    const status = form.querySelector('[data-drop-status]');
    const message = form.querySelector('[data-drop-message]');
    const progress = form.querySelector('[data-drop-progress]');
    const errorBox = form.querySelector('[data-drop-error]');
    const archiveInput = form.querySelector('input[type="file"]:not([data-folder])');
    const folderInput = form.querySelector('[data-folder]');
    const maxBytes = Number(form.dataset.maxBytes) || Infinity;
    let busy = false;

    for (const element of form.querySelectorAll('[data-js-only]')) element.hidden = false;
    if (!('webkitdirectory' in document.createElement('input'))) folderInput.closest('[data-js-only]').hidden = true;

    function say(text, percent) {
      status.hidden = false;
      message.textContent = text;
      if (percent === undefined) progress.removeAttribute('value');
      else progress.value = percent;
    }

    function fail(text) {
      busy = false;
      status.hidden = true;
      errorBox.replaceChildren();
      const title = document.createElement('h2');
      title.textContent = 'Nothing was published';
      const body = document.createElement('p');
      body.textContent = text;
      errorBox.append(title, body);
      errorBox.hidden = false;
      errorBox.focus();
    }

    function upload(body, type, leftOut) {
      return new Promise((resolve) => {
        const xhr = new XMLHttpRequest();
        xhr.open('POST', form.action);
        xhr.setRequestHeader('Accept', 'application/json');
        xhr.setRequestHeader('Content-Type', type);
        xhr.setRequestHeader('X-CSRF-Token', form.elements.csrf.value);
        if (form.elements.base_revision) xhr.setRequestHeader('X-Base-Revision', form.elements.base_revision.value);
        // Header values are Latin-1: only plain names are reported (display only).
        const plain = [...leftOut].filter((path) => /^[\x20-\x7e]+$/.test(path) && !path.includes(','));
        if (plain.length > 0) xhr.setRequestHeader('X-Plinth-Left-Out', plain.slice(0, 20).join(','));
        xhr.upload.addEventListener('progress', (event) => {
          if (!event.lengthComputable) return;
          const percent = Math.round((event.loaded / event.total) * 100);
          say(`Uploading: ${formatBytes(event.loaded)} of ${formatBytes(event.total)} (${percent}%)`, percent);
        });
        xhr.upload.addEventListener('load', () => say('Uploaded. Checking and publishing the files…'));
        xhr.addEventListener('load', () => {
          let json;
          try {
            json = JSON.parse(xhr.responseText);
          } catch {
            json = undefined;
          }
          resolve({ status: xhr.status, json });
        });
        xhr.addEventListener('error', () => resolve({ status: 0 }));
        xhr.send(body);
      });
    }

    async function publish(body, type, leftOut) {
      if (body.size > maxBytes) {
        fail(`This upload is ${formatBytes(body.size)}; one upload can carry at most ${formatBytes(maxBytes)}.`);
        return;
      }
      say(`Uploading: 0 of ${formatBytes(body.size)}`, 0);
      const answer = await upload(body, type, leftOut);
      if (answer.status === 200 && answer.json && typeof answer.json.next === 'string') {
        say('Published. Opening the result…', 100);
        location.assign(answer.json.next);
        return;
      }
      if (answer.status === 0) fail('The connection was lost during the upload. Check your connection and try again.');
      else fail((answer.json && answer.json.error && answer.json.error.message) || `The server answered ${answer.status}.`);
    }

    async function publishFiles(files, leftOut) {
      const kept = withoutSkipped(files, leftOut);
      if (kept.length === 0) {
        fail('There are no files to publish in that folder.');
        return;
      }
      // The server strips a single top folder from the paths; the list of what was left out
      // names paths as the site has them, so it is stripped here too.
      const tops = new Set(kept.map(({ path }) => (path.includes('/') ? path.split('/')[0] : '')));
      const [top] = tops;
      if (tops.size === 1 && top) {
        // A copy, as the loop adds to the set it walks:
        // oxlint-disable-next-line unicorn/no-useless-spread
        for (const path of [...leftOut]) {
          if (!path.startsWith(`${top}/`)) continue;
          leftOut.delete(path);
          leftOut.add(path.slice(top.length + 1));
        }
      }
      const total = kept.reduce((sum, { file }) => sum + file.size, 0);
      say(`Packing ${kept.length.toLocaleString('en-GB')} ${kept.length === 1 ? 'file' : 'files'} (${formatBytes(total)})…`);
      const { body, type } = await gzip(tarOf(kept));
      await publish(body, type, leftOut);
    }

    async function start(task) {
      if (busy) return;
      busy = true;
      errorBox.hidden = true;
      try {
        await task();
      } catch (err) {
        fail(`The files could not be read: ${err && err.message ? err.message : err}`);
      }
    }

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const file = archiveInput.files[0];
      if (!file) {
        fail('Choose a .zip or .tar.gz archive of your site, or a folder.');
        return;
      }
      void start(() => publish(file, file.type || 'application/octet-stream', new Set()));
    });

    folderInput.addEventListener('change', () => {
      const files = Array.from(folderInput.files, (file) => ({ path: file.webkitRelativePath || file.name, file }));
      folderInput.value = '';
      void start(() => publishFiles(files, new Set()));
    });

    zone.addEventListener('dragover', (event) => {
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
      zone.classList.add('is-over');
    });
    zone.addEventListener('dragleave', (event) => {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove('is-over');
    });
    zone.addEventListener('drop', (event) => {
      event.preventDefault();
      zone.classList.remove('is-over');
      // Entries must be taken while the drop event runs; reading them can wait.
      const entries = Array.from(event.dataTransfer.items || [], (item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null)).filter(Boolean);
      const dropped = Array.from(event.dataTransfer.files || []);
      void start(async () => {
        if (entries.length === 1 && entries[0].isFile && ARCHIVE_NAME.test(entries[0].name)) {
          const file = await fileOf(entries[0]);
          return publish(file, file.type || 'application/octet-stream', new Set());
        }
        if (entries.length === 0 && dropped.length === 1 && ARCHIVE_NAME.test(dropped[0].name)) {
          return publish(dropped[0], dropped[0].type || 'application/octet-stream', new Set());
        }
        const leftOut = new Set();
        const files = [];
        if (entries.length > 0) for (const entry of entries) await walk(entry, files, leftOut);
        else for (const file of dropped) files.push({ path: file.name, file });
        return publishFiles(files, leftOut);
      });
    });
  }

  function startAll() {
    for (const form of document.querySelectorAll('form[data-drop]')) enhance(form);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', startAll);
  else startAll();
})();
