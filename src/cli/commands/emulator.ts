/**
 * `platformui emulator`: the `platformui-emulator` bin as a command; both run
 * the same function (`src/emulator/command.ts`), so options and output match.
 *
 * @module
 */
import { runEmulatorCommand } from '../../emulator/command.ts';
import type { Command } from '../command.ts';

/** `platformui emulator`. */
export const emulator: Command = {
  name: 'emulator',
  summary: 'start the local emulator of the registry, proxy and cloud (until Ctrl-C)',
  synopsis: '[--port N] [--personality cloud|spec|local] [options]',
  description: 'Starts the emulator (see `platformui emulator --help`).',
  options: {},
  args: { min: 0, max: Infinity },
  service: 'none',
  passthrough: true,
  examples: ['platformui emulator --port 8188 --personality local'],
  run: (ctx, { raw }) =>
    runEmulatorCommand(raw, {
      prog: 'platformui emulator',
      stdout: (text) => void ctx.io.stdout.write(text),
      stderr: (text) => void ctx.io.stderr.write(text),
    }),
};
