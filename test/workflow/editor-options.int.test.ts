// Review of issue 25: a workflow saved in the editor, with bad options, is refused before any request (real loopback).
import { afterEach, describe, expect, it } from 'vitest';
import { CloudClient, CloudPool, InvalidArgumentError } from '../../src/index.ts';
import { startEmulator } from '../../src/emulator/index.ts';

const saved = () => ({
  version: 0.4,
  nodes: [
    { id: 1, type: 'EmptyImage', mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }], widgets_values: [8, 8, 1, 0] },
    { id: 2, type: 'SaveImage', mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: 1 }], outputs: [], widgets_values: ['review'] },
  ],
  links: [[1, 1, 0, 2, 0, 'IMAGE']],
});

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

describe('run() of a workflow saved in the editor', () => {
  it.each([[{ promptId: '' }], [{ widgetValues: 'loose' }], [{ extraData: 'x' }], [{ partnerApiKey: '' }]])('refuses %j before any request', async (options) => {
    const emu = await startEmulator({ port: 0, personality: 'local' });
    open.push(emu);
    const cloud = new CloudClient({ baseUrl: emu.url, logLevel: 'off', retry: { limit: 0 } });
    await expect(cloud.run(saved(), options as object)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests).toEqual([]);
  });
});

describe('a pool given a workflow saved in the editor', () => {
  it.each([[{ extraData: 'x' }], [{ widgetValues: 'loose' }]])('refuses %j before it is queued', async (options) => {
    const emu = await startEmulator({ port: 0, personality: 'local' });
    open.push(emu);
    const pool = new CloudPool([{ baseUrl: emu.url, id: 'a', logLevel: 'off' }], { logLevel: 'off' });
    open.push(pool);
    await expect(pool.run(saved(), options as object)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});
