import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A test that writes to the console fails: `npm test` prints only results.
    setupFiles: ['test/setup/quiet.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
  },
});
