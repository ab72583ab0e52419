/**
 * Building blocks shared by every schema file.
 *
 * zod is imported as `zod/mini`: the classic API pulls ~25 KB (min+gz) into a
 * browser bundle, mini ~5 KB (DESIGN §7). Speed comes from `check.ts`, which
 * validates without zod's cloning on the hot path.
 *
 * @module
 */
import * as z from 'zod/mini';

/**
 * An enum that stays open: the known values are typed, any other string is
 * accepted and kept (DESIGN §5, forward compatibility). `(string & {})` keeps
 * editor completion for the known values.
 */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.union([z.enum(values), z.string()]) as unknown as z.ZodMiniType<T[number] | (string & {})>;
}

/** Optional member: absent or of the given type (never null unless the schema says so). */
export const opt = z.optional;

/** A string array. */
export const strings = z.array(z.string());
