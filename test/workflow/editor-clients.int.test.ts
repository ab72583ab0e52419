// Workflows saved in the editor, handed to the clients as they are (issue 25): the client converts
// them with its server's object_info (fetched once), submits what the editor would, and sends the
// saved file as extra_pnginfo.workflow; a pool converts per server. Real loopback sockets, emulator.
import { afterEach, describe, expect, it } from 'vitest';
import { CloudClient, CloudPool, InvalidArgumentError, Workflow } from '../../src/index.ts';
import { makePng, startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { recorder } from '../helpers/log-recorder.ts';

/** LoadImage → Reroute → ImageBlur "Soft" → SaveImage, with a note; as the editor saves it (schema 0.4). */
function saved(prefix = 'from-editor', blur: unknown[] = [3, 1.5]) {
  return {
    version: 0.4,
    last_node_id: 5,
    last_link_id: 3,
    nodes: [
      { id: 1, type: 'LoadImage', pos: [0, 0], size: [300, 300], flags: {}, order: 0, mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }, { name: 'MASK', type: 'MASK', links: null }], properties: {}, widgets_values: ['in.png', 'image'] },
      { id: 2, type: 'Reroute', pos: [320, 0], size: [75, 26], flags: {}, order: 1, mode: 0, inputs: [{ name: '', type: '*', link: 1 }], outputs: [{ name: '', type: 'IMAGE', links: [2] }], properties: {} },
      { id: 3, type: 'ImageBlur', title: 'Soft', pos: [420, 0], size: [300, 100], flags: {}, order: 2, mode: 0, inputs: [{ name: 'image', type: 'IMAGE', link: 2 }], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [3] }], properties: {}, widgets_values: blur },
      { id: 4, type: 'SaveImage', pos: [740, 0], size: [300, 300], flags: {}, order: 3, mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: 3 }], outputs: [], properties: {}, widgets_values: [prefix] },
      { id: 5, type: 'Note', pos: [0, 400], size: [300, 100], flags: {}, order: 4, mode: 0, inputs: [], outputs: [], properties: {}, widgets_values: ['blur radius 3 looks best'] },
    ],
    links: [
      [1, 1, 0, 2, 0, '*'],
      [2, 2, 0, 3, 0, 'IMAGE'],
      [3, 3, 0, 4, 0, 'IMAGE'],
    ],
    groups: [],
    config: {},
    extra: { ds: { scale: 1, offset: [0, 0] } },
  };
}

/** What the editor submits for {@link saved}. */
const expected = (prefix = 'from-editor') => ({
  '1': { inputs: { image: 'in.png' }, class_type: 'LoadImage', _meta: { title: 'Load Image' } },
  '3': { inputs: { blur_radius: 3, sigma: 1.5, image: ['1', 0] }, class_type: 'ImageBlur', _meta: { title: 'Soft' } },
  '4': { inputs: { filename_prefix: prefix, images: ['3', 0] }, class_type: 'SaveImage', _meta: { title: 'Save Image' } },
});

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function emulator(): Promise<Emulator> {
  const emu = await startEmulator({ port: 0, personality: 'local', cloud: { stepMs: 5, progressSteps: 1 } });
  open.push(emu);
  emu.cloud.addFile('in.png', makePng(8, 8, 1));
  return emu;
}
const client = (emu: Emulator, extra: object = {}) => new CloudClient({ baseUrl: emu.url, logLevel: 'off', retry: { limit: 0 }, ...extra });
const count = (emu: Emulator, method: string, path: RegExp) => emu.requests.filter((r) => r.method === method && path.test(r.path)).length;

