/**
 * The file Piscina's threads load. Piscina requires its worker file before it tries `import()`,
 * and Node 20's `require()` of an ES module is fatal to the whole process (V8: "IsGraphAsync must
 * be used on an instantiated module") when the thread is terminated while the module loads — which
 * a pool closed as a thread starts does. This entry is CommonJS, so `require()` meets no ES
 * module, and the handlers come from `import()`, which a terminated thread simply abandons.
 */
const handlers = import('./worker.js');

const NAMES = ['unpack', 'analyze', 'compress', 'badge'];

// Piscina awaits `exports[name]` for the handler: a promise of the function is enough.
module.exports = Object.fromEntries(NAMES.map((name) => [name, handlers.then((worker) => worker[name as keyof typeof worker])]));
