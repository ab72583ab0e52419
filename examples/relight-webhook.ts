// Receive a relight task's status notifications on a local webhook, and stop as soon as the
// final one (COMPLETED or FAILED) arrives, or after 10 s without it.
// A notification carries no signature: anyone who learns the URL can POST to it. So the
// receiver never trusts a body: confirmNotification() parses it (with or without its `data`
// wrapper), re-reads that task from the proxy with our own token, and answers with the
// proxy's record; a body for a task the proxy does not know is refused (TaskNotFoundError).
// Runs against PLATFORMUI_BASE_URL with PLATFORMUI_TOKEN, or an emulator started here. A real
// proxy cannot reach 127.0.0.1: give it a public URL that forwards to this receiver.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProxyClient, TaskNotFoundError } from '@platformui/sdk';
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
    // The proxy's record, not the body's: its status and generated URLs are the ones to act on.
    const task = await proxy.confirmNotification(Buffer.concat(chunks), { operation: 'image-relight' });
    console.log(`  webhook (confirmed): ${task.task_id} → ${task.status}${task.generated?.length ? ` ${task.generated.join(', ')}` : ''}`);
    if (task.status === 'COMPLETED' || task.status === 'FAILED') finished(task.status);
    res.writeHead(204).end();
  } catch (err) {
    console.log(`  webhook refused: ${err instanceof Error ? err.message : String(err)}`);
    res.writeHead(err instanceof TaskNotFoundError ? 403 : 400).end();
  }
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const webhook_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/relight`;

let timer: ReturnType<typeof setTimeout> | undefined;
try {
  const task = await proxy.relightImage({ image: 'https://example.com/in.jpg', style: 'brighter', webhook_url });
  console.log(`Started ${task.task_id}; notifications go to ${webhook_url}`);
  // A forged notification (a task id the proxy does not know) is refused.
  const forged = await fetch(webhook_url, { method: 'POST', body: JSON.stringify({ task_id: '00000000-0000-4000-8000-000000000000', status: 'COMPLETED' }) });
  console.log(`  forged notification answered ${forged.status}`);
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
