// `platformui codegen`'s --name and --import-from are checked before the request for object_info
// (an emulator over real loopback counts what reaches it), and generateTypes refuses an import
// specifier that would not compile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.ts';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { InvalidArgumentError } from '../../../src/index.ts';
import { generateTypes } from '../../../src/workflow/codegen.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ logLevel: 'off' });
});
afterAll(() => emu.close());

async function codegen(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const io = { stdout: { write: (t: string) => void (stdout += t) }, stderr: { write: (t: string) => void (stderr += t) }, env: { PLATFORMUI_LOG: 'off' } };
  const code = await main(['codegen', '--server', emu.url, ...args], io);
  return { code, stdout, stderr };
}

describe('platformui codegen', () => {
  it('refuses a bad --name or --import-from with exit 2 before any request', async () => {
    emu.requests.length = 0;
    expect(await codegen('--name', '1 bad')).toEqual({ code: 2, stdout: '', stderr: 'platformui codegen: --name: must be an identifier, got "1 bad"\n(see platformui codegen --help)\n' });
    expect(await codegen('--import-from', '')).toEqual({ code: 2, stdout: '', stderr: `platformui codegen: --import-from: must be a module specifier ('@platformui/sdk', a path), got ""\n(see platformui codegen --help)\n` });
    expect(emu.requests).toEqual([]);
  });
});

describe('generateTypes', () => {
  it('refuses an import specifier that would not compile', () => {
    const info = { Foo: { input: { required: { image: ['IMAGE'] } }, output: ['IMAGE'] } };
    for (const importFrom of ['', '  ', 'a\nb']) expect(() => generateTypes(info, { importFrom }), JSON.stringify(importFrom)).toThrow(InvalidArgumentError);
    expect(generateTypes(info, { importFrom: '../sdk.ts' })).toContain(`from '../sdk.ts';`);
  });
});
