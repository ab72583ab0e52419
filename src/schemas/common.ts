/**
 * Building blocks shared by every schema file.
 *
 * zod is imported as `zod/mini`, the lighter API, for users who validate with
 * these schemas (`@platformui/sdk/schemas`). The SDK itself never runs zod:
 * `scripts/gen-rules.ts` turns these schemas into `rules.generated.ts`
 * (see `rule.ts`), so zod stays out of its bundles and its start-up.
 *
 * ## Models: loose at runtime, exact in the types
 *
 * Every response object is a `z.looseObject` at runtime: unknown fields are
 * kept and handed to the caller (DESIGN §5, forward compatibility). Its static
 * type is a hand-written, named interface with no catch-all index signature,
 * so `node.naem` is a compile error and hovers and errors say `Node`. The
 * schema is declared as {@link Model}`<Node>`, which makes `z.infer` give the
 * interface, and every schema file ends with {@link Same} checks proving each
 * interface is exactly what its shape validates (same keys, same optionality,
 * same types): the two cannot drift apart.
 *
 * A caller who wants a field this SDK does not know yet reads it on purpose:
 * `'new_field' in node ? node.new_field : undefined` (typed `unknown`), or
 * `(node as Record<string, unknown>).new_field`.
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
  return z.union([z.enum(values), z.string()]) as unknown as z.ZodMiniType<OpenEnum<T>, OpenEnum<T>>;
}

/** The values of an open enum: the known ones, or any other string. */
export type OpenEnum<T extends readonly string[]> = T[number] | (string & {});

/** Optional member: absent or of the given type (never null unless the schema says so). */
export const opt = z.optional;

/** A string array. */
export const strings = z.array(z.string());

/**
 * The schema of a model whose static type is the interface `T`. At runtime it
 * is a `z.looseObject` (unknown keys are kept); statically, `z.infer` gives
 * `T`, which has no index signature.
 */
export interface Model<T> extends z.ZodMiniType<T, T> {}

/**
 * What an object shape validates, as a type without index signature (the
 * output `z.object` would infer). Used to check the hand-written interfaces.
 */
export type Fields<S extends z.core.$ZodLooseShape> = z.infer<z.ZodMiniObject<S, z.core.$strip>>;

/**
 * `true` when `A` and `B` are the same type: same keys, same optionality and
 * same member types. Schema files list `Same<Interface, Fields<typeof shape>>`
 * in a tuple of `true`s, so a drift between the two fails to compile.
 */
export type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true : false;

/** Compiles only when every element is `true`: `type _ = Checks<[Same<A, B>, …]>`. */
export type Checks<T extends readonly true[]> = T;
