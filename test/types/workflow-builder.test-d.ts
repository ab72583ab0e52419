// Type tests of the typed builder: `Workflow<Nodes>` with the node types generated
// from the real 440-class object_info (fixture-nodes.generated.ts, committed so these
// run without the fixture; test/workflow/codegen.test.ts keeps it in step with the fixture).
// Each mistake the issue names is a compile error; valid workflows compile; the
// untyped `Workflow` takes anything.
import { describe, expectTypeOf, it } from 'vitest';
import { Workflow, type AnyLink, type Link, type NodeHandle, type UploadResponse, type Untyped, type WorkflowJSON } from '../../src/index.ts';
import type { Nodes } from './fixture-nodes.generated.ts';

declare const upload: UploadResponse;

/** A text-to-image graph, built the typed way. */
function txt2img() {
  const wf = new Workflow<Nodes>();
  const ckpt = wf.add('CheckpointLoaderSimple', { ckpt_name: 'sd15.safetensors' });
  const positive = wf.add('CLIPTextEncode', { clip: ckpt.out('CLIP'), text: 'a cat' }, { title: 'Positive' });
  const negative = wf.add('CLIPTextEncode', { clip: ckpt.out(1), text: 'blurry' });
  const latent = wf.add('EmptyLatentImage', { width: 512, height: 512, batch_size: 1 });
  const sampler = wf.add('KSampler', {
    model: ckpt.out('MODEL'),
    seed: 42,
    steps: 20,
    cfg: 7,
    sampler_name: 'euler',
    scheduler: 'normal',
    positive: positive.out(0),
    negative: negative.out(0),
    latent_image: latent.out('LATENT'),
    denoise: 1,
  });
  const image = wf.add('VAEDecode', { samples: sampler.out(0), vae: ckpt.out('VAE') });
  wf.add('SaveImage', { images: image.out('IMAGE'), filename_prefix: 'cat' }, { id: '9', title: 'Save' });
  return { wf, ckpt, sampler, image };
}

