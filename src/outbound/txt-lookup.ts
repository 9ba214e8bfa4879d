import { Resolver } from 'node:dns/promises';

/** What a TXT lookup found: the record's strings, none, or a failure that proves nothing. */
export type TxtAnswer = { kind: 'found'; values: string[] } | { kind: 'none' } | { kind: 'error'; code: string };

export type TxtLookup = (name: string) => Promise<TxtAnswer>;

/** TXT lookups through node:dns, asking `servers` (the system's resolvers when empty). */
export function createTxtLookup(servers: readonly string[]): TxtLookup {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return async (name) => {
    try {
      // A record may be split into strings of 255 bytes: they are one value joined.
      const records = await resolver.resolveTxt(name);
      return { kind: 'found', values: records.map((chunks) => chunks.join('')) };
    } catch (err) {
      const code = String((err as { code?: unknown }).code ?? 'EFAIL');
      if (code === 'ENODATA' || code === 'ENOTFOUND') return { kind: 'none' };
      return { kind: 'error', code };
    }
  };
}
