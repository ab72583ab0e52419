// Shared by the queue suites: a Redis per file, emulators as servers, workers and queues closed after each test.
import { makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { JobQueue, QueueWorker, type JobQueueOptions, type QueueWorkerOptions } from '../../src/queue/index.ts';
import type { PoolServer } from '../../src/index.ts';

export type Wf = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
/** LoadImage → ImageInvert → SaveImage; a unique prefix per job (the emulator caches identical workflows). */
export const invert = (prefix: string, extra: Record<string, unknown> = {}): Wf => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0], ...extra } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});
export const blur = (prefix: string): Wf => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 1, sigma: 1 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

export const open: Array<{ close(): unknown }> = [];
export async function closeAll(): Promise<void> {
  for (const o of open.splice(0).reverse()) await o.close();
}

export async function emulator(o: { stepMs?: number; progressSteps?: number; personality?: 'local' | 'cloud' } = {}): Promise<Emulator> {
  const emu = await startEmulator({ personality: o.personality ?? 'local', logLevel: 'off', cloud: { stepMs: o.stepMs ?? 5, progressSteps: o.progressSteps ?? 2 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}

// The emulator without `cls` in its object_info (and refusing it): a server another lane's.
export { dropClass } from '../cloud/pool/helpers.ts';

export const promptPosts = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/prompt$/.test(r.path)).length;

export async function worker(url: string, emus: readonly Emulator[], o: Partial<QueueWorkerOptions> = {}, ids = emus.map((_, i) => `s${i}`)): Promise<QueueWorker> {
  const servers = emus.map((e, i) => ({ baseUrl: e.url, id: ids[i], retry: { limit: 0 }, logLevel: 'off' }) as PoolServer);
  const w = new QueueWorker({ connection: url, servers, logLevel: 'off', ...o });
  open.push(w);
  await w.ready();
  return w;
}

/** A producer on `url`'s queue `name` (with `options`), closed after the test. */
export function queue(url: string, name?: string, options: Omit<JobQueueOptions, 'connection' | 'name'> = {}): JobQueue {
  const q = new JobQueue({ connection: url, ...(name !== undefined ? { name } : {}), ...options });
  open.push(q);
  return q;
}

export async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
