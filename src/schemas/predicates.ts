/**
 * The checks zod cannot express as data (`z.custom`), shared by the zod
 * schemas and the generated rules, so both run the very same predicate.
 *
 * @module
 */
import type { CustomRule } from './rule.ts';

/** An image argument: a base64 string or URL (sent as is), or bytes (sent as base64). */
export const isImageInput: CustomRule = [
  11 /* CUSTOM: the number itself, as in every rule (rule.ts) */,
  (v) => typeof v === 'string' || v instanceof Uint8Array || v instanceof ArrayBuffer || (typeof Blob !== 'undefined' && v instanceof Blob),
  'must be a base64 string, a URL, a Blob, a Uint8Array or an ArrayBuffer',
];
