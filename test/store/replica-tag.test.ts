import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { PROCESS_TAG_KEY, processTag, replicaTag } from '../../src/store/replica.js';

describe('replicaTag', () => {
  it('names one replica the same way each time in a process, and two replicas apart', () => {
    const dir = join('/tmp', 'plinth-replica-tag', 'meta');
    expect(replicaTag(dir)).toBe(replicaTag(`${dir}/../meta`));
    expect(replicaTag(dir)).not.toBe(replicaTag(join('/tmp', 'plinth-replica-tag', 'other')));
    expect(replicaTag(dir)).toMatch(/^[\w-]{16}$/);
  });

  it("gives worker threads started after it the process's tag", async () => {
    const tag = processTag();
    const worker = new Worker(
      `const { getEnvironmentData, parentPort } = require('node:worker_threads'); parentPort.postMessage(getEnvironmentData(${JSON.stringify(PROCESS_TAG_KEY)}));`,
      { eval: true },
    );
    const seen = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(seen).toBe(tag);
  });
});
