// Start relight and skin-enhancer jobs on the partner proxy. Each call answers at once with
// the new task (status CREATED); the proxy has no endpoint to poll a task, so its later
// statuses arrive only at the task's webhook_url (see examples/relight-webhook.ts).
// Jobs are paid work: the SDK never re-sends them on its own.
// Runs against PLATFORMUI_BASE_URL with PLATFORMUI_TOKEN, or an emulator started here.
import { InvalidArgumentError, ProxyClient } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const vendor = process.env.PLATFORMUI_VENDOR; // the provider's name; defaults to the literal `vendor`
// The emulator started here gets its own token, whatever token your shell holds.
const proxy = emulator
  ? new ProxyClient({ baseUrl: emulator.url, token: EMULATOR_TOKEN, vendor })
  : new ProxyClient({ baseUrl: process.env.PLATFORMUI_BASE_URL, token: process.env.PLATFORMUI_TOKEN, vendor });

try {
  // The rules are checked before anything is sent: this one never leaves the machine.
  try {
    await proxy.relightImage({ image: 'https://example.com/portrait.jpg', prompt: 'harsh noon sun (hard light:2)' });
    throw new Error('expected the prompt weight 2 to be refused');
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    console.log(`Refused locally: ${err.message}`);
  }

  // An image may be a URL, base64, or bytes (sent as base64).
  const pixel = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const task = await proxy.relightImage({
    image: pixel,
    prompt: 'warm golden hour (soft rim light:1.2)',
    style: 'smooth',
    light_transfer_strength: 70,
    preserve_details: true,
    advanced_settings: { engine: 'automatic', whites: 5 },
  });
  console.log(`Relight task ${task.task_id}: ${task.status}`);

  const skin = await proxy.enhanceSkinCreative({ image: 'https://example.com/portrait.jpg', sharpen: 30, smart_grain: 10 });
  console.log(`Skin enhancer task ${skin.task_id}: ${skin.status}`);
  console.log('No webhook_url given: nothing more to hear about these tasks (see examples/relight-webhook.ts)');
} finally {
  await emulator?.close();
}
