/**
 * The `platformui` bin (`dist/cli.js`; tsup adds the `#!/usr/bin/env node`
 * line, as for the other bins): runs {@link main} and exits with its code once
 * standard output and standard error are flushed (an exit right after a write
 * to a pipe may cut it short on some platforms).
 *
 * @module
 */
import { interruptOnBrokenPipe } from './interrupt.ts';
import { main } from './main.ts';

// A reader that stopped reading (`platformui jobs | head -1`) is no error for a read-only command:
// stop quietly, as Unix tools do. A command following a job (run, job --follow) is interrupted as
// by Ctrl-C instead: run stops its job, then it exits 141 (128 + SIGPIPE), never 0.
let stdoutClosed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  if (stdoutClosed) return;
  stdoutClosed = true;
  if (!interruptOnBrokenPipe()) process.exit(0);
});

const code = await main(process.argv.slice(2));
const flushed = () => process.stderr.write('', () => process.exit(code));
if (stdoutClosed) flushed();
else process.stdout.write('', flushed);
