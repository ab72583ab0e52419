/**
 * The browser build's `editor-code.ts`: the editor-format converter is a file of its own (`editor.browser.js`), which
 * an app bundler makes a chunk loaded by {@link loadConverter}: `Workflow.loadEditor()`, a `CloudClient` fetching
 * `object_info` (every editor conversion needs one), its first editor file, a pool meeting one.
 *
 * @module
 */
import { PlatformUIError } from '../errors.ts';
import type { Converter } from './editor-code.ts';

let loaded: Converter | undefined;
let loading: Promise<Converter> | undefined;

/** The converter, for a synchronous caller (`Workflow.fromEditor()`): a {@link PlatformUIError} saying how until it is loaded. */
export const converterNow = (): Converter => {
  if (loaded) return loaded;
  throw new PlatformUIError(
    "Workflow.fromEditor(): in a browser bundle the editor-format converter loads on first use: `await Workflow.loadEditor()` first (a CloudClient's getObjectInfo() loads it too)",
  );
};

/** The converter, loaded once per page whoever asks first; a failed load (the network) is tried again next time. */
export const loadConverter = (): Promise<Converter> =>
  (loading ??= import('../workflow/editor.ts').then(
    (m) => (loaded = m),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  ));
