/**
 * The door to a pool's input uploads (`uploads.ts`: reading, hashing, uploading once per server and content), loaded on
 * the first job that has `inputs` (issue 34: CloudPool's budget). A file of its own in the browser build.
 *
 * @module
 */
import { onFirstUse } from '../../on-first-use.ts';

/**
 * The pool's input uploads, loaded once per process whoever asks first.
 *
 * @example
 * ```ts
 * const { readInputs } = await uploadsCode();
 * ```
 */
export const uploadsCode = /* @__PURE__ */ onFirstUse(() => import('./uploads.ts'));
