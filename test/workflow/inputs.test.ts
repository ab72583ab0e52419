// Named inputs: workflow.inputs() lists what can be set by name (with object_info: types,
// ranges, allowed values, defaults), workflow.with() sets by those names on a new workflow.
// Names: title.input, input alone when unique, id.input; matched whole (titles hold dots).
// The exposed interface (extra.linearData.inputs) is tested through inputs.ts's own functions
// and through small files saved in the editor (test/fixtures/named-inputs), converted with the
// emulator's object_info.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildObjectInfo } from '../../src/emulator/cloud-nodes.ts';
import type { ObjectInfo } from '../../src/schemas/cloud.ts';
import { namedInputs, resolveInputs } from '../../src/workflow/inputs.ts';
import type { StoredNode } from '../../src/workflow/node-handle.ts';
import { Workflow } from '../../src/workflow/workflow.ts';
import { refusal } from '../helpers/refusal.ts';

/** The classes these tests use, as a ComfyUI 0.8.0 server describes them (shortened). */
const INFO = {
  KSampler: {
    input: {
      required: {
        model: ['MODEL', {}],
        seed: ['INT', { default: 0, min: 0, max: 18446744073709551615, control_after_generate: true }],
        steps: ['INT', { default: 20, min: 1, max: 10000 }],
        cfg: ['FLOAT', { default: 8.0, min: 0.0, max: 100.0, step: 0.1, round: 0.01 }],
        sampler_name: [['euler', 'dpmpp_2m'], {}],
        scheduler: ['COMBO', { options: ['normal', 'karras'] }],
        denoise: ['FLOAT', { default: 1.0, min: 0.0, max: 1.0, step: 0.01 }],
        positive: ['CONDITIONING', {}],
        negative: ['CONDITIONING', {}],
        latent_image: ['LATENT', {}],
      },
    },
    output: ['LATENT'],
  },
  CLIPTextEncode: { input: { required: { text: ['STRING', { multiline: true, dynamicPrompts: true }], clip: ['CLIP', {}] } }, output: ['CONDITIONING'] },
  CheckpointLoaderSimple: { input: { required: { ckpt_name: [['v1-5-pruned-emaonly.safetensors'], {}] } }, output: ['MODEL', 'CLIP', 'VAE'] },
  EmptyLatentImage: { input: { required: { width: ['INT', { default: 512, min: 16, max: 16384, step: 8 }], height: ['INT', { default: 512, min: 16, max: 16384, step: 8 }] } }, output: ['LATENT'] },
  LoadImage: { input: { required: { image: [['example.png'], { image_upload: true }] } }, output: ['IMAGE', 'MASK'] },
  SaveImage: { input: { required: { images: ['IMAGE', {}], filename_prefix: ['STRING', { default: 'ComfyUI' }] }, hidden: { prompt: 'PROMPT' } }, output: [], output_node: true },
} as unknown as ObjectInfo;

/** A text-to-image workflow with two prompts, as "Export (API)" writes it. */
const TXT2IMG = {
  '3': {
    inputs: { seed: 42, steps: 20, cfg: 8, sampler_name: 'euler', scheduler: 'normal', denoise: 1, model: ['4', 0], positive: ['6', 0], negative: ['7', 0], latent_image: ['5', 0] },
    class_type: 'KSampler',
    _meta: { title: 'KSampler' },
  },
  '4': { inputs: { ckpt_name: 'v1-5-pruned-emaonly.safetensors' }, class_type: 'CheckpointLoaderSimple', _meta: { title: 'Load Checkpoint' } },
  '5': { inputs: { width: 512, height: 512 }, class_type: 'EmptyLatentImage', _meta: { title: 'Empty Latent Image' } },
  '6': { inputs: { text: 'a photo of a dog', clip: ['4', 1] }, class_type: 'CLIPTextEncode', _meta: { title: 'Positive prompt' } },
  '7': { inputs: { text: 'blurry', clip: ['4', 1] }, class_type: 'CLIPTextEncode', _meta: { title: 'Negative prompt' } },
  '9': { inputs: { filename_prefix: 'ComfyUI', images: ['8', 0], prompt: 'x' }, class_type: 'SaveImage', _meta: { title: 'Save Image' } },
};


const namesOf = (wf: Workflow) => wf.inputs().map((i) => i.names);

