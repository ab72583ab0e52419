// ProxyClient against the emulator over loopback: tasks, webhook notifications, rules, auth.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError, InvalidArgumentError, ProxyClient, parseTaskNotification, type TaskNotification } from '../../src/index.ts';
import { EMULATOR_TOKEN, startEmulator, type Emulator } from '../../src/emulator/index.ts';

let emu: Emulator;
let hook: Server;
let hookUrl: string;
const received: TaskNotification[] = [];

beforeAll(async () => {
  emu = await startEmulator();
  hook = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    received.push(parseTaskNotification(Buffer.concat(chunks).toString()));
    res.end();
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await emu.close();
  await new Promise((r) => hook.close(r));
});
beforeEach(() => {
  emu.requests.length = 0;
  received.length = 0;
});

const proxy = (o: Partial<ConstructorParameters<typeof ProxyClient>[0]> = {}) => new ProxyClient({ baseUrl: emu.url, token: EMULATOR_TOKEN, ...o });

async function until<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ProxyClient against the emulator', () => {
  it('starts a relight task that reports every status to the webhook', async () => {
    const started = await proxy().relightImage({
      image: 'https://example.com/portrait.jpg',
      prompt: 'golden hour (warm rim light:1.25)',
      style: 'brighter',
      light_transfer_strength: 60,
      advanced_settings: { engine: 'automatic', fixed_generation: true, whites: 5 },
      webhook_url: hookUrl,
    });
    expect(started.status).toBe('CREATED');
    expect(started.task_id).toMatch(/^[0-9a-f-]{36}$/);
    const done = await until(() => received.find((n) => n.status === 'COMPLETED'));
    expect(received.map((n) => n.status)).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED']);
    expect(received.every((n) => n.task_id === started.task_id)).toBe(true);
    expect(done.generated).toHaveLength(1);
    const result = await fetch(done.generated![0]!);
    expect(result.headers.get('content-type')).toBe('image/png');
  });

  it('sends bytes as base64 and uses the vendor segment', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const started = await proxy({ vendor: 'acme-ai' }).enhanceSkinCreative({ image: new Blob([png]), sharpen: 20, smart_grain: 80 });
    expect(started.status).toBe('CREATED');
    expect(emu.requests[0]!.path).toBe('/proxy/acme-ai/v1/ai/skin-enhancer/creative');
  });

  it('lets no request leave for a value the rules refuse', async () => {
    const bad = [
      () => proxy().relightImage({ image: 'x', light_transfer_strength: 101 }),
      () => proxy().relightImage({ image: 'x', style: 'vivid' as never }),
      () => proxy().relightImage({ image: 'x', transfer_light_from_lightmap: 'a', transfer_light_from_reference_image: 'b' }),
      () => proxy().relightImage({ image: 'x', prompt: '(too strong:2)' }),
      () => proxy().relightImage({ image: 'x', webhook_url: 'mailto:a@b.c' }),
      () => proxy().enhanceSkinCreative({ image: 'x', sharpen: -1 }),
      () => proxy().enhanceSkinCreative({ image: 'x', smart_grain: 100.01 }),
    ];
    for (const f of bad) await expect(f()).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(emu.requests).toHaveLength(0);
  });

  it('maps a wrong token to AuthenticationError and does not retry the POST', async () => {
    await expect(proxy({ token: 'not-a-token' }).relightImage({ image: 'x' })).rejects.toBeInstanceOf(AuthenticationError);
    expect(emu.requests).toHaveLength(1);
  });
});
