import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

// The root and emulator entries import none of these at load time: validation runs on
// generated rules (no zod), HTTP on fetch, and `ws` / `form-data` load lazily when used.
// zod is for the `/schemas` entry only (external there: it loads the installed zod). bullmq and ioredis
// are the queue's optional peers: loaded by `/queue` and the command line's Redis commands, never bundled.
const external = ['zod', 'ws', 'form-data', 'bullmq', 'ioredis', 'hash-wasm', /^node:/];
// Keep `node:` specifiers: bundlers recognise them as Node-only, bare `fs` they try to resolve.
const removeNodeProtocol = false;

// The browser build swaps modules for their browser twins: the Node platform module for the browser one, so no
// Node built-in, `ws` or `form-data` can reach a browser bundle (DESIGN §1); the editor converter's door, which in
// Node holds it from the start and in a browser loads it on first use (issue 34: `Workflow`'s budget).
const browserTwins: Record<string, string> = { 'platform/node.ts': 'platform/browser.ts', 'workflow/editor-code.ts': 'workflow/editor-code.browser.ts' };
const browserPlatform: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'browser-platform',
  setup(build) {
    build.onResolve({ filter: /(platform\/node|editor-code)\.ts$/ }, async (args) => {
      if (args.pluginData === 'browser-platform') return undefined;
      const resolved = await build.resolve(args.path, { importer: args.importer, resolveDir: args.resolveDir, kind: args.kind, pluginData: 'browser-platform' });
      const twin = Object.entries(browserTwins).find(([node]) => resolved.path.endsWith(`/src/${node}`))?.[1];
      return twin ? { path: fileURLToPath(new URL(`./src/${twin}`, import.meta.url)) } : undefined;
    });
  },
};

// The editor-format converter loads on first use in a browser (`workflow/editor-code.browser.ts`: issues 25 and 34): that
// import names a file of its own, self-contained, so an app bundler makes it a chunk loaded only when an editor
// workflow is converted (or `object_info` fetched, or `Workflow.loadEditor()` called). (A shared chunk would not do: esbuild's code
// splitting assigns whole modules to chunks, and the app needs other parts of that module at start.)
/** A module the code loads with `import()` that the browser build ships as a file of its own, `<file>.browser.js`. */
const lazyFile = (file: string, filter: RegExp, importer = ''): NonNullable<Options['esbuildPlugins']>[number] => ({
  name: `lazy-${file}`,
  setup(build) {
    build.onResolve({ filter }, (args) => (args.kind === 'dynamic-import' && args.importer.endsWith(importer) ? { path: `./${file}.browser.js`, external: true } : undefined));
  },
});
const lazyEditor = lazyFile('editor', /workflow\/editor\.ts$/);

// A CloudClient of `server: 'v2'` loads Comfy API v2's code on first use (`import()`, issue 33). In the browser
// build that import names a file of its own (`v2.browser.js`), so an app bundler makes it a chunk that only a v2
// client loads (with hash-wasm, which it imports on a v2 upload). Like every lazily loaded file, it carries its own copy
// of the error classes it throws: `err instanceof SubmissionError` holds for its errors by the classes' names
// (`errors.ts`, `PlatformUIError[Symbol.hasInstance]`). An import of the root's classes would not do: the app bundler
// would then load at start, in every app, each error class any lazily loaded file throws.
const lazyV2 = lazyFile('v2', /v2\/backend\.ts$/);
// In v2's file, hash-wasm's BLAKE3 (`v2/blake3-wasm.ts`, a named re-export an app bundler can tree-shake) loads on the
// first upload: a file of its own, `blake3.browser.js`.
const lazyBlake3 = lazyFile('blake3', /(^|\/)blake3-wasm\.ts$/, 'v2/hash.ts');

// Realtime (`cloud/run.ts`: the socket, frame and message routing, the follower, its states and records) loads on
// the first run(), follow(), waitForJob() or connect(), or when a pool starts watching (issue 34), through the one
// door `cloud/realtime.ts`: in the browser build a file of its own.
const lazyRun = lazyFile('run', /(^|\/)run\.ts$/, 'cloud/realtime.ts');

// The workflow validator loads on first use where the caller is asynchronous (issue 34): a CloudClient's first
// validateWorkflow() (so the first submit() or run() with `validate: true`), a CloudPool when it is made. In the browser
// build a file of its own (`validate.browser.js`).
// `Workflow` and the root's `validateWorkflow` import it statically (their API is synchronous): this file is only for
// the dynamic imports.
const lazyValidate = lazyFile('validate', /(^|\/)validation\.ts$/, 'cloud/workflow-code.ts');

