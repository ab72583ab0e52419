// Workflows on the emulator over real loopback HTTP: platformui-codegen reads its
// object_info (and writes exactly the committed examples/emulator-nodes.generated.ts),
// a workflow built with the typed builder on those types runs, and an exported
// workflow edited with Workflow.from (new prompt, uploaded image) runs too.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClient } from '../../src/cloud/client.ts';
import { EMULATOR_API_KEY, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { InvalidArgumentError } from '../../src/errors.ts';
import type { SubmissionError } from '../../src/cloud/submission-errors.ts';
import { runCodegen } from '../helpers/run-codegen.ts';
import { Workflow } from '../../src/workflow/workflow.ts';
import type { Nodes } from '../../examples/emulator-nodes.generated.ts';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
const dir = mkdtempSync(join(tmpdir(), 'platformui-workflow-'));

let emu: Emulator;
let cloud: CloudClient;
beforeAll(async () => {
  emu = await startEmulator({ cloud: { stepMs: 2, progressSteps: 1 } });
  cloud = new CloudClient({ baseUrl: emu.url, apiKey: EMULATOR_API_KEY });
});
afterAll(async () => {
  cloud.close();
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('workflows on the emulator', () => {
  it('platformui-codegen --url writes the committed example types', async () => {
    const out = join(dir, 'nodes.ts');
    // The key from a file: the command takes none on its command line (`ps` would show it).
    const keyFile = join(dir, 'api-key');
    writeFileSync(keyFile, `${EMULATOR_API_KEY}\n`);
    let stdout = '';
    const code = await runCodegen(['--url', emu.url, '--api-key-file', keyFile, '--out', out], { stdout: (t) => void (stdout += t), stderr: () => {} });
    expect([code, stdout]).toEqual([0, expect.stringMatching(/^Wrote .*nodes\.ts: 11 node classes \(4 KB\) from http:\/\/127\.0\.0\.1:\d+\/ in \d+ ms\n$/)]);
    // Regenerate the example's types when this fails: the emulator's nodes changed.
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(ROOT, 'examples/emulator-nodes.generated.ts'), 'utf8'));
  });

  it('runs a workflow built with the typed builder', async () => {
    const photo = await cloud.uploadImage(PNG, { filename: 'photo.png' });
    const wf = new Workflow<Nodes>(await cloud.getObjectInfo());
    const load = wf.add('LoadImage', { image: photo });
    const blur = wf.add('ImageBlur', { image: load.out('IMAGE'), blur_radius: 2, sigma: 1 });
    const inverted = wf.add('ImageInvert', { image: blur.out('IMAGE') });
    wf.add('SaveImage', { images: inverted.out(0), filename_prefix: 'built' }, { id: '9', title: 'Save' });
    expect(wf.validate()).toEqual([]);

    const result = await cloud.run(wf, { timeout: 30_000, validate: true });
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^built_\d+_\.png$/)]);
    expect(Object.keys(result.outputs)).toEqual(['9']);
    const bytes = await cloud.download(result.files[0]!);
    expect([...new Uint8Array(await bytes.arrayBuffer()).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('runs an exported workflow with a new prompt and an uploaded image', async () => {
    const portrait = await cloud.uploadImage(PNG, { filename: 'portrait.png' });
    const wf = Workflow.from(readFileSync(join(ROOT, 'examples/workflows/relight-api.json'), 'utf8'), await cloud.getObjectInfo());
    wf.set({ title: 'Input image' }, 'image', portrait).set({ title: 'Relight' }, 'prompt', 'golden hour');
    expect(() => wf.set({ title: 'Relight' }, 'strenght', 2)).toThrow(InvalidArgumentError);
    expect(wf.validate()).toEqual([]);
    expect(wf.outputNodes().map((n) => n.id)).toEqual(['4']);

    const result = await cloud.run(wf.toJSON(), { partnerApiKey: true, timeout: 30_000 });
    expect(result.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^relight_\d+_\.png$/)]);
    expect(wf.toJSON()['1']!.inputs.image).toBe(portrait.name);
  });

  it('what validate() finds, the emulator refuses too', async () => {
    const photo = await cloud.uploadImage(PNG, { filename: 'photo.png' });
    const wf = Workflow.from(readFileSync(join(ROOT, 'examples/workflows/relight-api.json'), 'utf8'));
    wf.set('1.inputs.image', photo).set('3.inputs.blur_radius', 100); // no object_info here: nothing checks it
    const errors = wf.validate(await cloud.getObjectInfo()).filter((i) => i.severity === 'error');
    expect(errors.map((i) => i.path.join('.'))).toEqual(['3.inputs.blur_radius']);
    const refused = await cloud.submit(wf.toJSON(), { partnerApiKey: true }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ name: 'SubmissionError', status: 400 });
    expect(Object.keys((refused as SubmissionError).nodeErrors ?? {})).toEqual(['3']);
  });
});
