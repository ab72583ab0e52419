/**
 * The one door to realtime: the socket, frame and message routing, and the
 * follower of a job (`run.ts`, which re-exports the socket), loaded with
 * `import()` on first use: the first `run()`, `follow()`, `waitForJob()`,
 * `connect()`, or a pool that starts watching its servers. A client that
 * only makes REST calls never loads it (issue 34). In the browser build it is
 * a file of its own (`run.browser.js`, tsup.config.ts `lazyRun`).
 *
 * @module
 */

let loading: Promise<typeof import('./run.ts')> | undefined;
let loaded: typeof import('./run.ts') | undefined;

/**
 * The realtime module, loaded once per process (the first caller pays the
 * load; later ones get the same promise).
 *
 * @example
 * ```ts
 * const { runJob } = await realtime();
 * ```
 */
export const realtime = (): Promise<typeof import('./run.ts')> =>
  (loading ??= import('./run.ts').then((m) => (loaded = m)));

/**
 * The realtime module if it has loaded already, else `undefined`: what lets a
 * socket opened after the first load start at once, as before (no promise in between).
 *
 * @example
 * ```ts
 * const Socket = realtimeLoaded()?.CloudSocket;
 * ```
 */
export const realtimeLoaded = (): typeof import('./run.ts') | undefined => loaded;
