// Build a workflow with the typed builder. The node types come from the server's own
// object_info (`npx platformui-codegen --url <server> --out examples/emulator-nodes.generated.ts`),
// so an unknown class or input, a missing input, a wrong value or a link of the wrong
// type does not compile. Then: print it, run it, save and describe the image it made.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudClient, Workflow } from '@platformui/sdk';
import { EMULATOR_API_KEY, startEmulator } from '@platformui/sdk/emulator';
import type { Nodes } from './emulator-nodes.generated.ts';

const emulator = process.env.PLATFORMUI_CLOUD_URL ? undefined : await startEmulator();
const cloud = new CloudClient({
  baseUrl: process.env.PLATFORMUI_CLOUD_URL ?? emulator!.url,
  // Our own emulator gets its own key, never the shell's; a local server (PLATFORMUI_CLOUD_URL=http://127.0.0.1:8188) needs none.
  apiKey: emulator ? EMULATOR_API_KEY : process.env.PLATFORMUI_API_KEY,
});
const outDir = join(process.env.OUT_DIR ?? '.', 'typed-builder-output');
mkdirSync(outDir, { recursive: true });

try {
  const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
  const photo = await cloud.uploadImage(png, { filename: 'photo.png' });

  // object_info at run time too: output names (`out('IMAGE')`) and values are checked as nodes are added.
  const wf = new Workflow<Nodes>(await cloud.getObjectInfo());
  const load = wf.add('LoadImage', { image: photo });
  const blur = wf.add('ImageBlur', { image: load.out('IMAGE'), blur_radius: 3, sigma: 1.5 });
  const scaled = wf.add('ImageScale', { image: blur.out(0), upscale_method: 'lanczos', width: 64, height: 64, crop: 'center' });
  const inverted = wf.add('ImageInvert', { image: scaled.out('IMAGE') });
  wf.add('SaveImage', { images: inverted.out('IMAGE'), filename_prefix: 'typed' }, { title: 'Save' });

  // None of these compile (remove the directive to see the compiler's message):
  // @ts-expect-error: Type 'Link<"MASK">' is not assignable to type 'Link<"IMAGE">'
  void (() => wf.add('ImageInvert', { image: load.out('MASK') }));
  // @ts-expect-error: Type '"lanczoz"' is not assignable to type '"nearest-exact" | … | "lanczos" | Link<"COMBO">'. Did you mean '"lanczos"'?
  void (() => wf.add('ImageScale', { image: blur.out(0), upscale_method: 'lanczoz', width: 64, height: 64, crop: 'center' }));
  // @ts-expect-error: Property 'sigma' is missing in type '{ image: Link<"IMAGE">; blur_radius: number; }'
  void (() => wf.add('ImageBlur', { image: load.out(0), blur_radius: 3 }));

  // Plain API-format JSON: what cloud.run() takes, and what JSON.stringify(wf) writes.
  for (const [id, node] of Object.entries(wf.toJSON())) console.log(`  "${id}": ${JSON.stringify(node)}`);
  const errors = wf.validate().filter((i) => i.severity === 'error');
  if (errors.length) throw new Error(errors.map((i) => i.message).join('\n'));

  const result = await cloud.run(wf, { timeout: 60_000 });
  console.log(`Job ${result.promptId} completed: ${result.files.length} file(s)`);
  for (const file of result.files) {
    const path = join(outDir, file.filename);
    const bytes = await cloud.downloadToFile(file, path);
    const head = readFileSync(path).subarray(0, 8);
    console.log(`  saved ${path} (${bytes} bytes, ${head.toString('hex') === '89504e470d0a1a0a' ? 'a PNG' : `starts ${head.toString('hex')}`})`);
  }
} finally {
  cloud.close();
  await emulator?.close();
}
