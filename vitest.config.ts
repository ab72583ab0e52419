import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm test` prints only results (README, Set-up): with typecheck on, vitest prints on stderr, every run, that
// type tests are experimental. Vitest 5 has no option to silence it, only this variable (read when it resolves
// this config, after loading this file); the newcomer run fails if the notice comes back on stderr.
process.env.VITEST_DISABLE_EXPERIMENTAL_LOG ??= '1';

export default defineConfig({
  // The queue entry imports the root by the package's name (so its build takes the root's classes from the
  // root entry): in tests, as for the type-checker (tsconfig paths), that name is the root's source.
  resolve: { alias: [{ find: /^@platformui\/sdk$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) }] },
  test: {
    // A test that writes to the console fails: `npm test` prints only results.
    setupFiles: ['test/setup/quiet.ts'],
    // Vitest's default, cores − 1 files at a time, runs one at a time on the 2-core CI machine and leaves a core idle:
    // at least two (most files wait on sockets, timers and child processes more than they compute).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    include: ['test/**/*.test.ts'],
    // The type tests, once. Their tsconfig holds them alone (and what they import): the whole project's type-check is
    // `npm run typecheck`, CI's step before this one; here it took a core for ~35 s more. Every file keeps a worker of
    // its own (vitest's default): with workers shared, a file's leftover background work reached the next file's
    // mocked fetch under load (a second `npm test` beside it).
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'], tsconfig: 'tsconfig.typetests.json' },
  },
});
