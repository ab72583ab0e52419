/**
 * `platformui emulator`: the `platformui-emulator` bin as a command; both run
 * the same function (`src/emulator/command.ts`), so options and output match.
 *
 * @module
 */
import { EMULATOR_HELP, runEmulatorCommand } from '../../emulator/command.ts';
import type { Command } from '../command.ts';

/** `platformui emulator`. */
export const emulator: Command = {
  ...EMULATOR_HELP,
  args: { min: 0, max: Infinity },
  service: 'none',
  passthrough: true,
  run: (ctx, { raw }) =>
    runEmulatorCommand(raw, {
      prog: 'platformui emulator',
      stdout: (text) => void ctx.io.stdout.write(text),
      stderr: (text) => void ctx.io.stderr.write(text),
    }),
};
