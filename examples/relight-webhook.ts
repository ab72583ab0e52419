// Receive a relight task's status notifications on a local webhook, and stop as soon as the
// final one (COMPLETED or FAILED) arrives, or after 10 s without it.
// The receiver parses bodies with parseTaskNotification, which accepts the task
// record with or without its `data` wrapper (the spec does not show the payload).
// Runs against PLATFORMUI_BASE_URL with PLATFORMUI_TOKEN, or an emulator started here. A real
// proxy cannot reach 127.0.0.1: give it a public URL that forwards to this receiver.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProxyClient, parseTaskNotification } from '@platformui/sdk';
import { EMULATOR_TOKEN, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_BASE_URL ? undefined : await startEmulator();
// The emulator started here gets its own token, whatever token your shell holds.
const proxy = emulator
  ? new ProxyClient({ baseUrl: emulator.url, token: EMULATOR_TOKEN })
  : new ProxyClient({ baseUrl: process.env.PLATFORMUI_BASE_URL, token: process.env.PLATFORMUI_TOKEN });

let finished!: (status: string) => void;
const done = new Promise<string>((r) => (finished = r));
const receiver = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    const task = parseTaskNotification(Buffer.concat(chunks));
    console.log(`  webhook: ${task.task_id} → ${task.status}${task.generated?.length ? ` ${task.generated.join(', ')}` : ''}`);
    if (task.status === 'COMPLETED' || task.status === 'FAILED') finished(task.status);
    res.writeHead(204).end();
  } catch (err) {
    res.writeHead(400).end(String(err));
  }
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const webhook_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/relight`;

let timer: ReturnType<typeof setTimeout> | undefined;
try {
  const task = await proxy.relightImage({ image: 'https://example.com/in.jpg', style: 'brighter', webhook_url });
  console.log(`Started ${task.task_id}; notifications go to ${webhook_url}`);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no final notification within 10 s')), 10_000);
  });
  const status = await Promise.race([done, timeout]);
  console.log(`Task ${task.task_id} ended: ${status}`);
} finally {
  clearTimeout(timer); // else the process would wait out the 10 s after the last notification
  receiver.close();
  await emulator?.close();
}