// The submission of the cloud and a local server (`cloud/submit.ts`, `submission.ts`) loads on the first submit() or
// run() (issue 34): a file of its own in the browser build.
const lazySubmit = lazyFile('submit', /(^|\/)submit\.ts$/, 'cloud/backend.ts');

// A pool's input uploads (`cloud/pool/uploads.ts`) load on its first job with `inputs` (issue 34): a file of its own in
// the browser build.
const lazyPoolUploads = lazyFile('pool-uploads', /(^|\/)uploads\.ts$/, 'cloud/pool/uploads-code.ts');

// A client's uploads and downloads (`cloud/uploads.ts`, `cloud/downloads.ts`) load on their first use (issue 34): files
// of their own in the browser build.
const lazyTransfers = [lazyFile('uploads', /(^|\/)uploads\.ts$/, 'cloud/transfers-code.ts'), lazyFile('downloads', /(^|\/)downloads\.ts$/, 'cloud/transfers-code.ts')];

// The cloud's and a local server's requests about a job (status, record, stop; the queue, the interrupt:
// `cloud/protocol/v1-routes.ts`) load on a client's first such request (issue 34): a file of its own in the browser build.
const lazyRoutes = lazyFile('routes', /(^|\/)v1-routes\.ts$/, 'protocol/v1.ts');

// A proxy task's polling loop (`proxy/poll.ts`) loads on the first waitForTask() (issue 34): a file of its own in the
// browser build.
const lazyPoll = lazyFile('task-poll', /(^|\/)poll\.ts$/, 'proxy/tasks.ts');

// A pool's health requests (`cloud/pool/requests.ts`: a server's nodes and queue read, the probe while it is down) load
// when the first pool starts watching (issue 34): a file of its own in the browser build.
const lazyHealth = lazyFile('pool-health', /(^|\/)requests\.ts$/, 'cloud/pool/health.ts');

// The walk that words why a value fails a rule (`schemas/explain.ts`) loads on the first failure of an asynchronous
// caller's check (`schemas/validate-later.ts`: a client's arguments and responses; issue 34): a file of its own in the
// browser build.
const lazyExplain = lazyFile('explain', /(^|\/)explain\.ts$/, 'schemas/validate-later.ts');

// The registry's findMissingPacks() logic, its publishing and the hint for a search that found nothing load on first use
// (issue 34: RegistryClient's budget): files of their own in the browser build.
const lazyRegistry = [lazyFile('missing-packs', /(^|\/)missing-packs\.ts$/, 'registry/client.ts'), lazyFile('publish', /(^|\/)publish\.ts$/, 'registry/client.ts'), lazyFile('filter-hint', /(^|\/)filter-hint\.ts$/, 'registry/client.ts')];

// The modules whose classes are the root's public errors: the shared hierarchy and the feature error files beside
// their features (every runtime export of each is a class the root entry exports under the same name).
const rootErrorModules = new Set(
  ['errors.ts', 'cloud/job-errors.ts', 'cloud/submission-errors.ts', 'cloud/pool/errors.ts', 'proxy/errors.ts', 'registry/errors.ts', 'workflow/errors.ts'].map((p) =>
    fileURLToPath(new URL(`./src/${p}`, import.meta.url)),
  ),
);

// The queue's JavaScript takes what the root exports from the installed root entry (`@platformui/sdk`,
// the package's own name: Node resolves it to dist/index.js or dist/index.cjs), not from a second copy
// bundled into dist/queue.*: with a copy, `err instanceof ExecutionError` (the root's class) would be
// false for the queue's errors, and a root `CloudClient` handed to a worker would fail the pool's check.
// So the queue imports the root's classes from `../index.ts` or by name; internals it may bundle.
const rootByName: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'root-by-name',
  setup(build) {
    const rootEntry = fileURLToPath(new URL('./src/index.ts', import.meta.url));
    // The error classes too, wherever a shared helper imports them from (every runtime export of rootErrorModules the
    // queue's code reaches is a public class of the root; the packaging test loads the entry, so a miss fails there).
    build.onResolve({ filter: /(^|\/)(index|[\w-]*errors)(\.ts)?$/ }, async (args) => {
      if (args.pluginData === 'root-by-name') return undefined;
      const resolved = await build.resolve(args.path, { importer: args.importer, resolveDir: args.resolveDir, kind: args.kind, pluginData: 'root-by-name' });
      // sideEffects: false (true of the package: see package.json): esbuild then drops the names a bundled module
      // imports but the queue never reaches (e.g. `APIError` from cloud/client.ts), instead of leaving them for
      // the tree-shaking pass to warn about as "imported from external module … but never used".
      return resolved.path === rootEntry || rootErrorModules.has(resolved.path) ? { path: '@platformui/sdk', external: true, sideEffects: false } : undefined;
    });
  },
};

