// Relight an image on the partner proxy and save the result: start and wait in one call,
// then fetch the result file (without the token: results live on another host).
// No webhook receiver needed. Jobs are paid work: the SDK never re-sends the starting POST;
// only the status reads are retried.
// Runs against PLATFORMUI_BASE_URL with PLATFORMUI_TOKEN, or an emulator started here.
// The result is written to OUT_DIR (or the system's temporary directory).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError, ProxyClient, TaskFailedError } from '@platformui/sdk';
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
  // Call 1: start and wait. The default polling starts at ~1 s and backs off to 10 s;
  // `timeout` bounds the whole wait (the task keeps running if it runs out).
  const task = await proxy.relightImageAndWait(
    {
      image: pixel,
      prompt: 'warm golden hour (soft rim light:1.2)',
      style: 'smooth',
      light_transfer_strength: 70,
      preserve_details: true,
      advanced_settings: { engine: 'automatic', whites: 5 },
    },
    {
      timeout: 15 * 60_000,
      ...(emulator ? { pollInterval: 100 } : {}),
      onStarted: (t) => console.log(`Relight task ${t.task_id}: ${t.status}`),
      onStatus: (t) => console.log(`  status: ${t.status}`),
    },
  );

  // Call 2: the result, streamed to a file. No credential goes to the result host.
  const dir = process.env.OUT_DIR ?? mkdtempSync(join(tmpdir(), 'relight-'));
  const file = join(dir, `relit-${task.task_id}.png`);
  const bytes = await proxy.downloadResultToFile(task.generated![0]!, file);
  console.log(`Saved ${bytes} bytes to ${file}`);

  // A task that ends FAILED rejects with TaskFailedError, carrying the proxy's record.
  try {
    await proxy.enhanceSkinCreativeAndWait({ image: emulator ? 'fail://portrait.jpg' : 'https://example.com/portrait.jpg', sharpen: 30 }, emulator ? { pollInterval: 100 } : {});
    console.log('Skin enhancer task completed');
  } catch (err) {
    if (!(err instanceof TaskFailedError)) throw err;
    console.log(`Skin enhancer task ${err.taskId} ended ${err.task.status}`);
  }
} finally {
  await emulator?.close();
}
