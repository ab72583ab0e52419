// `platformui codegen` in the test's process (src/cli/commands/codegen.ts, the one
// implementation; the `platformui-codegen` bin runs the command line's bundle), with the
// test's buffers for its streams.
import { main } from '../../src/cli/main.ts';

/** Where the command writes: standard output and standard error, or a test's buffers. */
export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIO: CommandIO = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/**
 * Runs `platformui codegen` with `argv` (its arguments, without the command's
 * name) and returns its exit code, as the command line's: 0 done, 1 failed,
 * 2 wrong usage, 3 a key refused or missing, 4 the server unreachable.
 *
 * @example
 * ```ts
 * const code = await runCodegen(['--file', 'object_info.json', '--out', 'src/nodes.generated.ts']);
 * // Wrote src/nodes.generated.ts: 440 node classes (225 KB) from object_info.json in 31 ms
 * ```
 */
export function runCodegen(argv: readonly string[], io: CommandIO = processIO): Promise<number> {
  return main(['codegen', ...argv], { stdout: { write: io.stdout }, stderr: { write: io.stderr }, env: process.env });
}
