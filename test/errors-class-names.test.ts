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