describe('Workflow<Nodes>: valid workflows compile', () => {
  it('builds text-to-image with links typed by output', () => {
    const { wf, ckpt, sampler, image } = txt2img();
    expectTypeOf(ckpt).toEqualTypeOf<NodeHandle<Nodes, 'CheckpointLoaderSimple'>>();
    expectTypeOf(ckpt.out('MODEL')).toEqualTypeOf<Link<'MODEL'>>();
    expectTypeOf(ckpt.out(2)).toEqualTypeOf<Link<'VAE'>>();
    expectTypeOf(sampler.out('LATENT')).toEqualTypeOf<Link<'LATENT'>>();
    expectTypeOf(image.classType).toEqualTypeOf<'VAEDecode'>();
    expectTypeOf(wf.toJSON()).toEqualTypeOf<WorkflowJSON>();
  });

  it('takes optional inputs, upload responses for file inputs, and links into widget inputs', () => {
    const wf = new Workflow<Nodes>();
    const load = wf.add('LoadImage', { image: upload });
    wf.add('LoadImage', { image: 'any-uploaded-name.png' });
    const seed = wf.add('PrimitiveInt', { value: 7 });
    const sampler = wf.add('KSamplerSelect', { sampler_name: 'dpmpp_2m' });
    expectTypeOf(sampler.out(0)).toEqualTypeOf<Link<'SAMPLER'>>();
    wf.add('ImageScaleBy', { image: load.out('IMAGE'), upscale_method: 'bilinear', scale_by: 1.5 });
    wf.add('RandomNoise', { noise_seed: seed.out(0) });
  });

  it('a comma-separated input type takes each of its types', () => {
    const wf = new Workflow<Nodes>();
    const load = wf.add('LoadImage', { image: 'a.png' });
    // ResizeImageMaskNode.input is a match type allowing IMAGE,MASK.
    wf.add('ResizeImageMaskNode', { input: load.out('IMAGE'), resize_type: 'scale by multiplier', 'resize_type.multiplier': 2, scale_method: 'area' });
    wf.add('ResizeImageMaskNode', { input: load.out('MASK'), resize_type: 'scale dimensions', 'resize_type.width': 64, 'resize_type.height': 64, scale_method: 'area' });
  });

  it('a `*` input takes anything; a `*` (match-type) output fits any input', () => {
    const wf = new Workflow<Nodes>();
    const load = wf.add('LoadImage', { image: 'a.png' });
    wf.add('PreviewAny', { source: load.out('MASK') });
    wf.add('PreviewAny', { source: 'text' });
    const resized = wf.add('ResizeImageMaskNode', { input: load.out(0), resize_type: 'scale by multiplier', scale_method: 'area' });
    expectTypeOf(resized.out(0)).toEqualTypeOf<AnyLink>();
    wf.add('SaveImage', { images: resized.out('resized'), filename_prefix: 'r' });
    wf.add('VAEEncode', { pixels: resized.out(0), vae: wf.node('1').out(2) });
  });

  it('expands dynamic inputs: autogrow names, the first `min` required', () => {
    const wf = new Workflow<Nodes>();
    const a = wf.add('LoadImage', { image: 'a.png' }).out('IMAGE');
    wf.add('BatchImagesNode', { 'images.image0': a, 'images.image1': a, 'images.image7': a });
  });

  it('nodes found by class are typed by it; by id or title, they are not', () => {
    const { wf } = txt2img();
    const sampler = wf.node({ classType: 'KSampler' });
    expectTypeOf(sampler).toEqualTypeOf<NodeHandle<Nodes, 'KSampler'>>();
    sampler.set('steps', 30).set('sampler_name', 'dpmpp_2m');
    wf.set({ classType: 'KSampler' }, 'cfg', 6.5);
    wf.set('3.inputs.seed', 1);
    wf.set({ title: 'Positive' }, 'text', 'a dog');
    expectTypeOf(wf.nodes({ classType: 'CLIPTextEncode' })).toEqualTypeOf<NodeHandle<Nodes, 'CLIPTextEncode'>[]>();
    expectTypeOf(wf.node('5').out(0)).toEqualTypeOf<AnyLink>();
    expectTypeOf(wf.node({ title: 'Save' }).inputs).toEqualTypeOf<Readonly<Record<string, unknown>>>();
  });

  it('a selector with a title and a class is typed by the class', () => {
    const { wf } = txt2img();
    expectTypeOf(wf.node({ classType: 'CLIPTextEncode', title: 'Positive' })).toEqualTypeOf<NodeHandle<Nodes, 'CLIPTextEncode'>>();
    expectTypeOf(wf.nodes({ title: 'Positive', classType: 'CLIPTextEncode' })).toEqualTypeOf<NodeHandle<Nodes, 'CLIPTextEncode'>[]>();
    wf.set({ classType: 'CLIPTextEncode', title: 'Positive' }, 'text', 'a dog');
  });

  it('Workflow.from takes the node types too', () => {
    const wf = Workflow.from<Nodes>('{}');
    expectTypeOf(wf).toEqualTypeOf<Workflow<Nodes>>();
    wf.add('ImageInvert', { image: wf.add('LoadImage', { image: 'a.png' }).out(0) });
  });
});

