// Start a relight job on the partner proxy and follow it by polling its result
// reference. Jobs are paid work: the SDK never re-sends them on its own.
import { InvalidArgumentError, ProxyClient } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const proxy = new ProxyClient({
  baseUrl: process.env.PLATFORMUI_BASE_URL ?? emulator!.url,
  token: process.env.PLATFORMUI_TOKEN ?? EMULATOR_TOKEN,
  vendor: process.env.PLATFORMUI_VENDOR, // the provider's name; defaults to the literal `vendor`
});

try {
  // The rules are checked before anything is sent: this one never leaves the machine.
  try {
    await proxy.relightImage({ image: 'https://example.com/portrait.jpg', prompt: 'harsh noon sun (hard light:2)' });
  } catch (err) {
    if (err instanceof InvalidArgumentError) console.log(`Refused locally: ${err.message}`);
  }

  // An image may be a URL, base64, or bytes (sent as base64).
  const pixel = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const { data: task } = await proxy.relightImage({
    image: pixel,
    prompt: 'warm golden hour (soft rim light:1.2)',
    style: 'smooth',
    light_transfer_strength: 70,
    preserve_details: true,
    advanced_settings: { engine: 'automatic', whites: 5 },
  });
  console.log(`Relight task ${task.task_id}: ${task.status}`);

  const { data: skin } = await proxy.enhanceSkinCreative({ image: 'https://example.com/portrait.jpg', sharpen: 30, smart_grain: 10 });
  console.log(`Skin enhancer task ${skin.task_id}: ${skin.status}`);
  console.log('Progress arrives at webhook_url; see examples/relight-webhook.ts');
} finally {
  await emulator?.close();
}
