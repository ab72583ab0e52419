// Workflows saved in the editor (issue 25): converting a 200-node saved workflow with the real
// 440-class object_info must take under 1 ms, each shape the conversion handles measured alone, with
// the ratio to Workflow.from of its API-format twin (what the same workflow costs without the
// conversion) in the same run. Medians of interleaved rounds; the object_info is parsed once (the
// clients keep theirs). Needs a build (dist/) and the shared fixture; skipped with one line without it.
// Erasable TS only (node --experimental-strip-types).
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const FIXTURE = `${process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server'}/object_info.json`;
const TARGET_MS = 1;
const N = 200;

type Saved = { nodes: object[]; links: unknown[][]; definitions?: object; extra: object; version: number };
const out = (links: number[] | null) => [{ name: 'IMAGE', type: 'IMAGE', links }];
const imageIn = (link: number | null) => [{ name: 'image', type: 'IMAGE', link }];

/** A saved workflow of `n` nodes: LoadImage, then `body(i)` for each node in between, then SaveImage, linked in a chain. */
function chain(n: number, body: (id: number, link: number) => object): Saved {
  const nodes: object[] = [{ id: 1, type: 'LoadImage', mode: 0, inputs: [], outputs: out([1]), widgets_values: ['example.png', 'image'] }];
  const links: unknown[][] = [];
  for (let id = 2; id <= n; id++) {
    links.push([id - 1, id - 1, 0, id, 0, 'IMAGE']);
    nodes.push(id === n ? { id, type: 'SaveImage', mode: 0, inputs: [{ name: 'images', type: 'IMAGE', link: id - 1 }], outputs: [], widgets_values: ['bench'] } : body(id, id - 1));
  }
  return { version: 0.4, nodes, links, extra: {} };
}

const blur = (id: number, link: number, mode = 0) => ({ id, type: 'ImageBlur', title: `Blur ${id}`, mode, inputs: imageIn(link), outputs: out([id]), widgets_values: [3, 1.5] });
const invert = (id: number, link: number) => ({ id, type: 'ImageInvert', mode: 0, inputs: imageIn(link), outputs: out([id]) });
const scale = (id: number, link: number) => ({ id, type: 'ImageScaleBy', mode: 0, inputs: imageIn(link), outputs: out([id]), widgets_values: ['bilinear', 1] });

const SG = '00000000-0000-4000-8000-00000000be4c';
/** A subgraph of blur → invert, placed as `instance` nodes. */
const definitions = {
  subgraphs: [
    {
      id: SG,
      version: 1,
      name: 'blur and invert',
      inputs: [{ id: 'i', name: 'image', type: 'IMAGE', linkIds: [1] }],
      outputs: [{ id: 'o', name: 'IMAGE', type: 'IMAGE', linkIds: [3] }],
      nodes: [blur(1, 1), invert(2, 2)],
      links: [
        { id: 1, origin_id: -10, origin_slot: 0, target_id: 1, target_slot: 0, type: 'IMAGE' },
        { id: 2, origin_id: 1, origin_slot: 0, target_id: 2, target_slot: 0, type: 'IMAGE' },
        { id: 3, origin_id: 2, origin_slot: 0, target_id: -20, target_slot: 0, type: 'IMAGE' },
      ],
    },
  ],
};

/** Each shape of workflow the conversion handles, 200 nodes (or node slots) each. */
const SHAPES: Array<[string, () => Saved]> = [
  ['plain nodes (blur, invert, scale)', () => chain(N, (id, link) => [blur, invert, scale][id % 3]!(id, link))],
  ['every other node a Reroute', () => chain(N, (id, link) => (id % 2 ? { id, type: 'Reroute', mode: 0, inputs: [{ name: '', type: '*', link }], outputs: out([id]) } : blur(id, link)))],
  ['every other node bypassed', () => chain(N, (id, link) => blur(id, link, id % 2 ? 4 : 0))],
  [
    'a PrimitiveNode per blur radius',
    () => {
      const saved = chain(N / 2, blur);
      for (let id = 2; id < N / 2; id++) {
        const link = 1000 + id;
        const node = saved.nodes[id - 1] as { inputs: object[] };
        node.inputs.push({ name: 'blur_radius', type: 'INT', widget: { name: 'blur_radius' }, link });
        saved.nodes.push({ id: 1000 + id, type: 'PrimitiveNode', mode: 0, inputs: [], outputs: [{ name: 'INT', type: 'INT', links: [link], widget: { name: 'blur_radius' } }], widgets_values: [5, 'fixed'] });
        saved.links.push([link, 1000 + id, 0, id, 1, 'INT']);
      }
      return saved;
    },
  ],
  [
    'subgraph instances (2 inner nodes each)',
    () => ({ ...chain(Math.round(N / 2), (id, link) => ({ id, type: SG, mode: 0, inputs: imageIn(link), outputs: out([id]) })), definitions }),
  ],
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const name = `editor format: Workflow.fromEditor of ${N}-node saved workflows (target < ${TARGET_MS} ms)`;
  if (!existsSync(FIXTURE)) return { name, ok: true, lines: [`${FIXTURE} not found: skipped (the fixture is in ../shared)`] };
  const { Workflow } = (await import(new URL('dist/index.js', root).href)) as typeof import('../src/index.ts');
  const info = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, never>;
  const lines: string[] = [];
  let ok = true;
  for (const [label, make] of SHAPES) {
    const saved = make();
    const twin = Workflow.fromEditor(saved, info).toJSON();
    const nodes = Object.keys(twin).length;
    const editor: number[] = [];
    const api: number[] = [];
    // Interleaved rounds of 20 calls each, so both see the same machine.
    for (let round = 0; round < 25; round++) {
      let t = performance.now();
      for (let i = 0; i < 20; i++) Workflow.fromEditor(saved, info);
      editor.push((performance.now() - t) / 20);
      t = performance.now();
      for (let i = 0; i < 20; i++) Workflow.from(twin, info);
      api.push((performance.now() - t) / 20);
    }
    const [e, a] = [median(editor), median(api)];
    const pass = e < TARGET_MS;
    ok &&= pass;
    lines.push(`${label.padEnd(40)} ${String(saved.nodes.length).padStart(3)} saved → ${String(nodes).padStart(3)} API nodes: fromEditor ${e.toFixed(3)} ms, Workflow.from of the API twin ${a.toFixed(3)} ms (×${(e / a).toFixed(1)}): ${pass ? 'PASS' : 'FAIL'}`);
  }
  return { name, lines, ok };
}
