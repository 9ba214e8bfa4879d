/**
 * `methods` with read-only properties computed by `getters`, as a fast-mode object. V8 makes an
 * object literal with `get x()` accessors a dictionary ("slow") object, and so does defining
 * accessors on it afterwards once a second object of the same shape gets closures of its own:
 * optimized code can then neither inline its methods nor load them without a generic property
 * lookup, which the site and body caches' `lookup`, `target`, `get`, `held` and `use` cost the hot
 * path per request (bench/RESULTS.md, "Serving back at the ceiling", fifth pass). So the getters
 * sit on a prototype of the object's own and the object holds only its methods, as data.
 */
export function withGetters<Methods extends object, Getters extends Record<string, () => unknown>>(
  methods: Methods,
  getters: Getters,
): Methods & { readonly [Name in keyof Getters]: ReturnType<Getters[Name]> } {
  const descriptors: PropertyDescriptorMap = {};
  for (const [name, get] of Object.entries(getters)) descriptors[name] = { get, enumerable: true };
  const readouts = Object.create(Object.prototype, descriptors) as object;
  return Object.assign(Object.create(readouts) as object, methods) as Methods & { readonly [Name in keyof Getters]: ReturnType<Getters[Name]> };
}