describe('workflow.inputs()', () => {
  it('without object_info: every value that is not a link, in id order, with its names', () => {
    expect(namesOf(Workflow.from(TXT2IMG))).toEqual([
      ['KSampler.seed', 'seed', '3.seed'],
      ['KSampler.steps', 'steps', '3.steps'],
      ['KSampler.cfg', 'cfg', '3.cfg'],
      ['KSampler.sampler_name', 'sampler_name', '3.sampler_name'],
      ['KSampler.scheduler', 'scheduler', '3.scheduler'],
      ['KSampler.denoise', 'denoise', '3.denoise'],
      ['Load Checkpoint.ckpt_name', 'ckpt_name', '4.ckpt_name'],
      ['Empty Latent Image.width', 'width', '5.width'],
      ['Empty Latent Image.height', 'height', '5.height'],
      // Two nodes have a "text": neither gets the name alone.
      ['Positive prompt.text', '6.text'],
      ['Negative prompt.text', '7.text'],
      ['Save Image.filename_prefix', 'filename_prefix', '9.filename_prefix'],
      // Without object_info nothing says that "prompt" is filled in by the server.
      ['Save Image.prompt', 'prompt', '9.prompt'],
    ]);
    const seed = Workflow.from(TXT2IMG).inputs()[0]!;
    expect(seed).toEqual({ names: ['KSampler.seed', 'seed', '3.seed'], nodeId: '3', title: 'KSampler', classType: 'KSampler', input: 'seed', value: 42 });
  });

  it('with object_info: the type, allowed values, range, step and default; only inputs the class declares (not hidden ones)', () => {
    const inputs = Workflow.from(TXT2IMG, INFO).inputs();
    const by = (name: string) => inputs.find((i) => i.names.includes(name));
    expect(by('seed')).toMatchObject({ type: 'INT', value: 42, min: 0, max: 18446744073709551615, default: 0 });
    expect(by('cfg')).toMatchObject({ type: 'FLOAT', min: 0, max: 100, step: 0.1, default: 8 });
    expect(by('sampler_name')).toMatchObject({ type: 'COMBO', values: ['euler', 'dpmpp_2m'], value: 'euler' });
    expect(by('scheduler')).toMatchObject({ type: 'COMBO', values: ['normal', 'karras'] });
    expect(by('Positive prompt.text')).toEqual({ names: ['Positive prompt.text', '6.text'], nodeId: '6', title: 'Positive prompt', classType: 'CLIPTextEncode', input: 'text', type: 'STRING', value: 'a photo of a dog' });
    expect(by('9.prompt')).toBeUndefined();
    expect(inputs).toHaveLength(12);
  });

  it('a class the server lacks: its values are listed all the same, without types', () => {
    const wf = Workflow.from({ ...TXT2IMG, '20': { inputs: { strength: 0.5, image: ['9', 0] }, class_type: 'CustomThing', _meta: { title: 'Custom' } } }, INFO);
    expect(wf.inputs().at(-1)).toEqual({ names: ['Custom.strength', 'strength', '20.strength'], nodeId: '20', title: 'Custom', classType: 'CustomThing', input: 'strength', value: 0.5 });
  });

  it('gives copies: changing a listed value changes nothing', () => {
    const wf = Workflow.from({ '1': { inputs: { list: [1, 2, 3] }, class_type: 'X' } });
    (wf.inputs()[0]!.value as number[]).push(4);
    expect(wf.toJSON()['1']!.inputs.list).toEqual([1, 2, 3]);
  });
});

