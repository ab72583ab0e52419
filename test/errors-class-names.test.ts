// Classes carry their own names in the BUILT package (issue 32, item 7): the sources always did, but
// esbuild renames a class that names itself inside its body (`class _APIConnectionError`) and its
// CommonJS output assigns the error classes to `exports.X` anonymously (`.name` empty, so
// `util.inspect(err)` printed `Error [NotFoundError]`). dist/ is built first when it is stale
// (scripts/ensure-built.mjs: nothing to do when it is fresh).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/ensure-built.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ensure-built failed:\n${r.stdout}\n${r.stderr}`);
}, 300_000);

type Module = Record<string, unknown>;
const load = async (entry: string, format: 'esm' | 'cjs'): Promise<Module> =>
  format === 'esm' ? ((await import(pathToFileURL(`${ROOT}dist/${entry}.js`).href)) as Module) : (require(`${ROOT}dist/${entry}.cjs`) as Module);

/** Every exported class (a function whose export name is capitalised) whose `name` is not its export name. */
const misnamed = (m: Module) =>
  Object.entries(m)
    .filter(([k, v]) => typeof v === 'function' && /^[A-Z]/.test(k) && (v as { name: string }).name !== k)
    .map(([k, v]) => `${k} is named ${JSON.stringify((v as { name: string }).name)}`);

describe.each(['esm', 'cjs'] as const)('dist (%s)', (format) => {
  it.each(['index', 'emulator', 'codegen'])('every class exported by %s is named as exported', async (entry) => {
    const m = await load(entry, format);
    expect(Object.keys(m).length).toBeGreaterThan(0);
    expect(misnamed(m)).toEqual([]);
  });

  it('an error names its class: err.name, err.constructor.name, and util.inspect', async () => {
    const m = await load('index', format);
    const NotFound = m.NotFoundError as new (init: object) => Error;
    const Connection = m.APIConnectionError as new (method: string, url: string, detail?: string, code?: string) => Error;
    const notFound = new NotFound({ status: 404, body: '', method: 'GET', url: 'https://registry.test/nodes/x' });
    const connection = new Connection('GET', 'https://registry.test/nodes', 'refused', 'ECONNREFUSED');
    for (const [err, name] of [[notFound, 'NotFoundError'], [connection, 'APIConnectionError']] as const) {
      expect(err.name).toBe(name);
      expect(err.constructor.name).toBe(name);
      expect(inspect(err).startsWith(`${name}: `), inspect(err).split('\n')[0]).toBe(true);
    }
  });
});

// A browser app's files of this package loaded on first use (following a job, Comfy API v2, the submission, …) are
// self-contained: each carries its own copy of the error classes it throws. `instanceof` holds across copies by the
// classes' names (PlatformUIError[Symbol.hasInstance]); a second import of the module (its own instance) stands for one.
describe('instanceof across copies of the error classes', () => {
  const copies = async () => {
    const ours = await import('../src/errors.ts');
    const jobs = await import('../src/cloud/job-errors.ts');
    // A query makes the module loader evaluate the file again (a specifier tsc does not resolve, hence the variable).
    const again = (file: string): Promise<unknown> => import(`${file}?another-copy`);
    const other = (await again('../src/errors.ts')) as typeof ours;
    const otherJobs = (await again('../src/cloud/job-errors.ts')) as typeof jobs;
    return { ours, jobs, other, otherJobs };
  };

  it('an error of another copy is an instance of this copy\'s class and of each class above it, of no other', async () => {
    const { ours, other } = await copies();
    expect(other.NotFoundError).not.toBe(ours.NotFoundError);
    const err = new other.NotFoundError({ status: 404, body: '', method: 'GET', url: 'https://registry.test/nodes/x' });
    expect(err instanceof ours.NotFoundError).toBe(true);
    expect(err instanceof ours.APIError).toBe(true);
    expect(err instanceof ours.PlatformUIError).toBe(true);
    expect(err instanceof ours.ConflictError).toBe(false);
    expect(err instanceof ours.APIConnectionError).toBe(false);
    const timeout = new other.APITimeoutError('POST', 'https://cloud.test/api/prompt', 100);
    expect([timeout instanceof ours.APITimeoutError, timeout instanceof ours.APIConnectionError, timeout instanceof ours.APIError]).toEqual([true, true, false]);
  });

  it('holds for a feature file\'s errors over its own copy of the base, both ways', async () => {
    const { ours, jobs, otherJobs } = await copies();
    const err = new otherJobs.JobCancelledError('p1');
    expect(err instanceof jobs.JobCancelledError).toBe(true);
    expect(err instanceof ours.PlatformUIError).toBe(true);
    expect(err instanceof jobs.ExecutionError).toBe(false);
    expect(new jobs.JobCancelledError('p1') instanceof otherJobs.JobCancelledError).toBe(true);
  });

  it('is not fooled by what only looks like one: a plain Error, a parsed object, a class of the same name elsewhere', async () => {
    const { ours } = await copies();
    expect(new Error('x') instanceof ours.PlatformUIError).toBe(false);
    expect(JSON.parse('{"constructor":{"name":"PlatformUIError"},"name":"PlatformUIError"}') instanceof ours.PlatformUIError).toBe(false);
    class NotFoundError extends Error {}
    expect(new NotFoundError('x') instanceof ours.NotFoundError).toBe(false);
    for (const v of [undefined, null, 0, 'PlatformUIError', {}]) expect(v instanceof ours.PlatformUIError).toBe(false);
  });

  it('a subclass of the user\'s own is told apart from its base and named after itself', async () => {
    const { ours } = await copies();
    class QuotaError extends ours.PlatformUIError {}
    const quota = new QuotaError('over quota');
    expect([quota instanceof QuotaError, quota instanceof ours.PlatformUIError, new ours.PlatformUIError('x') instanceof QuotaError]).toEqual([true, true, false]);
    expect(quota.name).toBe('QuotaError');
  });
});
