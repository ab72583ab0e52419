// Named inputs (issue 25) against a real local server (ComfyUI 0.8.0 on CPU), named by
// PLATFORMUI_REAL_SERVER_URL; without it this suite skips. Imported by local-server.int.test.ts,
// not a test file of its own: its jobs must not run beside that suite's.
//
// A workflow saved in the editor (two blurs with titles, one holding a dot), converted with the
// server's own object_info: inputs() gives the server's ranges, and with() runs it by name: the
// same values give the same pixels, a value changed by name other pixels. (The files differ in
// any case: the server writes the prompt, file name prefix included, into each PNG.)
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CloudClient, Workflow } from '../../src/index.ts';
import { makePng } from '../../src/emulator/cloud-files.ts';

const url = process.env.PLATFORMUI_REAL_SERVER_URL;
const SAVED = readFileSync(new URL('../fixtures/named-inputs/blur-twice.json', import.meta.url), 'utf8');

/** A PNG's image data: its IDAT chunks, without the text chunks the server adds. */
function pixels(png: Uint8Array): Buffer {
  const b = Buffer.from(png);
  const parts: Buffer[] = [];
  for (let at = 8; at < b.length; ) {
    const length = b.readUInt32BE(at);
    if (b.toString('latin1', at + 4, at + 8) === 'IDAT') parts.push(b.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  return Buffer.concat(parts);
}

describe.skipIf(!url)('named inputs against a real local server', () => {
  const cloud = new CloudClient({ baseUrl: url ?? 'http://127.0.0.1:1' });
  afterAll(() => cloud.close());

  it("lists the inputs with the server's ranges and runs the saved workflow by name, again and again", async () => {
    const wf = Workflow.fromEditor(SAVED, await cloud.getObjectInfo());
    expect(wf.inputs().find((i) => i.names.includes('Hard.blur v2.blur_radius'))).toMatchObject({ type: 'INT', min: 1, max: 31, value: 9 });
    const upload = await cloud.uploadImage(new Blob([new Uint8Array(makePng(64, 64, 25))], { type: 'image/png' }), { filename: `named-${Date.now()}.png` });
    const prefix = `named_${Date.now()}`;
    const bytes = async (blur: number, tag: string) => {
      const result = await cloud.run(wf.with({ image: upload, 'Hard.blur v2.blur_radius': blur, filename_prefix: `${prefix}_${tag}` }));
      expect(result.files.map((f) => f.filename)).toEqual([`${prefix}_${tag}_00001_.png`]);
      return pixels(new Uint8Array(await (await cloud.download(result.files[0]!)).arrayBuffer()));
    };
    const [nine, again, three] = [await bytes(9, 'a'), await bytes(9, 'b'), await bytes(3, 'c')];
    expect(nine.length).toBeGreaterThan(0);
    expect(again.equals(nine)).toBe(true);
    expect(three.equals(nine)).toBe(false);
    // The saved workflow itself is untouched by the runs.
    expect(wf.toJSON()['3']!.inputs.blur_radius).toBe(9);
  });
});
