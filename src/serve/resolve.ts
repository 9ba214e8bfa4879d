// The resolution order is a shared rule (serving and the deploy's link check ask it alike).
export { resolveSitePath, type Resolution } from '../rules/index.js';
