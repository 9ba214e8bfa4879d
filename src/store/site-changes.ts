import { BroadcastChannel } from 'node:worker_threads';

export interface SiteChange {
  siteId: string;
  /** Current name; listeners keyed by name should also drop former names of the site. */
  name: string;
}

export type SiteChangeListener = (change: SiteChange) => void;

export interface SiteChanges {
  /** Tells listeners in this thread (now) and in other threads (as soon as they turn). */
  publish(change: SiteChange): void;
  subscribe(listener: SiteChangeListener): () => void;
  close(): void;
}

/**
 * A change feed for site records across the threads of one process, so per-thread caches can
 * drop an entry the moment another thread commits. `beforeRemote` runs before listeners hear of
 * a change made elsewhere: the reader must leave its old LMDB snapshot or it would re-cache the
 * stale record. Other processes (the admin CLI) are not reached; caches bound that with a TTL.
 */
export function createSiteChanges(channelName: string, beforeRemote: () => void): SiteChanges {
  const listeners = new Set<SiteChangeListener>();
  let channel: BroadcastChannel | undefined;

  const open = (): BroadcastChannel => {
    if (channel === undefined) {
      channel = new BroadcastChannel(channelName);
      // Listening must never keep a process (or a test worker) alive.
      channel.unref();
      channel.onmessage = (event) => {
        const change = (event as { data: SiteChange }).data;
        beforeRemote();
        for (const listener of listeners) listener(change);
      };
    }
    return channel;
  };

  return {
    publish(change) {
      for (const listener of listeners) listener(change);
      open().postMessage(change);
    },
    subscribe(listener) {
      open();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      channel?.close();
      channel = undefined;
    },
  };
}
