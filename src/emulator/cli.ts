/**
 * `platformui-emulator`: starts the emulator from a shell (also `platformui
 * emulator`; both run `command.ts`). `--help` for usage.
 *
 *     platformui-emulator [--port N] [--host H] [--personality cloud|spec|local|v2|v2-real] [--step-ms N]
 *                         [--max-upload-bytes N|Infinity] [--synthetic-output NAME:SIZE]...
 *
 * @module
 */
import { runEmulatorCommand } from './command.ts';

process.exit(await runEmulatorCommand(process.argv.slice(2)));
