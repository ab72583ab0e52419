import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm test` prints only results (README, Set-up): with typecheck on, vitest prints on stderr, every run, that
// type tests are experimental. Vitest 5 has no option to silence it, only this variable (read when it resolves
// this config, after loading this file); the newcomer run fails if the notice comes back on stderr.
process.env.VITEST_DISABLE_EXPERIMENTAL_LOG ??= '1';

// Files that run in a worker of their own (vitest's default): those that change what the next file in the same
// process would see. The others share workers (`isolate: false`), so that ~100 files do not each pay a worker's
// start, ~0.8 s of a 2-core machine: with isolation off vitest keeps the modules a worker has evaluated, mocks
// aside, so a file here is one that mocks a module (vi.mock), stubs the environment (vi.stubEnv, not undone at
// the end of a file), fakes timers, runs the command line in-process (it replaces process.env and the working
// directory), asserts on what has not been loaded yet (a module evaluated by an earlier file would be), or
// measures the process's heap (an earlier file's garbage would count).
const OWN_WORKER = [
  'test/queue/missing-deps.test.ts',
  'test/cloud/realtime-on-first-use.int.test.ts',
  'test/cloud/pool/pool.int.test.ts',
  'test/errors-messages.test.ts',
  'test/cli/commands/run-pool-key.int.test.ts',
  'test/transport/log.test.ts',
  'test/transport/log.int.test.ts',
  'test/cli/waiting.test.ts',
  'test/cli/display.test.ts',
  'test/cloud/socket.test.ts',
  'test/cloud/pool/waiting.test.ts',
  'test/cli/commands/queue-redis.int.test.ts',
  'test/cli/commands/run-named-inputs.int.test.ts',
  'test/cli/commands/run-v2.int.test.ts',
  'test/cli/main.int.test.ts',
  'test/cloud/jobs-outputs.int.test.ts',
  'test/cloud/pool/placement-loading.test.ts',
  'test/workflow/lazy.test.ts',
  'test/errors-class-names.test.ts',
  'test/cloud/socket.int.test.ts',
  'test/cloud/socket-faults.int.test.ts',
  'test/cloud/v2/hash.test.ts',
];

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
    projects: [
      {
        extends: true,
        test: {
          name: 'own-worker',
          include: OWN_WORKER,
          // The type tests, once. Their tsconfig holds them alone (and what they import): the whole project's
          // type-check is `npm run typecheck`, CI's step before this one; here it took a core for ~35 s more.
          typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'], tsconfig: 'tsconfig.typetests.json' },
        },
      },
      { extends: true, test: { name: 'shared-worker', include: ['test/**/*.test.ts'], exclude: OWN_WORKER, isolate: false } },
    ],
  },
});
