/**
 * What a registry search that found nothing says about its filters: the
 * registry writes `POSIX :: Linux`, so `supported_os: 'Linux'` matches no
 * node, silently. When a filter value is none of the known ones but looks
 * like one, the client warns once with the value it resembles.
 *
 * @module
 */
import { closest } from '../args.ts';
import type { Log } from '../transport/log.ts';

/** The `supported_os` values the spec gives as examples (`registry-and-proxy.md`, endpoint 1). */
export const OS_VALUES = [
  'POSIX :: Linux',
  'MacOS',
  'MacOS :: MacOS X',
  'OS Independent',
  'POSIX :: Linux :: Ubuntu',
  'Microsoft :: Windows',
  'Microsoft :: Windows :: Windows 10',
] as const;

/** `supported_accelerators` values as registries write them (the spec names none). */
export const ACCELERATOR_VALUES = ['CUDA', 'ROCm', 'DirectML', 'Metal', 'CPU'] as const;

const FILTERS = [
  ['supported_os', OS_VALUES],
  ['supported_accelerator', ACCELERATOR_VALUES],
] as const;

/**
 * The known value `given` resembles when it is none of them: the first one
 * containing it, whatever the case (3 characters or more: `Linux` →
 * `POSIX :: Linux`, `cuda` → `CUDA`), else one a small edit away (4 or more:
 * `Linx`; `TPU` is no `CPU`); `undefined` otherwise.
 */
export function resembling(given: string, known: readonly string[]): string | undefined {
  const lower = given.trim().toLowerCase();
  if (known.includes(given) || lower.length < 3) return undefined;
  return known.find((k) => k.toLowerCase().includes(lower)) ?? (lower.length > 3 ? closest(given, known) : undefined);
}

/**
 * What to say about the filters of a search that matched no node: a line for
 * each whose value resembles a known one, `no node matches supported_os
 * 'Linux'; registry values look like 'POSIX :: Linux' (did you mean it?)`.
 */
export function unmatchedFilters(params: Readonly<Record<string, unknown>>): string[] {
  const lines: string[] = [];
  for (const [param, known] of FILTERS) {
    const given = params[param];
    const like = typeof given === 'string' ? resembling(given, known) : undefined;
    if (like) lines.push(`no node matches ${param} '${given}'; registry values look like '${like}' (did you mean it?)`);
  }
  return lines;
}

/** Logs each of {@link unmatchedFilters} as a warning. */
export function warnUnmatchedFilters(log: Log, params: Parameters<typeof unmatchedFilters>[0]): void {
  if (log.warn) for (const line of unmatchedFilters(params)) log.warn(line, {});
}
