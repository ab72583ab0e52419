/**
 * One door for the code that loads on first use (issue 34: what loads at start):
 * the module is imported once per process, whoever asks first, and every later
 * caller gets the same promise. The `import()` stays at the caller, whose
 * literal path the browser build turns into a file of its own.
 *
 * @module
 */

/**
 * `load`, called on the first call only.
 *
 * @example
 * ```ts
 * const uploads = onFirstUse(() => import('./uploads.ts'));
 * const { uploadForm } = await uploads();
 * ```
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}