describe('a workflow saved in the editor, run as it is', () => {
  it('run() converts it with the server\'s object_info (fetched once), submits what the editor would, and embeds the saved file', async () => {
    const emu = await emulator();
    const cloud = client(emu);
    const first = await cloud.run(saved('one'));
    const second = await cloud.run(JSON.parse(JSON.stringify(saved('two'))));
    expect(first.files.map((f) => f.filename)).toEqual([expect.stringMatching(/^one_/)]);
    expect(second.files).toHaveLength(1);
    const job = emu.cloud.engine.jobs.get(first.promptId)!;
    expect(JSON.stringify(job.prompt)).toBe(JSON.stringify(expected('one')));
    // As the editor sends it: the outputs' metadata opens in the editor as the graph that was saved.
    expect(job.extraData.extra_pnginfo).toEqual({ workflow: saved('one') });
    expect(count(emu, 'GET', /\/object_info$/)).toBe(1);
  });

  it('submit() with the caller\'s own extra_pnginfo keeps it; validateWorkflow() judges the converted workflow', async () => {
    const emu = await emulator();
    const cloud = client(emu);
    const { prompt_id } = await cloud.submit(saved(), { extraData: { extra_pnginfo: { mine: true } } });
    expect(emu.cloud.engine.jobs.get(prompt_id)!.extraData.extra_pnginfo).toEqual({ mine: true });
    expect(await cloud.validateWorkflow(saved())).toEqual([]);
    const bad = saved('x', [99, 1.5]); // blur_radius above its max (31): the server's own check, after conversion
    expect((await cloud.validateWorkflow(bad)).map((i) => [i.code, i.nodeId, i.input])).toEqual([['value_bigger_than_max', '3', 'blur_radius']]);
  });

  it('refuses a file it cannot convert before anything is submitted, naming the node', async () => {
    const emu = await emulator();
    const cloud = client(emu);
    const file = saved('x', [3]); // one value for ImageBlur's two widgets: saved against another version?
    const err = (await cloud.run(file).catch((e: unknown) => e)) as InvalidArgumentError;
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err.message).toMatch(/^workflow: #3 ImageBlur "Soft": widgets_values has 1 value for the 2 widget values this server's ImageBlur has \(blur_radius, sigma\)/);
    expect(err.issues?.map((i) => i.code)).toEqual(['widget_values_mismatch']);
    expect(count(emu, 'POST', /\/prompt$/)).toBe(0);
    // validateWorkflow lists it rather than throwing.
    expect((await cloud.validateWorkflow(file)).map((i) => `${i.severity} ${i.code}`)).toEqual(['error widget_values_mismatch']);
    // A mistyped option is refused before object_info is fetched again (a fresh client: nothing cached).
    emu.requests.length = 0;
    const typo = await client(emu)
      .validateWorkflow(file, { widgetValues: 'loose' as 'editor' })
      .catch((e: unknown) => e);
    if (!(typo instanceof InvalidArgumentError)) throw new Error(`not refused: ${JSON.stringify(typo)}`);
    expect(typo).toBeInstanceOf(InvalidArgumentError);
    expect(typo.message).toMatch(/^options\.widgetValues: /);
    expect(emu.requests).toEqual([]);
  });

  it("widgetValues: 'editor' converts as the editor does and logs what it changed", async () => {
    const emu = await emulator();
    const log = recorder();
    const cloud = client(emu, { logLevel: 'warn', logger: log.logger });
    const result = await cloud.run(saved('lenient', [3]), { widgetValues: 'editor' });
    expect(emu.cloud.engine.jobs.get(result.promptId)!.prompt['3']!.inputs).toEqual({ blur_radius: 3, sigma: 1, image: ['1', 0] });
    expect(log.of('warn').map((l) => l.message)).toEqual([expect.stringMatching(/#3 ImageBlur "Soft": .*converted as the editor does, sigma = 1 filled in/)]);
  });

  it('Workflow.fromEditor gives the same workflow, and run() takes it as API format', async () => {
    const emu = await emulator();
    const cloud = client(emu);
    const wf = Workflow.fromEditor(JSON.stringify(saved('built')), await cloud.getObjectInfo());
    expect(JSON.stringify(wf.toJSON())).toBe(JSON.stringify(expected('built')));
    const result = await cloud.run(wf);
    expect(emu.cloud.engine.jobs.get(result.promptId)!.extraData.extra_pnginfo).toBeUndefined();
  });

  it("a pool with widgetValues: 'editor' converts as the editor does and logs what it changed, naming the server", async () => {
    const emu = await emulator();
    const log = recorder();
    const pool = new CloudPool([{ baseUrl: emu.url, id: 'a', logLevel: 'off' }], { logger: log.logger });
    open.push(pool);
    const result = await pool.run(saved('pool-lenient', [3]), { widgetValues: 'editor' });
    expect(emu.cloud.engine.jobs.get(result.promptId)!.prompt['3']!.inputs).toEqual({ blur_radius: 3, sigma: 1, image: ['1', 0] });
    expect(log.of('warn').map((l) => l.message)).toEqual([expect.stringMatching(/^\[platformui pool\] a: #3 ImageBlur "Soft": .*converted as the editor does, sigma = 1 filled in$/)]);
  });

  it('a pool converts per server: a server whose ImageBlur has another widget layout is not chosen', async () => {
    const [a, b] = [await emulator(), await emulator()];
    // a's ImageBlur has a third widget: the saved [3, 1.5] no longer fits it, so the job can only go to b.
    const full = a.cloud.objectInfo.bind(a.cloud);
    a.cloud.objectInfo = () => {
      const info = full();
      info.ImageBlur!.input.required.mode = [['gaussian', 'box']];
      return info;
    };
    const pool = new CloudPool(
      [
        { baseUrl: a.url, id: 'a', logLevel: 'off' },
        { baseUrl: b.url, id: 'b', logLevel: 'off' },
      ],
      { logLevel: 'off' },
    );
    open.push(pool);
    const results = await Promise.all([pool.run(saved('p1')), pool.run(saved('p2'))]);
    expect(results.map((r) => r.server)).toEqual(['b', 'b']);
    expect(count(a, 'POST', /\/prompt$/)).toBe(0);
    const job = b.cloud.engine.jobs.get(results[0]!.promptId)!;
    expect(JSON.stringify(job.prompt)).toBe(JSON.stringify(expected('p1')));
    expect(job.extraData.extra_pnginfo).toEqual({ workflow: saved('p1') });
  });
});
