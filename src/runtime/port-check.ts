import { createServer } from 'node:net';

/**
 * Refuses a port another process listens on. uWS binds with SO_REUSEPORT so that the HTTP
 * threads of one process share their port; the kernel then also lets a second Plinth (or anything
 * else that sets it) bind the same port, and spreads connections between the two: sites and
 * tokens of one answer 404 and 401 at random on the other. A plain bind, without SO_REUSEPORT
 * (Node 20 never sets it), fails on a port that any listening socket holds, so binding one for a
 * moment before the threads listen tells whether the port is free.
 */
export function checkPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        reject(
          new Error(
            `port ${port} on ${host} is already in use by another process (another Plinth, or another server): two servers on one port would share its connections at random. Stop it, or set PLINTH_PORT to a free port.`,
          ),
        );
      } else {
        reject(new Error(`cannot listen on ${host}:${port} (PLINTH_LISTEN_HOST, PLINTH_PORT): ${err.message}`));
      }
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
