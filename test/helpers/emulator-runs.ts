// Helpers the emulator suites share.
import { expect } from 'vitest';
import type { Emulator, RecordedRequest } from '../../src/emulator/index.ts';
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

/** The messages that say a job ended (a job lost without a word sends none, and is not watched here). */
const ENDINGS = new Set(['execution_success', 'execution_error', 'execution_interrupted']);

/**
 * Watches where each job of `emu` ended in its request log: `after(id)` lists
 * the requests the emulator received after its engine ended job `id`, in
 * order. The engine's ending and each request's arrival run in turn on one
 * thread, so the order is exact on a machine however loaded (timestamps in
 * milliseconds could not order a poll and an ending of the same millisecond).
 * `close()` stops watching.
 */
export function requestsAfterEnd(emu: Emulator) {
  // The last request received before the ending (null: none yet); a reference, as the log drops its oldest entries.
  const marks = new Map<string, RecordedRequest | null>();
  const close = emu.cloud.subscribe((e) => {
    if (e.kind !== 'json' || !ENDINGS.has(e.message.type)) return;
    const id = e.message.data.prompt_id as string;
    if (!marks.has(id)) marks.set(id, emu.requests.at(-1) ?? null);
  });
  const after = (id: string): RecordedRequest[] => {
    if (!marks.has(id)) throw new Error(`job ${id} has not ended (no ending message seen)`);
    const last = marks.get(id)!;
    if (last === null) return [...emu.requests];
    const at = emu.requests.lastIndexOf(last);
    if (at < 0) throw new Error(`the request log dropped the requests around job ${id}'s end`);
    return emu.requests.slice(at + 1);
  };
  return { after, close };
}
