// Vite config of the example page (examples/browser/). `npm run example:browser`
// serves it (serve.ts); test/browser/app.mjs and bench/browser-app.ts build it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // Relative asset URLs: the built page works from any directory.
  base: './',
  logLevel: 'warn',
  build: { target: 'es2022', emptyOutDir: true },
});
