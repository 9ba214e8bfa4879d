import { createRequire } from 'node:module';
import { dirname, sep } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, RecognizedString, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/**
 * Loads uWebSockets.js and proves it is the native binary. The package we depend on silently
 * swaps in a slow pure-JS server when its binary does not load (wrong Node ABI, platform or libc);
 * serving at that speed would be a silent outage, so we refuse to start instead.
 */
export function loadNativeUws(options: { fallbackRequested: boolean }): typeof UwsModule {
  const uws = require('uWebSockets.js') as typeof UwsModule;
  const packageDir = dirname(require.resolve('uWebSockets.js/package.json'));
  const nativeLoaded = Object.keys(require.cache).some((file) => file.startsWith(packageDir + sep) && file.endsWith('.node'));
  if (!nativeLoaded || options.fallbackRequested) {
    throw new Error(
      'uWebSockets.js did not load its native binary and fell back to a pure-JavaScript server. ' +
        `Plinth needs the native build for ${process.platform}-${process.arch} and Node ABI ${process.versions.modules} ` +
        '(Node 20 on linux-x64 is supported). Reinstall with `npm install` on a supported platform, and unset UWS_USE_FALLBACK.',
    );
  }
  return uws;
}

/**
 * Stops uWS from adding `uWebSockets: 20` to every answer of this thread's loop. The header names
 * the server and its major version to anyone who asks, and is not ours to send on a site's behalf.
 * The package offers no documented switch; its native `_cfg('silent')` sets the loop's "no mark"
 * flag (`Loop::setSilent`), which is what the C++ build define `UWS_HTTPRESPONSE_NO_WRITEMARK`
 * does at compile time. The loop is per thread, so each HTTP thread calls this once.
 */
export function silenceServerMark(uws: typeof UwsModule): void {
  uws._cfg('silent');
}

/**
 * Closes every socket of an app: its listen sockets and all connections, idle keep-alive ones
 * included (their `onAborted` handlers run). uWS v20.30's binary has `App.close()`; its typings
 * do not declare it.
 */
export function closeApp(app: UwsModule.TemplatedApp): void {
  (app as UwsModule.TemplatedApp & { close(): void }).close();
}
