import dns2, { type Resource } from 'dns2';

/**
 * A DNS server on loopback for tests of custom domains: it answers A and TXT questions from maps
 * the test changes as it goes, and nothing else (every other question gets an empty answer). Only
 * 127.0.0.1: tests never ask a DNS server of the outside world.
 */
export interface TestDns {
  /** `127.0.0.1:<port>`, for PLINTH_DNS_SERVERS and pebble's `-dnsserver`. */
  readonly address: string;
  readonly port: number;
  /** name → IPv4 addresses. */
  readonly a: Map<string, string[]>;
  /** name → TXT values. */
  readonly txt: Map<string, string[]>;
  /** Questions asked so far, as `TYPE name`. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startTestDns(): Promise<TestDns> {
  const { Packet } = dns2;
  const a = new Map<string, string[]>();
  const txt = new Map<string, string[]>();
  const asked: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      for (const question of request.questions) {
        const name = question.name.toLowerCase().replace(/\.$/, '');
        if (question.type === Packet.TYPE.A) {
          asked.push(`A ${name}`);
          for (const address of a.get(name) ?? [])
            response.answers.push({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 1, address } as Resource);
        } else if (question.type === Packet.TYPE.TXT) {
          asked.push(`TXT ${name}`);
          for (const data of txt.get(name) ?? [])
            response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data } as Resource);
        } else {
          asked.push(`${question.type} ${name}`);
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (addresses as unknown as { udp: { port: number } }).udp.port;
  return { address: `127.0.0.1:${port}`, port, a, txt, asked, close: () => server.close() };
}