describe('workflow.with()', () => {
  it('sets by title.input, input alone and id.input, on a new workflow; the original is unchanged', () => {
    const wf = Workflow.from(TXT2IMG, INFO);
    const before = wf.toJSON();
    const cat = wf.with({ 'Positive prompt.text': 'a cat', seed: 7, '3.steps': 30, 'Empty Latent Image.width': 768 });
    expect(cat).not.toBe(wf);
    expect(cat.objectInfo).toBe(INFO);
    const json = cat.toJSON();
    expect([json['6']!.inputs.text, json['3']!.inputs.seed, json['3']!.inputs.steps, json['5']!.inputs.width]).toEqual(['a cat', 7, 30, 768]);
    expect(wf.toJSON()).toEqual(before);
    // Called again and again, like a function; a result can be called in turn.
    expect(wf.with({ seed: 8 }).toJSON()['3']!.inputs.seed).toBe(8);
    expect(cat.with({ seed: 9 }).toJSON()['6']!.inputs.text).toBe('a cat');
    expect(wf.with({}).toJSON()).toEqual(before);
    // undefined leaves an input as it is (handy for optional values).
    expect(wf.with({ seed: undefined }).toJSON()['3']!.inputs.seed).toBe(42);
  });

  it('an upload becomes its file name, as with set()', () => {
    const wf = Workflow.from({ '1': { inputs: { image: 'example.png' }, class_type: 'LoadImage', _meta: { title: 'Load Photo' } } }, INFO);
    expect(wf.inputs()[0]).toMatchObject({ type: 'COMBO', values: ['example.png'], upload: true });
    expect(wf.with({ image: { name: 'cat.png', subfolder: 'uploads', type: 'input' } }).toJSON()['1']!.inputs.image).toBe('uploads/cat.png');
  });

  it('checks each value against object_info as set() does; nothing is set when one fails', () => {
    const wf = Workflow.from(TXT2IMG, INFO);
    expect(refusal(() => wf.with({ seed: 1, steps: 0 })).message).toBe('#3 KSampler: steps: must be at least 1 (from 1 to 10000), got 0');
    expect(refusal(() => wf.with({ sampler_name: 'eulr' })).message).toMatch(/sampler_name: must be one of "euler", "dpmpp_2m", got "eulr" \(did you mean "euler"\?\)/);
    expect(wf.toJSON()['3']!.inputs.seed).toBe(42);
  });

  it('an unknown name: the closest one, and the inputs; nothing set even when other names are good', () => {
    const wf = Workflow.from(TXT2IMG, INFO);
    const e = refusal(() => wf.with({ seed: 1, sed: 2 }));
    expect(e.field).toBe('sed');
    expect(e.message).toBe(
      'sed: no such input (did you mean "seed"?); the workflow\'s inputs: "KSampler.seed", "KSampler.steps", "KSampler.cfg", "KSampler.sampler_name", "KSampler.scheduler", "KSampler.denoise", "Load Checkpoint.ckpt_name", "Empty Latent Image.width", "Empty Latent Image.height", "Positive prompt.text", "Negative prompt.text", "Save Image.filename_prefix"',
    );
    expect(refusal(() => wf.with({ 'Positve prompt.text': 'x' })).message).toMatch(/^Positve prompt\.text: no such input \(did you mean "Positive prompt\.text"\?\)/);
    // A link is not a settable input; the list is cut after 12.
    const many = Workflow.from({ ...TXT2IMG, '10': { inputs: { a: 1, b: 2 }, class_type: 'X' } });
    expect(refusal(() => many.with({ '6.clip': ['4', 1] })).message).toMatch(/^6\.clip: no such input; the workflow's inputs: "KSampler\.seed", .*"Save Image\.filename_prefix", … \(15 in all\)$/);
    expect(refusal(() => Workflow.from({}).with({ a: 1 })).message).toBe("a: no such input; the workflow's inputs: none");
  });

  it('an ambiguous name: each candidate by a name of its own', () => {
    const wf = Workflow.from(TXT2IMG, INFO);
    expect(refusal(() => wf.with({ text: 'a cat' })).message).toBe(
      'text: names 2 inputs: use "Positive prompt.text" (#6 CLIPTextEncode "Positive prompt") or "Negative prompt.text" (#7 CLIPTextEncode "Negative prompt")',
    );
    // Two nodes titled alike: their ids tell them apart.
    const two = Workflow.from({ ...TXT2IMG, '10': { ...TXT2IMG['3'], _meta: { title: 'KSampler' } } }, INFO);
    expect(namesOf(two)[0]).toEqual(['3.seed']);
    expect(refusal(() => two.with({ 'KSampler.seed': 1 })).message).toBe('KSampler.seed: names 2 inputs: use "3.seed" (#3 KSampler) or "10.seed" (#10 KSampler)');
    expect(refusal(() => two.with({ seed: 1 })).message).toMatch(/^seed: names 2 inputs: use "3\.seed" .* or "10\.seed"/);
    expect(two.with({ '10.seed': 5 }).toJSON()['10']!.inputs.seed).toBe(5);
  });

  it('titles with dots and spaces are matched whole, not split at a dot', () => {
    const wf = Workflow.from({
      '1': { inputs: { text: 'x' }, class_type: 'CLIPTextEncode', _meta: { title: 'v1.5 prompt. final' } },
      '2': { inputs: { 'b.c': 1 }, class_type: 'X', _meta: { title: 'a' } },
      '3': { inputs: { c: 2 }, class_type: 'X', _meta: { title: 'a.b' } },
    });
    expect(wf.with({ 'v1.5 prompt. final.text': 'y' }).toJSON()['1']!.inputs.text).toBe('y');
    // "a" + "b.c" and "a.b" + "c" are both spelled "a.b.c": ambiguous, each has its own name still.
    expect(namesOf(wf).slice(1)).toEqual([['b.c', '2.b.c'], ['c', '3.c']]);
    expect(refusal(() => wf.with({ 'a.b.c': 0 })).message).toMatch(/^a\.b\.c: names 2 inputs: use "b\.c" .* or "c" /);
  });

  it('an id name wins over a title spelled alike', () => {
    const wf = Workflow.from({
      '3': { inputs: { steps: 1 }, class_type: 'X', _meta: { title: 'three' } },
      '5': { inputs: { steps: 2 }, class_type: 'X', _meta: { title: '3' } },
    });
    expect(wf.with({ '3.steps': 9 }).toJSON()['3']!.inputs.steps).toBe(9);
    expect(namesOf(wf)).toEqual([['three.steps', '3.steps'], ['5.steps']]);
  });

  it('refuses what is not an object of values', () => {
    const wf = Workflow.from(TXT2IMG);
    expect(refusal(() => wf.with(null as never)).message).toBe('values: must be an object of values by input name, like { seed: 42 }, got null');
    expect(refusal(() => wf.with([1] as never)).message).toMatch(/^values: must be an object of values by input name, like \{ seed: 42 \}, got an array/);
  });
});

describe('an exposed interface (the editor\'s extra.linearData.inputs)', () => {
  const nodes = TXT2IMG as unknown as Record<string, StoredNode>;
  const exposed = [
    { nodeId: '6', input: 'text' },
    { nodeId: '3', input: 'seed' },
    { nodeId: '99', input: 'gone' },
  ];

  it('is exactly those inputs, in its order, named among themselves', () => {
    const inputs = namedInputs(nodes, INFO, exposed);
    // "text" is unique within the interface; a node the conversion dropped is left out.
    expect(inputs.map((i) => i.names)).toEqual([
      ['Positive prompt.text', 'text', '6.text'],
      ['KSampler.seed', 'seed', '3.seed'],
    ]);
    expect(inputs[1]).toMatchObject({ type: 'INT', min: 0, default: 0, value: 42 });
    expect(resolveInputs(nodes, INFO, exposed, { text: 'a cat', '3.seed': 1 })).toEqual([
      ['6', 'text', 'a cat'],
      ['3', 'seed', 1],
    ]);
  });

  it('refuses an input outside it, naming the interface; an unknown name is unknown', () => {
    expect(refusal(() => resolveInputs(nodes, INFO, exposed, { steps: 30 })).message).toBe('steps: not in this workflow\'s interface: its editor file exposes only "Positive prompt.text", "KSampler.seed"');
    expect(refusal(() => resolveInputs(nodes, INFO, exposed, { '7.text': 'x' })).message).toMatch(/^7\.text: not in this workflow's interface/);
    expect(refusal(() => resolveInputs(nodes, INFO, exposed, { sed: 1 })).message).toBe('sed: no such input (did you mean "seed"?); the workflow\'s inputs: "Positive prompt.text", "KSampler.seed"');
  });

  it('takes an exposed input as it is, even one a link feeds (the file says so)', () => {
    const inputs = namedInputs(nodes, INFO, [{ nodeId: '7', input: 'clip' }]);
    expect(inputs).toEqual([{ names: ['Negative prompt.clip', 'clip', '7.clip'], nodeId: '7', title: 'Negative prompt', classType: 'CLIPTextEncode', input: 'clip', type: 'CLIP', value: ['4', 1] }]);
  });

  it('an empty interface is no interface: every input', () => {
    expect(namedInputs(nodes, INFO, [])).toHaveLength(12);
  });
});

describe('a workflow saved in the editor', () => {
  const emulated = buildObjectInfo(['photo.png']) as unknown as ObjectInfo;
  /** LoadImage "Load Photo" → ImageBlur "Soft blur" → ImageBlur "Hard.blur v2" → SaveImage (untitled). */
  const saved = () => JSON.parse(readFileSync(new URL('../fixtures/named-inputs/blur-twice.json', import.meta.url), 'utf8'));
  const withInterface = () => {
    const json = saved();
    json.extra.linearData = { inputs: [[3, 'blur_radius'], [4, 'filename_prefix', { height: 1 }]] };
    return json;
  };

  it('names its inputs by the editor\'s titles (the default title of an untitled node too)', () => {
    const wf = Workflow.fromEditor(saved(), emulated);
    expect(namesOf(wf)).toEqual([
      ['Load Photo.image', 'image', '1.image'],
      ['Soft blur.blur_radius', '2.blur_radius'],
      ['Soft blur.sigma', '2.sigma'],
      ['Hard.blur v2.blur_radius', '3.blur_radius'],
      ['Hard.blur v2.sigma', '3.sigma'],
      ['Save Image.filename_prefix', 'filename_prefix', '4.filename_prefix'],
    ]);
    const sharp = wf.with({ 'Hard.blur v2.blur_radius': 5, filename_prefix: 'sharp', '2.sigma': 0.5 }).toJSON();
    expect([sharp['3']!.inputs.blur_radius, sharp['4']!.inputs.filename_prefix, sharp['2']!.inputs.sigma]).toEqual([5, 'sharp', 0.5]);
    expect(wf.toJSON()['3']!.inputs.blur_radius).toBe(9);
    expect(refusal(() => wf.with({ blur_radius: 5 })).message).toBe(
      'blur_radius: names 2 inputs: use "Soft blur.blur_radius" (#2 ImageBlur "Soft blur") or "Hard.blur v2.blur_radius" (#3 ImageBlur "Hard.blur v2")',
    );
    expect(refusal(() => wf.with({ 'Hard.blur v2.blur_radius': 99 })).message).toBe('#3 ImageBlur "Hard.blur v2": blur_radius: must be at most 31 (from 1 to 31), got 99');
  });

  it('with an app-mode interface: exactly its inputs, kept by with(), the others refused', () => {
    const wf = Workflow.fromEditor(withInterface(), emulated);
    expect(wf.inputs()).toEqual([
      { names: ['Hard.blur v2.blur_radius', 'blur_radius', '3.blur_radius'], nodeId: '3', title: 'Hard.blur v2', classType: 'ImageBlur', input: 'blur_radius', type: 'INT', value: 9, min: 1, max: 31, step: 1, default: 1 },
      { names: ['Save Image.filename_prefix', 'filename_prefix', '4.filename_prefix'], nodeId: '4', title: 'Save Image', classType: 'SaveImage', input: 'filename_prefix', type: 'STRING', value: 'blurred', default: 'PlatformUI' },
    ]);
    const next = wf.with({ blur_radius: 4 });
    expect(next.toJSON()['3']!.inputs.blur_radius).toBe(4);
    expect(next.inputs().map((i) => i.names[0])).toEqual(['Hard.blur v2.blur_radius', 'Save Image.filename_prefix']);
    const outside = 'not in this workflow\'s interface: its editor file exposes only "Hard.blur v2.blur_radius", "Save Image.filename_prefix"';
    expect(refusal(() => next.with({ sigma: 1 })).message).toBe(`sigma: ${outside}`);
    expect(refusal(() => wf.with({ 'Load Photo.image': 'x.png' })).message).toBe(`Load Photo.image: ${outside}`);
    // set() still reaches any input.
    expect(wf.set('1.inputs.image', 'photo.png').toJSON()['1']!.inputs.image).toBe('photo.png');
  });

  it('with() keeps what the conversion warned of', () => {
    const json = saved();
    json.nodes[3].widgets_values.push('extra');
    const wf = Workflow.fromEditor(json, emulated, { widgetValues: 'editor' });
    expect(wf.warnings.map((w) => w.code)).toEqual(['widget_values_mismatch']);
    expect(wf.with({ filename_prefix: 'x' }).warnings).toEqual(wf.warnings);
  });
});
