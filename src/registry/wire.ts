/**
 * The registry's wire as it is, made regular once for every read (the
 * client's reads and publishing share it).
 *
 * @module
 */

// Array fields the live registry sends as `null` when empty: they reach the user as `[]`.
const ARRAY_FIELDS = new Set(['dependencies', 'supported_accelerators', 'supported_os', 'tags', 'tags_admin', 'preempted_platform_node_names', 'members', 'nodes', 'node_versions']);

/** The wire's looseness made regular, once for every read: a `null` array becomes `[]`. */
export function nullArraysToEmpty(value: unknown): unknown {
  // On every registry read (a search page is ~200 KB): only objects are visited and only a `null` is written.
  if (Array.isArray(value)) {
    for (const item of value) if (item !== null && typeof item === 'object') nullArraysToEmpty(item);
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    // for…in: faster than Object.keys here, and JSON.parse makes only own keys.
    for (const k in o) {
      const v = o[k];
      if (v === null) {
        if (ARRAY_FIELDS.has(k)) o[k] = [];
      } else if (typeof v === 'object') nullArraysToEmpty(v);
    }
  }
  return value;
}
