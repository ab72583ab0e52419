/**
 * The `platformui` bin (`dist/cli.js`; tsup adds the `#!/usr/bin/env node`
 * line, as for the other bins): runs {@link main} and exits with its code once
 * standard output and standard error are flushed (an exit right after a write
 * to a pipe may cut it short on some platforms).
 *
 * @module
 */
import { main } from './main.ts';

// A reader that stopped reading (`platformui jobs | head -1`) is no error: stop quietly, as Unix tools do.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const code = await main(process.argv.slice(2));
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
