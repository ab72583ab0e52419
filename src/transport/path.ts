/**
 * The path template tag: one place that makes an id one path segment.
 *
 * @module
 */

/**
 * Encodes each interpolated value as one path segment, so an id containing
 * `/`, `?` or `%` can never change the path.
 *
 * @example
 * ```ts
 * path`publishers/${id}/nodes`; // id 'a/b' → 'publishers/a%2Fb/nodes'
 * ```
 */
export function path(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += encodeURIComponent(values[i]!) + (strings[i + 1] ?? '');
  return out;
}
