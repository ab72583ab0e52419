// `npm test` prints only results (vitest.config.ts runs this before every test
// file): a test during which anything is written to the console, or straight
// to process.stdout/stderr, fails with what was written, and so does a file
// that writes outside its tests (at load, in a hook, after a test ended).
//
// The SDK's default logger is `console` (src/transport/log.ts), so a test that
// provokes a warning captures it: `recorder()` (test/helpers/log-recorder.ts) as
// the client's or the emulator's `logger`, asserting on its lines when they
// are part of what the test is about, or `logLevel: 'off'` when incidental.
// No test needs the console for itself: a figure goes to `annotate()`, the
// reason for a skip to `skip(note)`. A child process (the CLI tests) writes
// to its own pipes: not concerned.
import { format } from 'node:util';
import { afterAll, afterEach, beforeAll } from 'vitest';

const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'table'] as const;
const STREAMS = ['stdout', 'stderr'] as const;
const printed: string[] = [];
const shorten = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}…` : text);

// Patched on the objects themselves (the SDK's logger is the `console` object,
// its methods read at each line), restored after the file.
const consoleOriginals = METHODS.map((m) => [m, console[m]] as const);
for (const m of METHODS) console[m] = (...args: unknown[]) => void printed.push(`console.${m}: ${shorten(format(...args))}`);
const streamOriginals = STREAMS.map((s) => [s, process[s].write] as const);
for (const s of STREAMS) {
  process[s].write = ((chunk: unknown, ...rest: unknown[]) => {
    printed.push(`process.${s}.write: ${shorten(String(chunk))}`);
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
}

function check(what: string) {
  if (printed.length === 0) return;
  const lines = printed.splice(0);
  const shown = lines.slice(0, 10).map((l) => `  ${l.replace(/\n/g, '\n    ')}`);
  if (lines.length > 10) shown.push(`  … and ${lines.length - 10} more`);
  throw new Error(
    `${what} wrote to the console, and \`npm test\` prints only results:\n${shown.join('\n')}\n` +
      "Capture what the test provokes: pass `logger: recorder().logger` (test/helpers/log-recorder.ts) to the client or the emulator and assert on its lines, or `logLevel: 'off'` where a line is incidental. " +
      "A test's own figures go to `annotate()`, the reason it skips to `skip(note)`.",
  );
}

beforeAll(() => check('This file, as it loaded,'));
afterEach(() => check('This test'));
afterAll(() => {
  try {
    check('This file, outside its tests (at load, in a hook, or after a test ended),');
  } finally {
    for (const [m, original] of consoleOriginals) console[m] = original;
    for (const [s, original] of streamOriginals) process[s].write = original;
  }
});
