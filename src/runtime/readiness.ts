import type { ReplicaStatus } from '../store/index.js';

/**
 * Whether this node can serve (`GET /readyz`), judged from facts gathered by ops-listener.ts; a
 * pure rule, tested as a table. A node is ready when it is not stopping, every HTTP thread
 * answers and reads its store, the data directory takes writes and has room, and, in a cluster,
 * its replica applies the change log and is not behind it for longer than the bound. PostgreSQL
 * being away is reported but leaves the node ready: it serves every site from its replica.
 */

export interface ReadinessFacts {
  now: number;
  stopping: boolean;
  /** Each HTTP thread: whether it answered in time, and its problem if it has one. */
  threads: ReadonlyArray<{ answered: boolean; problem?: string }>;
  /** The main thread's own store handle failed a read. */
  storeProblem?: string;
  /** Free bytes on the data directory's file system (undefined: could not be read), and a failed probe write. */
  disk: { freeBytes?: number; writeError?: string };
  /** In a cluster: how the replica follows the log. */
  replica?: ReplicaStatus;
}

export interface ReadinessBounds {
  /** PLINTH_READY_MIN_FREE_MB in bytes; 0: no bound. */
  minFreeBytes: number;
  /** PLINTH_READY_REPLICA_LAG_S in ms; 0: no bound. */
  maxReplicaLagMs: number;
}

export interface Check {
  ok: boolean;
  message?: string;
  [fact: string]: unknown;
}

export interface Readiness {
  ready: boolean;
  /** What keeps the node from serving, one sentence per failing check. */
  reason?: string;
  checks: {
    process: Check;
    store: Check;
    disk: Check;
    replica?: Check;
    /** Reported only: a node whose database is away still serves. */
    database?: Check;
  };
}

const MB = 1024 * 1024;

export function judgeReadiness(facts: ReadinessFacts, bounds: ReadinessBounds): Readiness {
  const silent = facts.threads.flatMap((thread, i) => (thread.answered ? [] : [i]));
  const process: Check = facts.stopping
    ? { ok: false, message: 'the node is stopping: it finishes what it has and takes nothing new' }
    : silent.length > 0
      ? { ok: false, message: `HTTP thread${silent.length > 1 ? 's' : ''} ${silent.join(', ')} did not answer in time` }
      : { ok: true };

  const storeProblems = [
    ...(facts.storeProblem === undefined ? [] : [facts.storeProblem]),
    ...facts.threads.flatMap((thread, i) => (thread.problem === undefined ? [] : [`HTTP thread ${i}: ${thread.problem}`])),
  ];
  const store: Check = storeProblems.length > 0 ? { ok: false, message: storeProblems.join('; ') } : { ok: true };

  const { freeBytes, writeError } = facts.disk;
  const diskFacts = { free_bytes: freeBytes ?? null, min_free_bytes: bounds.minFreeBytes };
  const diskProblems = [
    ...(bounds.minFreeBytes > 0 && freeBytes !== undefined && freeBytes < bounds.minFreeBytes
      ? [`the data directory's disk is full: ${(freeBytes / MB).toFixed(1)} MB free, under the ${bounds.minFreeBytes / MB} MB of PLINTH_READY_MIN_FREE_MB`]
      : []),
    ...(writeError !== undefined ? [`the data directory takes no writes (${writeError})`] : []),
  ];
  const disk: Check = diskProblems.length > 0 ? { ok: false, message: diskProblems.join('; '), ...diskFacts } : { ok: true, ...diskFacts };

  const checks: Readiness['checks'] = { process, store, disk };
  if (facts.replica) {
    const { applied, head, behindSince, applyFailure, databaseFailure, lastContact } = facts.replica;
    const lagMs = behindSince === undefined ? 0 : Math.max(0, facts.now - behindSince);
    const replicaFacts = { applied, head, lag_seconds: Math.round(lagMs / 100) / 10 };
    checks.replica = applyFailure
      ? {
          ok: false,
          message: `the replica has failed to apply the change log since ${iso(applyFailure.since)} (${applyFailure.message}); new deploys are not served here`,
          ...replicaFacts,
        }
      : bounds.maxReplicaLagMs > 0 && lagMs > bounds.maxReplicaLagMs
        ? {
            ok: false,
            message: `the replica is ${Math.round(lagMs / 1000)} s behind the change log, past the ${bounds.maxReplicaLagMs / 1000} s of PLINTH_READY_REPLICA_LAG_S`,
            ...replicaFacts,
          }
        : { ok: true, ...replicaFacts };
    const contact = { last_contact: lastContact > 0 ? iso(lastContact) : null };
    checks.database = databaseFailure
      ? {
          ok: false,
          message: `PostgreSQL has not answered since ${iso(databaseFailure.since)} (${databaseFailure.message}); writes answer 503, sites are served from the replica`,
          ...contact,
        }
      : { ok: true, ...contact };
  }

  const failing = [process, store, disk, checks.replica].filter((check): check is Check => check !== undefined && !check.ok);
  return failing.length === 0 ? { ready: true, checks } : { ready: false, reason: failing.map((check) => check.message).join('; '), checks };
}

const iso = (ms: number): string => new Date(ms).toISOString();