describe('Workflow<Nodes>: each mistake is a compile error', () => {
  it('an unknown class', () => {
    const wf = new Workflow<Nodes>();
    // @ts-expect-error: Argument of type '"KSamplr"' is not assignable to parameter of type '"APG" | "AddNoise" | … 429 more …'
    wf.add('KSamplr', {});
    // @ts-expect-error: the same for a class selector
    wf.node({ classType: 'KSamplr' });
  });

  it('a misspelt combo value (combo values are literal unions)', () => {
    const { wf, ckpt } = txt2img();
    const text = wf.add('CLIPTextEncode', { clip: ckpt.out('CLIP'), text: 'x' });
    const latent = wf.add('EmptyLatentImage', { width: 64, height: 64, batch_size: 1 });
    wf.add('KSampler', {
      model: ckpt.out(0),
      seed: 1,
      steps: 20,
      cfg: 7,
      // @ts-expect-error: Type '"eulr"' is not assignable to type 'Link<"COMBO"> | "euler" | …'. Did you mean '"euler"'?
      sampler_name: 'eulr',
      scheduler: 'normal',
      positive: text.out(0),
      negative: text.out(0),
      latent_image: latent.out(0),
      denoise: 1,
    });
    // @ts-expect-error: the same through a handle's set()
    wf.node({ classType: 'KSampler' }).set('scheduler', 'karas');
    // @ts-expect-error: the newer ["COMBO", { options }] form is a literal union too
    wf.add('ImageStitch', { image1: wf.node('1').out(0), direction: 'up-left', match_image_size: true, spacing_width: 0, spacing_color: 'white' });
  });

  it('a missing required input', () => {
    const wf = new Workflow<Nodes>();
    // @ts-expect-error: Property 'batch_size' is missing in type '{ width: number; height: number; }' but required
    wf.add('EmptyLatentImage', { width: 512, height: 512 });
    const a = wf.add('LoadImage', { image: 'a.png' }).out(0);
    // @ts-expect-error: an autogrow input's first `min` names are required ('images.image1')
    wf.add('BatchImagesNode', { 'images.image0': a });
  });

  it('a link of the wrong type', () => {
    const wf = new Workflow<Nodes>();
    const load = wf.add('LoadImage', { image: 'a.png' });
    const ckpt = wf.add('CheckpointLoaderSimple', { ckpt_name: 'x' });
    // @ts-expect-error: Type 'Link<"IMAGE">' is not assignable to type 'Link<"LATENT">'
    wf.add('VAEDecode', { samples: load.out('IMAGE'), vae: ckpt.out('VAE') });
    // @ts-expect-error: a MASK output into an IMAGE input
    wf.add('ImageInvert', { image: load.out('MASK') });
    // @ts-expect-error: an IMAGE link into an INT widget
    wf.add('EmptyLatentImage', { width: load.out(0), height: 64, batch_size: 1 });
    // @ts-expect-error: nor into a match type allowing IMAGE,MASK only
    wf.add('ResizeImageMaskNode', { input: ckpt.out('MODEL'), resize_type: 'scale by multiplier', scale_method: 'area' });
    // @ts-expect-error: a literal where only a link can provide the type
    wf.add('ImageInvert', { image: 'a.png' });
  });

  it('a wrong primitive type', () => {
    const wf = new Workflow<Nodes>();
    // @ts-expect-error: Type 'string' is not assignable to type 'number | Link<"INT">'
    wf.add('EmptyLatentImage', { width: '512', height: 512, batch_size: 1 });
    // @ts-expect-error: Type 'number' is not assignable to type 'string | Link<"STRING">'
    wf.add('SaveImage', { images: wf.node('1').out(0), filename_prefix: 5 });
    // @ts-expect-error: Type 'string' is not assignable to type 'boolean | Link<"BOOLEAN">'
    wf.add('ComfySwitchNode', { switch: 'yes' });
    // @ts-expect-error: through set() too
    wf.node({ classType: 'KSampler' }).set('steps', '20');
  });

  it('an unknown input, an unknown output, a malformed path', () => {
    const wf = new Workflow<Nodes>();
    // @ts-expect-error: Object literal may only specify known properties … Did you mean to write 'height'?
    wf.add('EmptyLatentImage', { width: 512, hieght: 512, batch_size: 1 });
    const load = wf.add('LoadImage', { image: 'a.png' });
    // @ts-expect-error: Argument of type '"IMAG"' is not assignable to parameter of type '0 | 1 | "IMAGE" | "MASK"'
    load.out('IMAG');
    // @ts-expect-error: LoadImage has outputs 0 and 1
    load.out(2);
    // @ts-expect-error: KSampler has no input 'stepz'
    wf.set({ classType: 'KSampler' }, 'stepz', 20);
    // @ts-expect-error: nor with a title in the selector ('text' is CLIPTextEncode's)
    wf.set({ classType: 'KSampler', title: 'Positive' }, 'text', 'a dog');
    // @ts-expect-error: a path is '<id>.inputs.<input>'
    wf.set('3.seed', 1);
  });
});

describe('Workflow (untyped)', () => {
  it('takes any class, any input, any output', () => {
    const wf = new Workflow();
    const node = wf.add('MyCustomNode', { anything: [1, 2], image: upload, n: 3 });
    expectTypeOf(node).toEqualTypeOf<NodeHandle<Untyped, 'MyCustomNode'>>();
    expectTypeOf(node.classType).toEqualTypeOf<'MyCustomNode'>();
    expectTypeOf(node.inputs).toEqualTypeOf<Readonly<Record<string, unknown>>>();
    expectTypeOf(node.out('WHATEVER')).toEqualTypeOf<AnyLink>();
    wf.add('Other', { x: node.out(3) });
    wf.set('1.inputs.n', 'x').set({ title: 't' }, 'y', 1).set({ classType: 'Other' }, 'z', null);
    expectTypeOf(Workflow.from({})).toEqualTypeOf<Workflow>();
  });

  it('a link fits the JSON an API-format workflow holds', () => {
    const wf = new Workflow();
    const json: WorkflowJSON = { '1': { class_type: 'ImageInvert', inputs: { image: wf.add('LoadImage', { image: 'a.png' }).out(0) } } };
    expectTypeOf(wf.toJSON()).toMatchTypeOf<typeof json>();
  });
});
