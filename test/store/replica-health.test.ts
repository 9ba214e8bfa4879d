import { describe, expect, it } from 'vitest';
import { createReplicaHealth } from '../../src/store/replica-health.js';

describe('replica health', () => {
  it('is behind from the poll that first sees a change it has not applied until it applies it', () => {
    let now = 1000;
    const health = createReplicaHealth(5, () => now);
    health.polled(5, 5);
    expect(health.status()).toEqual({ applied: 5, head: 5, lastContact: 1000 });
    now = 2000;
    health.polled(5, 8);
    expect(health.status()).toMatchObject({ applied: 5, head: 8, behindSince: 2000 });
    now = 2500;
    health.polled(5, 9);
    expect(health.status().behindSince).toBe(2000);
    health.applied(9);
    expect(health.status()).toEqual({ applied: 9, head: 9, lastContact: 2500 });
  });

  it('remembers since when applying fails, and forgets it once a change is applied', () => {
    let now = 1000;
    const health = createReplicaHealth(1, () => now);
    health.polled(1, 3);
    health.applyFailed(Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }));
    now = 5000;
    health.polled(1, 3);
    health.applyFailed(Object.assign(new Error('No space left on device'), { code: 'ENOSPC' }));
    expect(health.status().applyFailure).toEqual({ message: 'No space left on device', code: 'ENOSPC', since: 1000 });
    health.applied(3);
    expect(health.status().applyFailure).toBeUndefined();
    expect(health.status().behindSince).toBeUndefined();
  });

  it('reports PostgreSQL away from the first failed poll until one succeeds, keeping the last contact', () => {
    let now = 1000;
    const health = createReplicaHealth(0, () => now);
    health.polled(0, 0);
    now = 2000;
    health.pollFailed(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    now = 3000;
    health.pollFailed(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(health.status()).toMatchObject({ lastContact: 1000, databaseFailure: { message: 'connect ECONNREFUSED 127.0.0.1:5432', since: 2000 } });
    health.polled(0, 0);
    expect(health.status().databaseFailure).toBeUndefined();
    expect(health.status().lastContact).toBe(3000);
  });
});
