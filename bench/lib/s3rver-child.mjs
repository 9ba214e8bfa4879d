// Runs s3rver (the S3 stand-in of the tests and the cluster bench) in its own process, so a test
// can stop it like an outage. Started by s3rver.mjs with `node --openssl-legacy-provider`: s3rver's
// ListObjectsV2 continuation tokens use DES, which OpenSSL 3 only offers from its legacy provider.
// Arguments: <directory> <bucket> <port>; prints {"port": n} once listening, then one JSON line
// per request it receives ({"method", "url", "copy"}), so tests can count what was sent.
import S3rver from 's3rver';

const [directory, bucket, port] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  configureBuckets: [{ name: bucket, configs: [] }],
});
const address = await server.run();
server.httpServer.prependListener('request', (req) => {
  const line = { method: req.method, url: req.url, copy: req.headers['x-amz-copy-source'] !== undefined };
  process.stdout.write(`${JSON.stringify(line)}\n`);
});
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
const stop = () => server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
