/**
 * The doors to a client's file transfers, each loaded on first use (issue 34: what `import { CloudClient }` loads at
 * start): the uploads of the cloud and a local server (`uploads.ts`: multipart forms, streamed) on the first
 * `uploadImage()`, `uploadMask()` or `run()` with `inputs`, and their downloads (`downloads.ts`: `/api/view` and its
 * signed redirect, followed without the key) on the first `download()`. Each is a file of its own in the browser
 * build (`uploads.browser.js`, `downloads.browser.js`); a Comfy API v2 client has its own in v2's file.
 *
 * @module
 */
import { onFirstUse } from '../on-first-use.ts';

/**
 * The uploads, loaded once per process whoever asks first.
 *
 * @example
 * ```ts
 * const { uploadForm } = await uploads();
 * ```
 */
export const uploads = /* @__PURE__ */ onFirstUse(() => import('./uploads.ts'));

/**
 * The downloads, loaded once per process whoever asks first.
 *
 * @example
 * ```ts
 * const { downloadView } = await downloads();
 * ```
 */
export const downloads = /* @__PURE__ */ onFirstUse(() => import('./downloads.ts'));
