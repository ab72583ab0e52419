// Receive a relight task's status notifications on a local webhook.
// The receiver parses bodies with parseTaskNotification, which accepts the task
// record with or without its `data` wrapper (the spec does not show the payload).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProxyClient, parseTaskNotification } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
const proxy = new ProxyClient({ baseUrl: process.env.PLATFORMUI_BASE_URL ?? emulator!.url, token: process.env.PLATFORMUI_TOKEN ?? EMULATOR_TOKEN });

let finished!: () => void;
const done = new Promise<void>((r) => (finished = r));
const receiver = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    const task = parseTaskNotification(Buffer.concat(chunks));
    console.log(`  webhook: ${task.task_id} → ${task.status}${task.generated?.length ? ` ${task.generated.join(', ')}` : ''}`);
    if (task.status === 'COMPLETED' || task.status === 'FAILED') finished();
    res.writeHead(204).end();
  } catch (err) {
    res.writeHead(400).end(String(err));
  }
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const webhook_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/relight`;

try {
  const { data } = await proxy.relightImage({ image: 'https://example.com/in.jpg', style: 'brighter', webhook_url });
  console.log(`Started ${data.task_id}; notifications go to ${webhook_url}`);
  await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error('no final notification within 10 s')), 10_000))]);
} finally {
  receiver.close();
  await emulator?.close();
}
