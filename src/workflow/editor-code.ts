/**
 * The editor-format converter as `Workflow.fromEditor()` reaches it, synchronously. In Node (and the tests) it is
 * part of the bundle, so it is always here. A browser bundle loads it on first use instead (issue 34: `Workflow`'s
 * budget): the browser build swaps this file for `editor-code.browser.ts` (tsup.config.ts, `browserSwaps`), where
 * {@link loadedConverter} answers only once {@link loadConverter} has run.
 *
 * @module
 */
import * as converter from './editor.ts';

/** The converter's module. */
export type Converter = typeof converter;

/** The converter, for a synchronous caller: in Node it is always loaded. */
export const converterNow = (): Converter => converter;

/** The converter, loaded once per process whoever asks first. */
export const loadConverter = (): Promise<Converter> => Promise.resolve(converter);
