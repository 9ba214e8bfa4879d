import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Slots } from '../rules/index.js';

/** Every address a name has. */
export type Addresses = readonly { address: string; family: number }[];

/** Resolves a host name to all its addresses (the system resolver unless a test stands in for DNS). */
export type NameLookup = (host: string) => Promise<Addresses>;

/** The system resolver, as a connection would ask it (`/etc/hosts` included). */
export const systemLookup: NameLookup = (host) => dnsLookup(host, { all: true });

/** What a lookup gives that did not finish by its deadline, or could not start (every slot taken). */
export const LATE = Symbol('late');

/** How often a lookup waiting for a slot looks again (slots are shared with other threads, which cannot wake it). */
const SLOT_POLL_MS = 10;

/**
 * The addresses of `host`, or LATE once `deadline` (performance.now()) has passed. The names are
 * users' to choose (a webhook's URL, an OAuth client's metadata URL), and the system resolver
 * waits half a minute and more for a DNS server that does not answer: without a deadline the
 * caller waited that long. Giving up does not end the lookup, which holds a thread of libuv's
 * pool until the resolver does: it keeps its slot until then, and a lookup that finds none free
 * waits for one, until its deadline. An IP address needs no slot (Node answers it without the
 * resolver). A failed lookup rejects.
 */
export async function lookupBy(lookup: NameLookup, slots: Slots, host: string, deadline: number): Promise<Addresses | typeof LATE> {
  const slotted = isIP(host) === 0;
  if (slotted && !(await slotBy(slots, deadline))) return LATE;
  let found: Promise<Addresses>;
  try {
    found = lookup(host);
  } catch (err) {
    if (slotted) slots.give();
    throw err;
  }
  if (slotted)
    found.then(
      () => slots.give(),
      () => slots.give(),
    );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([found, late]).finally(() => clearTimeout(timer));
}

/** Takes a slot, waiting for one until `deadline`; false when none was free by then. */
async function slotBy(slots: Slots, deadline: number): Promise<boolean> {
  while (!slots.tryTake()) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(SLOT_POLL_MS, left));
  }
  return true;
}
