/**
 * The door to a pool's input uploads (`uploads.ts`: reading, hashing, uploading once per server and content), loaded on
 * the first job that has `inputs` (issue 34: CloudPool's budget). A file of its own in the browser build.
 *
 * @module
 */

let loading: Promise<typeof import('./uploads.ts')> | undefined;

/**
 * The pool's input uploads, loaded once per process whoever asks first.
 *
 * @example
 * ```ts
 * const { readInputs } = await uploadsCode();
 * ```
 */
export const uploadsCode = (): Promise<typeof import('./uploads.ts')> =>
  (loading ??= import('./uploads.ts'));
