// A cluster deploy's announcements (src/ingest/worker.ts): the unpack of bench:cluster's 1,000-file
// archive (~50 MB, bench/lib/site-gen.mjs) through this build's collector on this thread, each
// stored blob posted to a receiving thread as the ingest worker posts it to the HTTP thread,
// either copied into a buffer of its own (as before) or moved where the collector gives its
// buffer away. Per unpack: this thread's CPU and the receiving thread's (schedstat); the arms
// alternate, ANNOUNCE_ROUNDS rounds (6), medians with the range. Needs `npm run build`.
import { Worker, MessageChannel } from 'node:worker_threads';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCollector } from '../dist/ingest/collector.js';
import { readTar } from '../dist/ingest/tar-reader.js';
import { createBlobStore } from '../dist/store/blob-store.js';
import { tarGz } from './lib/archive.mjs';
import { writeSite } from './lib/site-gen.mjs';
const dir = join(dirname(fileURLToPath(import.meta.url)), '.work', 'announce');
mkdirSync(dir, { recursive: true });
writeSite(join(dir, 'site'), 1000, 50 * 1024 * 1024, 777);
const archive = tarGz(join(dir, 'site'), join(dir, 'site.tgz'));
const rounds = Number(process.env.ANNOUNCE_ROUNDS ?? 6);
const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
const receiver = new Worker(
  `
const { parentPort } = require('node:worker_threads'); const fs = require('node:fs');
const ns = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
let port; const held = new Map();
parentPort.on('message', (m) => {
  if (m.port) { port = m.port; port.on('message', ([sha, bytes]) => { held.set(sha, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)); }); parentPort.postMessage('ready'); }
  else if (m === 'start') { held.clear(); globalThis.gc?.(); parentPort.postMessage({ ns: ns() }); }
  else if (m === 'end') { setTimeout(() => { parentPort.postMessage({ ns: ns(), n: held.size }); held.clear(); }, 200); }
});`,
  { eval: true },
);
const { port1, port2 } = new MessageChannel();
receiver.postMessage({ port: port2 }, [port2]);
await new Promise((r) => receiver.once('message', r));
const ask = (m) =>
  new Promise((r) => {
    receiver.once('message', r);
    receiver.postMessage(m);
  });
async function unpack(move) {
  rmSync(join(dir, 'blobs'), { recursive: true, force: true });
  const blobs = createBlobStore({ dir: join(dir, 'blobs'), now: Date.now });
  const r0 = await ask('start');
  const t0 = threadNs();
  const collector = createCollector({
    blobs,
    limits: { maxFiles: 2000, maxFileBytes: 10 << 20, maxSiteBytes: 200 << 20 },
    blockExecutables: false,
    onStored: (sha, bytes, enc, yours) => {
      const own = move && yours && bytes.buffer instanceof ArrayBuffer ? bytes : new Uint8Array(bytes);
      port1.postMessage([sha, own, enc], [own.buffer]);
    },
  });
  await readTar({ path: archive }, true, collector, 200 << 20);
  await collector.finish({ patch: false });
  const t1 = threadNs();
  const r1 = await ask('end');
  return { unpackMs: (t1 - t0) / 1e6, receiverMs: (r1.ns - r0.ns) / 1e6, n: r1.n };
}
await unpack(false);
await unpack(true);
const res = { copy: [], move: [] };
for (let round = 0; round < rounds; round++) {
  for (const arm of round % 2 ? ['move', 'copy'] : ['copy', 'move']) res[arm].push(await unpack(arm === 'move'));
}
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (const arm of ['copy', 'move']) {
  const u = res[arm].map((x) => x.unpackMs),
    v = res[arm].map((x) => x.receiverMs);
  console.log(
    `${arm}: unpacking thread ${med(u).toFixed(0)} ms (${Math.min(...u).toFixed(0)}–${Math.max(...u).toFixed(0)}), receiving thread ${med(v).toFixed(0)} ms (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}), blobs ${res[arm][0].n}`,
  );
}
const ratio = res.move.map((x, i) => x.unpackMs / res.copy[i].unpackMs);
console.log(`move ÷ copy, unpacking thread, per round: ${med(ratio).toFixed(3)} (${Math.min(...ratio).toFixed(3)}–${Math.max(...ratio).toFixed(3)})`);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
