// Outputs of every kind (issue 25) against a real local server (ComfyUI 0.8.0 on CPU), named by
// PLATFORMUI_REAL_SERVER_URL; without it this suite skips. Imported by local-server.int.test.ts, not
// a test file of its own: its jobs must not run beside that suite's.
//
// Model-free nodes of this server that send other keys: SaveAnimatedPNG (images and
// `animated: [true]`), SaveLatent (a file under `latents`, in subfolder latents), SaveAudio (under
// `audio`, in subfolder audio), PreviewAny (`text`). Every file comes back through run() with its
// node and key, and downloads with only filename, subfolder and type on /api/view.
import { afterAll, describe, expect, it } from 'vitest';
import { CloudClient, filesOf } from '../../src/index.ts';

const url = process.env.PLATFORMUI_REAL_SERVER_URL;

const open: CloudClient[] = [];
afterAll(() => {
  for (const c of open.splice(0)) c.close();
});

/** A client whose every request URL is recorded. */
function recordingClient() {
  const urls: URL[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    urls.push(new URL(input instanceof Request ? input.url : String(input)));
    return globalThis.fetch(input, init);
  };
  const c = new CloudClient({ baseUrl: url!, fetch, logLevel: 'off' });
  open.push(c);
  return { c, views: () => urls.filter((u) => u.pathname === '/api/view') };
}

const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

if (!url) it('outputs of every kind on a real local server: skipped', ({ skip }) => skip('set PLATFORMUI_REAL_SERVER_URL to a running local server'));
describe.skipIf(!url)('outputs of every kind on a real local server', () => {
  it('run(): files under images, latents and audio with their node and key; text and the animated flag stay in outputs; each downloads', async () => {
    const { c, views } = recordingClient();
    const prefix = `sdk_kinds_${Date.now()}`;
    const result = await c.run(
      {
        '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 2, color: Math.floor(Math.random() * 0xffffff) } },
        '2': { class_type: 'SaveAnimatedPNG', inputs: { images: ['1', 0], filename_prefix: `${prefix}_apng`, fps: 6, compress_level: 4 } },
        '3': { class_type: 'EmptyLatentImage', inputs: { width: 64, height: 64, batch_size: 1 } },
        '4': { class_type: 'SaveLatent', inputs: { samples: ['3', 0], filename_prefix: `latents/${prefix}_lat` } },
        '5': { class_type: 'PreviewAny', inputs: { source: `hello ${prefix}` } },
        '6': { class_type: 'EmptyAudio', inputs: { duration: 0.1, sample_rate: 8000, channels: 1 } },
        '7': { class_type: 'SaveAudio', inputs: { audio: ['6', 0], filename_prefix: `audio/${prefix}_aud` } },
      },
      { timeout: 60_000 },
    );
    expect(result.files.map((f) => [f.nodeId, f.mediaType, f.filename, f.subfolder, f.type])).toEqual([
      ['2', 'images', `${prefix}_apng_00001_.png`, '', 'output'],
      ['4', 'latents', `${prefix}_lat_00001_.latent`, 'latents', 'output'],
      ['7', 'audio', `${prefix}_aud_00001_.flac`, 'audio', 'output'],
    ]);
    const out = result.outputs as Record<string, Record<string, unknown>>;
    expect(out['2']!.animated).toEqual([true]);
    expect(out['5']).toEqual({ text: [`hello ${prefix}`] });

    const [apng, latent, flac] = await Promise.all(result.files.map(async (f) => bytesOf(await c.download(f))));
    expect(ascii(apng!, 1, 4)).toBe('PNG');
    // safetensors: an 8-byte header length, then the JSON header.
    expect(ascii(latent!, 8, 9)).toBe('{');
    expect(ascii(flac!, 0, 4)).toBe('fLaC');
    expect(views().map((u) => [...u.searchParams])).toEqual(result.files.map((f) => [['filename', f.filename], ['subfolder', f.subfolder], ['type', 'output']]));
    // The server's own record lists the same files.
    expect(filesOf((await c.getJob(result.promptId)).outputs)).toEqual(result.files);
  });

  it('a job whose only output is text: no file, its text in outputs, heard whole on the socket (no record read)', async () => {
    const { c } = recordingClient();
    const text = `only text ${Date.now()}`;
    const result = await c.run({ '1': { class_type: 'PreviewAny', inputs: { source: text } } }, { timeout: 60_000 });
    expect(result.files).toEqual([]);
    expect(result.outputs).toEqual({ '1': { text: [text] } });
    expect(result.record).toBeUndefined();
  });
});
