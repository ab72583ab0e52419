// The helpers of the CloudPool suites (pool.int.test.ts, failures.int.test.ts): emulators of the
// local personality (one shared queue, one job at a time, like a real local server), pools
// over them, and what each emulator saw.
import { CloudClient, CloudPool, type CloudPoolOptions, type PoolJobResult, type PoolServer } from '../../../src/index.ts';
import { makePng, startEmulator, type Emulator, type Job } from '../../../src/emulator/index.ts';
import { invertWorkflow, until } from '../../helpers/emulator-runs.ts';

export type Wf = Record<string, { class_type: string; inputs: Record<string, unknown> }>;

/** LoadImage → ImageInvert → SaveImage; a unique prefix per job (the emulator caches identical workflows). */
export const workflow = (prefix: string, image = 'in.png'): Wf => invertWorkflow(image, prefix);
/** The same scaled with `method`, a choice (like a model file name) one server may lack. */
export const scaleWorkflow = (prefix: string, method = 'lanczos'): Wf => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageScale', inputs: { image: ['1', 0], upscale_method: method, width: 8, height: 8, crop: 'disabled' } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});
/** The same with ImageBlur, a class one server may lack. */
export const blurWorkflow = (prefix: string): Wf => ({
  '1': { class_type: 'LoadImage', inputs: { image: 'in.png' } },
  '2': { class_type: 'ImageBlur', inputs: { image: ['1', 0], blur_radius: 1, sigma: 1 } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
});

export const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a test opened, closed by {@link closeAll}. */
export const open: Array<{ close(): unknown }> = [];
/** Closes what a test opened (pools, emulators), newest first: each suite's `afterEach`. */
export async function closeAll(): Promise<void> {
  for (const o of open.splice(0).reverse()) await o.close();
}

export interface ServerOpts {
  port?: number;
  stepMs?: number;
  progressSteps?: number;
}
export async function server(o: ServerOpts = {}): Promise<Emulator> {
  const emu = await startEmulator({ port: o.port ?? 0, personality: 'local', cloud: { stepMs: o.stepMs ?? 10, progressSteps: o.progressSteps ?? 2 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}
export const three = (o: ServerOpts = {}) => Promise.all([server(o), server(o), server(o)]);
export const IDS = ['a', 'b', 'c', 'd'];

export function poolOf(emus: readonly Emulator[], options: CloudPoolOptions = {}, fields: (i: number) => Partial<PoolServer> = () => ({})): CloudPool {
  const pool = new CloudPool(
    emus.map((e, i) => ({ baseUrl: e.url, id: IDS[i], retry: { limit: 0 }, logLevel: 'off', ...fields(i) }) as PoolServer),
    { logLevel: 'off', ...options },
  );
  open.push(pool);
  return pool;
}
// The emulator has no option for its catalogue: these change an instance's own object_info,
// which its submissions are validated against too (a real difference, not a client trick).
export function dropClass(emu: Emulator, cls: string): void {
  const full = emu.cloud.objectInfo.bind(emu.cloud);
  emu.cloud.objectInfo = () => {
    const info = full();
    delete info[cls];
    return info;
  };
}
/** Takes `value` out of a combo's list, as a server without that model file. */
export function dropChoice(emu: Emulator, cls: string, input: string, value: string): void {
  const full = emu.cloud.objectInfo.bind(emu.cloud);
  emu.cloud.objectInfo = () => {
    const info = full();
    const spec = info[cls]!.input.required[input]!;
    spec[0] = (spec[0] as string[]).filter((v) => v !== value);
    return info;
  };
}
export const allUp = (pool: CloudPool) => until(() => pool.servers.every((s) => s.state === 'up'), 5000, 'every server up');

/** The emulator's jobs whose SaveImage prefix is `prefix` (a local server forgets a pending job it deletes). */
export const jobsOf = (emu: Emulator, prefix?: string): Job[] => [...emu.cloud.engine.jobs.values()].filter((j) => prefix === undefined || j.prompt['3']?.inputs.filename_prefix === prefix);
export const live = (emu: Emulator) => jobsOf(emu).filter((j) => j.status === 'pending' || j.status === 'in_progress').length;
export const uploads = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/upload\/image$/.test(r.path)).length;
export const submissions = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST' && /\/prompt$/.test(r.path)).length;
export const posts = (emu: Emulator) => emu.requests.filter((r) => r.method === 'POST').length;
export const countBy = (results: readonly PoolJobResult[]) => {
  const out: Record<string, number> = {};
  for (const r of results) out[r.server] = (out[r.server] ?? 0) + 1;
  return out;
};
/** Settles to the result or the error, never rejects. */
export const outcome = <T>(p: PromiseLike<T>): Promise<T | Error> =>
  Promise.resolve(p).then(
    (v) => v,
    (e: unknown) => e as Error,
  );
/** Foreign load: jobs submitted to a server by a plain client of another "process". */
export async function foreign(emu: Emulator, n: number, tag: string): Promise<void> {
  const other = new CloudClient({ baseUrl: emu.url, logLevel: 'off' });
  for (let i = 0; i < n; i++) await other.submit(workflow(`${tag}-${i}`));
}

