import { defineConfig } from 'tsup';

// One bundle per entry: cold import time grows with the number of ESM files
// loaded (DESIGN §7), so the published entries are bundled, deps kept external.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', emulator: 'src/emulator/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node22',
    platform: 'neutral',
    external: ['ky', 'zod', 'ws', 'form-data', /^node:/],
    treeshake: true,
  },
  {
    entry: { 'emulator-cli': 'src/emulator/cli.ts' },
    format: ['esm'],
    target: 'node22',
    platform: 'node',
    external: ['ky', 'zod', 'ws', 'form-data'],
    banner: { js: '#!/usr/bin/env node' },
  },
]);
