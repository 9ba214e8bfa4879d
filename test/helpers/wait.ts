/**
 * Resolves once `ready()` holds, polling every `everyMs`; false if `timeoutMs` passed first. The
 * way tests wait for an observable state, never a fixed sleep.
 */
export async function waitUntil(ready: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return true;
}
