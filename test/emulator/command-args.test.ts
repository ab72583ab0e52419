// The emulator command's own parser (`platformui-emulator`, and `platformui emulator`, which
// hands it the same arguments): what it says of a mistyped option, and `--version`, as the
// rest of the command line does. Nothing here starts an emulator.
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { runEmulatorCommand } from '../../src/emulator/command.ts';

async function command(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runEmulatorCommand(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe('platformui-emulator', () => {
  it('suggests the option a mistyped one resembles (exit 2), without echoing its value', async () => {
    const typo = await command(['--prot', '8787']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^Unknown argument: --prot \(did you mean --port\?\)\n/);
    const inline = await command(['--personalty=secret-ish']);
    expect(inline.code).toBe(2);
    expect(inline.stderr).toMatch(/^Unknown argument: --personalty=… \(did you mean --personality\?\)\n/);
    expect(inline.stderr).not.toContain('secret-ish');
    const far = await command(['--frobnicate']);
    expect(far.stderr).toMatch(/^Unknown argument: --frobnicate\n/);
  });

  it('prints its version with --version or -V, as platformui does', async () => {
    for (const flag of ['--version', '-V']) {
      expect(await command([flag]), flag).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});
