import type { DeployOperations, PendingDeploy } from '../sites/index.js';
import { deployResultOf, type DeployResult } from './thread-metrics.js';

/**
 * Every surface's deploys (REST, MCP, the app's publish page) go through `ops.deploy.begin`:
 * wrapped here, each one that ends is counted by result with its time from admission, whether it
 * was refused before its body was read or after. A deploy whose client never sends the body ends
 * nowhere and is not counted.
 */
export function meterDeploys(deploy: DeployOperations, record: (result: DeployResult, ms: number) => void): DeployOperations {
  return {
    ...deploy,
    async begin(request) {
      const started = performance.now();
      let pending: PendingDeploy;
      try {
        pending = await deploy.begin(request);
      } catch (err) {
        record(deployResultOf(undefined, err), performance.now() - started);
        throw err;
      }
      return {
        async finish(body, signal) {
          try {
            const outcome = await pending.finish(body, signal);
            record(deployResultOf(outcome), performance.now() - started);
            return outcome;
          } catch (err) {
            record(deployResultOf(undefined, err), performance.now() - started);
            throw err;
          }
        },
      };
    },
  };
}
