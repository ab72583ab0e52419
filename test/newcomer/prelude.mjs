// What a README fragment may use without defining it, as a reader has it at
// that point of the README. Loaded (`node --import`) before each README block,
// from the app the tarball was installed in, as globals: a block's own
// imports and declarations simply shadow them.
//
// - every runtime export of @platformui/sdk, and `fs` / `readFileSync`
//   (fragments leave their imports out);
// - clients configured from the environment only (the emulator's URL and
//   credentials, exported as `platformui emulator` prints them): `registry`,
//   `proxy`, `cloud`, and their options `baseUrl`, `apiKey`, `token`, `cloudUrl`;
// - files a reader has: `./photo.png`, `./portrait.png` (small PNGs),
//   `./relight_api.json` and `./saved.json` (the runner copies the repo's exported
//   workflow and its workflow saved in the editor);
// - `workflow`: load photo.png (node 10, as the pool example's input path
//   says) → ImageInvert → SaveImage (prefix "out"); `photo`: photo.png's upload;
//   `image`, `file`, `fileInput`, `maskBlob`, `p`: the photo as base64, a File,
//   a file input, a Blob, a path;
// - `promptId` / `prompt_id`: a job that ran on the default emulator, `ref`
//   its output file, `controller` / `signal` an AbortController and its signal,
//   `db.save`, `save` and `onProgress` callbacks that print;
//   `arrayBufferOrAnyUint8ArrayView`: a preview frame of that job, as the socket sends it.
//
// NEWCOMER_LOCAL_URLS (comma-separated) names the local-personality emulators
// a block uses: photo.png is uploaded there too (uploads are named by their
// content, so `workflow` fits every server).
import * as fs from 'node:fs';
import { readFileSync } from 'node:fs';
import * as sdk from '@platformui/sdk';
import { makePng } from '@platformui/sdk/emulator';

const png = makePng(32, 32, 1);
for (const name of ['photo.png', 'portrait.png']) if (!fs.existsSync(name)) fs.writeFileSync(name, png);

const quiet = { logLevel: 'off' }; // the prelude's own requests say nothing; the block's clients are the SDK's defaults
const cloud = new sdk.CloudClient();
const setup = new sdk.CloudClient(quiet);
const photo = await setup.uploadImage('./photo.png');
for (const baseUrl of (process.env.NEWCOMER_LOCAL_URLS ?? '').split(',').filter(Boolean)) {
  await new sdk.CloudClient({ baseUrl, ...quiet }).uploadImage('./photo.png');
}
const workflow = {
  10: { class_type: 'LoadImage', inputs: { image: photo.name }, _meta: { title: 'Load Photo' } },
  11: { class_type: 'ImageInvert', inputs: { image: ['10', 0] }, _meta: { title: 'Invert' } },
  12: { class_type: 'SaveImage', inputs: { images: ['11', 0], filename_prefix: 'out' }, _meta: { title: 'Save' } },
};
const job = await setup.run(workflow);
const controller = new AbortController();
const file = new File([png], 'photo.png', { type: 'image/png' });

Object.assign(globalThis, sdk, {
  fs,
  readFileSync,
  registry: new sdk.RegistryClient(),
  proxy: new sdk.ProxyClient(),
  cloud,
  baseUrl: process.env.PLATFORMUI_CLOUD_URL,
  cloudUrl: process.env.PLATFORMUI_CLOUD_URL,
  apiKey: process.env.PLATFORMUI_API_KEY,
  token: process.env.PLATFORMUI_TOKEN,
  workflow,
  photo,
  image: png.toString('base64'),
  file,
  fileInput: { files: [file] },
  maskBlob: new Blob([png], { type: 'image/png' }),
  p: './photo.png',
  promptId: job.promptId,
  prompt_id: job.promptId,
  ref: job.files[0],
  controller,
  signal: controller.signal,
  db: { save: (id) => console.log(`db.save(${id})`) },
  save: (id) => console.log(`save(${id})`),
  onProgress: ({ value, max }) => console.log(`progress ${value}/${max}`),
  arrayBufferOrAnyUint8ArrayView: sdk.encodeFrame({ type: 'preview_image_with_metadata', metadata: { node_id: '11', prompt_id: job.promptId, image_type: 'image/png' }, image: png }),
});
