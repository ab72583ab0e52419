// Edit a workflow exported from the editor ("Export (API)"): load its JSON, change the
// prompt and the input image (an upload), check it against the server's object_info
// before anything is sent, run it, save what it made.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudClient, InvalidArgumentError, Workflow } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_CLOUD_URL ? undefined : await startEmulator();
const cloud = new CloudClient({
  baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url,
  // Our own emulator gets its own key, never the shell's; a local server (PLATFORMUI_CLOUD_URL=http://127.0.0.1:8188) needs none.
  apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY,
});
const outDir = join(process.env.OUT_DIR ?? '.', 'edit-exported-workflow-output');
mkdirSync(outDir, { recursive: true });

try {
  // The new input image first: the server lists it in object_info once it is uploaded.
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const portrait = await cloud.uploadImage(png, { filename: 'portrait.png' });

  // The exported JSON, checked against this server's nodes as it is edited.
  const exported = readFileSync(new URL('./workflows/relight-api.json', import.meta.url), 'utf8');
  const wf = Workflow.from(exported, await cloud.getObjectInfo());
  for (const node of wf.nodes()) console.log(`  #${node.id} ${node.classType}${node.title ? ` "${node.title}"` : ''}`);

  wf.set({ title: 'Input image' }, 'image', portrait) // the upload's name, as the server expects it
    .set({ title: 'Relight' }, 'prompt', 'golden hour light from the left')
    .set('4.inputs.filename_prefix', 'relit');
  console.log(`Prompt: ${JSON.stringify(wf.node({ classType: 'PartnerRelightNode' }).inputs.prompt)}, image: ${wf.node('1').inputs.image}`);

  // Mistakes are refused where they are made, not by the server after the request.
  for (const mistake of [() => wf.set({ title: 'Relight' }, 'promt', 'dusk'), () => wf.set('3.inputs.blur_radius', 100)]) {
    try {
      mistake();
    } catch (err) {
      if (!(err instanceof InvalidArgumentError)) throw err;
      console.log(`Refused: ${err.message}`);
    }
  }

  // Everything else object_info can tell, at once: errors stop us here, warnings are shown.
  const issues = wf.validate();
  for (const issue of issues) console.log(`  ${issue.severity}: ${issue.message}`);
  if (issues.some((i) => i.severity === 'error')) throw new Error('the workflow has errors');
  console.log(`Valid; output nodes: ${wf.outputNodes().map((n) => `#${n.id} ${n.classType}`).join(', ')}`);

  // The relight node is a partner node: it needs the account's key in the submission.
  // `validate: true` checks again against the client's cached object_info before anything is sent.
  const result = await cloud.run(wf, { partnerApiKey: true, validate: true, timeout: 60_000 });
  console.log(`Job ${result.promptId} completed`);
  for (const file of result.files) {
    const bytes = await cloud.downloadToFile(file, join(outDir, file.filename));
    console.log(`  saved ${join(outDir, file.filename)} (${bytes} bytes)`);
  }
} finally {
  cloud.close();
  await emulator?.close();
}
