// Runs s3rver (the S3 stand-in of the tests and the cluster bench) in its own process, so a test
// can stop it like an outage. Started by s3rver.mjs with `node --openssl-legacy-provider`: s3rver's
// ListObjectsV2 continuation tokens use DES, which OpenSSL 3 only offers from its legacy provider.
// Arguments: <directory> <bucket> <port>; prints {"port": n} once listening, then one JSON line
// per request it receives ({"method", "url", "copy", "at"}), so tests can count what was sent, and one
// once it is answered ({"done": true, "method", "url", "at", "end", "bytes"}: epoch ms, body size).
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import S3rver from 's3rver';

const FilesystemStore = createRequire(import.meta.url)('s3rver/lib/stores/filesystem.js');

const [directory, bucket, port] = process.argv.slice(2);

// S3 makes an object visible only once its PUT completes: an interrupted upload leaves the old
// object (or none). s3rver writes into the object's file as the bytes arrive, so a client killed
// mid-upload would leave a truncated object where a whole one was. Written aside and renamed into
// place here, as S3 behaves.
const partialDir = `${directory}-partial`;
mkdirSync(partialDir, { recursive: true });
FilesystemStore.prototype.putObject = async function putObject(object) {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  const partial = join(partialDir, randomUUID());
  const md5 = createHash('md5');
  let size = 0;
  try {
    const counted = new Transform({
      transform(chunk, encoding, callback) {
        md5.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    const source = Buffer.isBuffer(object.content) ? [object.content] : object.content;
    await pipeline(source, counted, createWriteStream(partial));
    await mkdir(dirname(objectPath), { recursive: true });
    await rename(partial, objectPath);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  configureBuckets: [{ name: bucket, configs: [] }],
});
const address = await server.run();
server.httpServer.prependListener('request', (req, res) => {
  const at = Date.now();
  const line = { method: req.method, url: req.url, copy: req.headers['x-amz-copy-source'] !== undefined, at };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  // And once answered, for a timeline of when each request was taken and finished.
  res.once('finish', () => {
    const done = { done: true, method: req.method, url: req.url, at, end: Date.now(), bytes: Number(req.headers['content-length'] ?? 0) };
    process.stdout.write(`${JSON.stringify(done)}\n`);
  });
});
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
const stop = () => server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
