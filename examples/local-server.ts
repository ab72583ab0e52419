// The same CloudClient on a self-hosted server: no API key, no other option. Runs a job
// to its files, then stops a long one mid-run (by its id: the atomic cancel where the server has it,
// else an interrupt naming the job; never one that would stop another job).
// Point it at a real server with PLATFORMUI_LOCAL_URL=http://127.0.0.1:8188; without it,
// the emulator imitates one (personality 'local').
import { APIUserAbortError, CloudClient } from '@platformui/sdk';
import { startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_LOCAL_URL ? undefined : await startEmulator({ personality: 'local', cloud: { stepMs: 40 } });
const local = new CloudClient({ baseUrl: process.env.PLATFORMUI_LOCAL_URL ?? emulator!.url });
console.log(`Server kind: ${local.server}`); // 'local': a loopback URL and no key

// EmptyImage → a chain of blurs → SaveImage: model-free nodes every local server has.
const chain = (blurs: number, prefix: string) => {
  const workflow: Record<string, { class_type: string; inputs: Record<string, unknown> }> = {
    '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: Math.floor(Math.random() * 0xffffff) } },
  };
  let last = '1';
  for (let i = 0; i < blurs; i++) {
    workflow[`b${i}`] = { class_type: 'ImageBlur', inputs: { image: [last, 0], blur_radius: 3, sigma: 1 } };
    last = `b${i}`;
  }
  workflow['9'] = { class_type: 'SaveImage', inputs: { images: [last, 0], filename_prefix: prefix } };
  return workflow;
};

try {
  const result = await local.run(chain(2, 'local'), { timeout: 60_000 });
  console.log(`Job ${result.promptId}: ${result.files.map((f) => f.filename).join(', ')}`);
  const bytes = (await (await local.download(result.files[0]!)).arrayBuffer()).byteLength; // /view answers 200 here
  console.log(`Downloaded ${bytes} bytes`);

  const controller = new AbortController();
  const long = local.run(chain(30, 'long'), {
    signal: controller.signal,
    onEvent: (e) => {
      if (e.type === 'executing' && e.data.node === 'b2') controller.abort(); // a few nodes in
    },
  });
  try {
    await long;
  } catch (err) {
    if (!(err instanceof APIUserAbortError)) throw err;
  }
  // The aborted job's record reads cancelled once the server has stopped it.
  const [last] = (await local.listJobs({ limit: 1 })).jobs;
  const job = await local.waitForJob(last!.id, { pollInterval: 100 }).catch((err: Error) => err);
  console.log(`Stopped the long job: ${job instanceof Error ? job.name : job.phase}`);
} finally {
  local.close();
  await emulator?.close();
}
