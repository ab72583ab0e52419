import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

// The root and emulator entries import none of these at load time: validation runs on
// generated rules (no zod), HTTP on fetch, and `ws` / `form-data` load lazily when used.
// zod is for the `/schemas` entry only (external there: it loads the installed zod).
const external = ['zod', 'ws', 'form-data', /^node:/];
// Keep `node:` specifiers: bundlers recognise them as Node-only, bare `fs` they try to resolve.
const removeNodeProtocol = false;

// The browser build swaps the Node platform module for the browser one, so no
// Node built-in, `ws` or `form-data` can reach a browser bundle (DESIGN §1).
const browserPlatform: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'browser-platform',
  setup(build) {
    build.onResolve({ filter: /platform\/node\.ts$/ }, () => ({
      path: fileURLToPath(new URL('./src/platform/browser.ts', import.meta.url)),
    }));
  },
};

// One bundle per entry: cold import time grows with the number of ESM files
// loaded (DESIGN §7), so the published entries are bundled, deps kept external.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', emulator: 'src/emulator/index.ts', codegen: 'src/workflow/codegen.ts' },
    format: ['esm', 'cjs'],
    // One file per entry, no shared chunks: importing the root loads one module.
    splitting: false,
    dts: true,
    sourcemap: true,
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
    dts: true,
    sourcemap: true,
    target: 'node22',
    platform: 'node',
    external,
    removeNodeProtocol,
    treeshake: true,
  },
  {
    entry: { 'index.browser': 'src/index.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'es2022',
    platform: 'browser',
    external,
    removeNodeProtocol,
    treeshake: true,
    esbuildPlugins: [browserPlatform],
  },
  {
    // The bins: Node only, one file each. `cli` (platformui) is loaded by its bin alone:
    // no entry imports it, so a library user never pays for the command line.
    entry: { 'emulator-cli': 'src/emulator/cli.ts', 'codegen-cli': 'src/workflow/codegen-cli.ts', cli: 'src/cli/bin.ts' },
    format: ['esm'],
    splitting: false,
    target: 'node22',
    platform: 'node',
    external,
    removeNodeProtocol,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
