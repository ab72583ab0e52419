// Upload an image, submit a workflow that uses it, wait for the job by polling,
// and download the output through its signed URL (the API key is never sent there).
import { CloudClient, SubmissionError, filesOf } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_CLOUD_URL ? undefined : await startEmulator();
const cloud = new CloudClient({
  baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url,
  // Our own emulator gets its own key, never the shell's; a local server (PLATFORMUI_CLOUD_URL=http://127.0.0.1:8188) needs none.
  apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY,
});

try {
  const info = await cloud.getObjectInfo();
  console.log(`${Object.keys(info).length} node classes, e.g. ${Object.keys(info).slice(0, 4).join(', ')}`);

  // A 1×1 PNG; in Node a file path or a stream works too: cloud.uploadImage('./photo.png')
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const uploaded = await cloud.uploadImage(new Blob([png], { type: 'image/png' }), { filename: 'pixel.png' });
  console.log(`Uploaded as ${uploaded.name}`);

  // A workflow the server refuses: SubmissionError carries the server's `error`.
  try {
    await cloud.submit({ '1': { class_type: 'NoSuchNode', inputs: {} } });
  } catch (err) {
    if (err instanceof SubmissionError) console.log(`Refused: ${err.message}`);
  }

  const workflow = {
    '1': { class_type: 'LoadImage', inputs: { image: uploaded.name } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'inverted' } },
  };
  const { prompt_id } = await cloud.submit(workflow);
  console.log(`Submitted ${prompt_id}`);
  // The job record, outputs included; a failed or cancelled job would throw here.
  const job = await cloud.waitForJob(prompt_id, { pollInterval: 100 });
  console.log(`Job ${prompt_id}: ${job.phase}`);

  const queue = await cloud.getQueue();
  console.log(`Queue: ${queue.queue_running.length} running, ${queue.queue_pending.length} pending`);

  for (const ref of filesOf(job.outputs ?? {})) {
    const res = await cloud.download(ref);
    console.log(`Downloaded ${ref.filename}: ${(await res.arrayBuffer()).byteLength} bytes (${res.headers.get('content-type')})`);
  }
} finally {
  await emulator?.close();
}
