// Run a workflow as the editor saved it (its "Save", not "Export (API)"): the file keeps its
// titles, its note, its reroute and the primitive node that sets the width, and the SDK converts
// it with the server's object_info as the editor does before it submits. Its inputs are then
// set by name, like the arguments of a function, once per run.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudClient, Workflow } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';

const emulator = process.env.PLATFORMUI_CLOUD_URL ? undefined : await startEmulator();
const cloud = new CloudClient({
  baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url,
  // Our own emulator gets its own key, never the shell's; a local server (PLATFORMUI_CLOUD_URL=http://127.0.0.1:8188) needs none.
  apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY,
});
const outDir = join(process.env.OUT_DIR ?? '.', 'run-saved-workflow-output');
mkdirSync(outDir, { recursive: true });

try {
  const saved = readFileSync(new URL('./workflows/saved-in-editor.json', import.meta.url), 'utf8');
  const portrait = Workflow.fromEditor(saved, await cloud.getObjectInfo());
  // What the server gets: the note, the reroute and the primitive dissolved, the titles kept.
  for (const node of portrait.nodes()) console.log(`  #${node.id} ${node.classType} "${node.title}"`);
  console.log(`Width from the primitive node: ${portrait.node({ classType: 'ImageScale' }).inputs.width}`);

  // What can be set between runs, by name.
  for (const i of portrait.inputs()) console.log(`  ${i.names[0]!.padEnd(30)} ${String(i.type).padEnd(7)} ${JSON.stringify(i.value)}`);

  // A photo of ours for the "Photo" node, then the saved workflow called twice with other values.
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const photo = await cloud.uploadImage(png, { filename: 'portrait.png' });
  for (const [name, radius] of [['soft', 1], ['softer', 6]] as const) {
    const result = await cloud.run(portrait.with({ 'Photo.image': photo, 'Soften.blur_radius': radius, 'Save.filename_prefix': name }));
    for (const file of result.files) {
      await cloud.downloadToFile(file, join(outDir, file.filename));
      console.log(`${name}: blur ${radius} → ${file.filename} (${file.mediaType} of node #${file.nodeId})`);
    }
  }

  // A name that is not there is refused before anything is sent, with the closest one.
  try {
    portrait.with({ 'Soften.blur': 2 });
  } catch (err) {
    console.log(`Refused: ${(err as Error).message}`);
  }
} finally {
  cloud.close();
  await emulator?.close();
}
