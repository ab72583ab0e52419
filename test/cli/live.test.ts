// withDisplay on a terminal, in process: the clients' log lines (a retry's warning)
// print above the live block, through the display, instead of under it on standard
// error, where the block's next redraw would leave a row of it behind.
import { describe, expect, it } from 'vitest';
import { Context, type GlobalOptions } from '../../src/cli/context.ts';
import { withDisplay } from '../../src/cli/live.ts';

const GLOBAL: GlobalOptions = { server: undefined, servers: [], apiKeyFile: undefined, tokenFile: undefined, timeout: undefined, json: false, verbose: false, noColor: true };

function terminal() {
  let text = '';
  return { write: (s: string) => void (text += s), isTTY: true, columns: 80, text: () => text };
}

describe('withDisplay on a terminal', () => {
  it("prints the clients' log lines above the live block, and on standard error again once it is gone", async () => {
    const stdout = terminal();
    const stderr = terminal();
    const ctx = new Context(GLOBAL, { stdout, stderr, env: {} });
    const warning = 'GET http://127.0.0.1:8188/api/jobs/p1: HTTP 503; retrying in 300 ms (attempt 2 of 3)';
    await withDisplay(ctx, {}, async (display) => {
      display.submitted('p1');
      ctx.log.logger.warn(warning);
      return 0;
    });
    expect(stderr.text()).toBe('');
    // Erase the block, the line, the block again: the line sits above it.
    expect(stdout.text()).toMatch(new RegExp(`Submitted job p1\\n[^]*\\r\\x1b\\[\\d+A\\x1b\\[J${warning.replace(/[.()[\]?]/g, '\\$&')}\\n`));
    ctx.log.logger.warn('after the block');
    expect(stderr.text()).toBe('after the block\n');
    ctx.close();
  });
});
