// Helpers the emulator suites share.
import { expect } from 'vitest';
import type { recorder } from './log-recorder.ts';

/** LoadImage → ImageInvert → SaveImage, the smallest job with an output file; `extra` goes into LoadImage's inputs. */
export const invertWorkflow = (image: string, prefix: string, extra: Record<string, unknown> = {}) => ({
  '1': { class_type: 'LoadImage', inputs: { image, ...extra } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

/** Resolves once `check()` holds, polling every 5 ms; throws after `ms`. */
export async function until(check: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a socket that cannot connect warns, once per run of failures (its `token` redacted). */
const SOCKET_WARNING = /^\[platformui\] socket could not connect to ws:\/\/[^ ]*\/ws\?clientId=[\w-]+(&token=\[REDACTED\])?: .*; retrying(, and runs in flight go on by polling meanwhile)?$/;

/**
 * Asserts that `log` holds nothing but that warning: whether a socket fault
 * made it warn (and whether a run was in flight then) depends on timing.
 */
export const onlySocketWarnings = (log: ReturnType<typeof recorder>) => expect(log.lines.filter((l) => l.level !== 'warn' || !SOCKET_WARNING.test(l.message))).toEqual([]);