// The CommonJS bundles assign each class of a lazily loaded module (the errors, reached by the editor
// converter's `import()`) to `exports.X` as an anonymous class: its `name` is empty, so `util.inspect(err)`
// printed `Error [NotFoundError]` (issue 32). This names each such class after its export, for every CommonJS
// entry (it runs before esbuild's closing `exports.X = X` lines, whose classes are declared, so named, already).
// esbuild's keepNames would name them too, for +3.6 KB min+gz on dist/index.js; this costs 0.1 KB in the .cjs only.
const namedExports: Options['footer'] = ({ format }) =>
  format === 'cjs'
    ? { js: "for (const [k, v] of Object.entries(exports)) if (typeof v === 'function' && /^[A-Z]/.test(k) && v.name !== k) Object.defineProperty(v, 'name', { value: k });" }
    : undefined;

// One bundle per entry: cold import time grows with the number of ESM files
// loaded (DESIGN §7), so the published entries are bundled, deps kept external.
// No source maps in the package (issue 24): they were over half of it, and the
// bundles are not minified, so a stack trace already names our functions and
// points at readable lines of dist/*.js.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', emulator: 'src/emulator/index.ts', codegen: 'src/workflow/codegen.ts' },
    format: ['esm', 'cjs'],
    footer: namedExports,
    // One file per entry, no shared chunks: importing the root loads one module.
    splitting: false,
    dts: true,
    target: 'node22',
    platform: 'node',
    external,

    removeNodeProtocol,
    treeshake: true,
  },
  {
    // The schemas are for users' own zod: built against the zod they install, not a bundled copy.
    entry: { schemas: 'src/schemas/index.ts' },
    format: ['esm', 'cjs'],
    footer: namedExports,
    dts: true,
    target: 'node22',
    platform: 'node',
    external,
    removeNodeProtocol,
    treeshake: true,
  },
  {
    // The queue (issue 26): Node only, its own config so nothing of it reaches the root's bundle. bullmq and
    // ioredis are optional peers the user installs: always external, never bundled (a bundled copy would
    // be a second ioredis beside the user's, at a version they did not choose).
    entry: { queue: 'src/queue/index.ts' },
    format: ['esm', 'cjs'],
    footer: namedExports,
    splitting: false,
    dts: true,
    target: 'node22',
    platform: 'node',
    external: [...external, 'bullmq', 'ioredis', /^bullmq\//, /^ioredis\//, '@platformui/sdk'],
    removeNodeProtocol,
    treeshake: true,
    esbuildPlugins: [rootByName],
  },
  {
    // The browser build: the root, and each file it loads on first use (see lazyFile and the plugins above), every
    // one self-contained but for the others it loads on first use in turn.
    entry: {
      'index.browser': 'src/index.ts',
      'editor.browser': 'src/workflow/editor.ts',
      'filter-hint.browser': 'src/registry/filter-hint.ts',
      'explain.browser': 'src/schemas/explain.ts',
      'v2.browser': 'src/cloud/v2/backend.ts',
      'run.browser': 'src/cloud/run.ts',
      'validate.browser': 'src/cloud/validation.ts',
      'missing-packs.browser': 'src/registry/missing-packs.ts',
      'publish.browser': 'src/registry/publish.ts',
      'blake3.browser': 'src/cloud/v2/blake3-wasm.ts',
      'submit.browser': 'src/cloud/submit.ts',
      'pool-uploads.browser': 'src/cloud/pool/uploads.ts',
      'uploads.browser': 'src/cloud/uploads.ts',
      'downloads.browser': 'src/cloud/downloads.ts',
      'routes.browser': 'src/cloud/protocol/v1-routes.ts',
      'task-poll.browser': 'src/proxy/poll.ts',
      'pool-health.browser': 'src/cloud/pool/requests.ts',
    },
    format: ['esm'],
    splitting: false,
    target: 'es2022',
    platform: 'browser',
    external,
    removeNodeProtocol,
    treeshake: true,
    esbuildPlugins: [browserPlatform, lazyEditor, lazyV2, lazyBlake3, lazyRun, lazyValidate, lazyExplain, lazySubmit, lazyPoolUploads, lazyRoutes, lazyPoll, lazyHealth, ...lazyTransfers, ...lazyRegistry],
  },
  {
    // The bins: Node only. `cli` (platformui) is loaded by its bin alone: no entry
    // imports it, so a library user never pays for the command line. What the bins
    // share (the clients, the emulator, codegen) is one chunk file, not a copy in each.
    entry: { 'emulator-cli': 'src/emulator/cli.ts', 'codegen-cli': 'src/workflow/codegen-cli.ts', cli: 'src/cli/bin.ts' },
    format: ['esm'],
    splitting: true,
    target: 'node22',
    platform: 'node',
    external,
    removeNodeProtocol,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
