// The command line's key rule holds for `run` with several --server (a CloudPool) as for one:
// PLATFORMUI_API_KEY goes to the --server that PLATFORMUI_CLOUD_URL names, never to another
// loopback server. Two emulators (cloud personality: a key is required) over real loopback.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthenticationError } from '../../../src/index.ts';
import { Context, type GlobalOptions } from '../../../src/cli/context.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../../src/emulator/index.ts';

let named: Emulator;
let other: Emulator;
beforeAll(async () => {
  [named, other] = await Promise.all([startEmulator({ logLevel: 'off' }), startEmulator({ logLevel: 'off' })]);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([named.close(), other.close()]);
});

describe('platformui run --server A --server B', () => {
  it("sends the environment's key to the server PLATFORMUI_CLOUD_URL names, and only to it", async () => {
    // In the process's environment too, where the SDK's own key rule reads it: the clients still send it to `named` only.
    vi.stubEnv('PLATFORMUI_CLOUD_URL', named.url);
    vi.stubEnv('PLATFORMUI_API_KEY', EMULATOR_API_KEY);
    const global: GlobalOptions = { server: other.url, servers: [named.url, other.url], apiKeyFile: undefined, tokenFile: undefined, timeout: undefined, json: false, verbose: false, noColor: false };
    let stderr = '';
    const ctx = new Context(global, { stdout: { write: () => true }, stderr: { write: (t: string) => void (stderr += t) }, env: { PLATFORMUI_LOG: 'off', PLATFORMUI_CLOUD_URL: named.url, PLATFORMUI_API_KEY: EMULATOR_API_KEY } });
    try {
      const pool = await ctx.pool();
      await expect(pool.client(named.url)!.getQueue()).resolves.toBeDefined();
      await expect(pool.client(other.url)!.getQueue()).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      ctx.close();
    }
    expect(stderr).toBe('');
  });
});
