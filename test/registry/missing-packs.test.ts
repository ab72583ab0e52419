// findMissingPacks: the pure logic behind registry.findMissingPacks, driven by a fake
// PackLookup that records every call, can delay its answers and can fail on demand.
// Covers the API and the UI saved formats, the per-client cache, the limit of 4 lookups
// in flight, cnr_id / comfy-core / aux_id, bypassed and editor-only nodes, invalid input.
import { describe, expect, it } from 'vitest';
import { APIConnectionError, APIUserAbortError, InvalidArgumentError } from '../../src/errors.ts';
import { findMissingPacks, type PackLookup } from '../../src/registry/missing-packs.ts';
import type { Node } from '../../src/schemas/registry.ts';

const pack = (id: string, version = '1.2.0', downloadUrl = `https://cdn.example/${id}/${version}.zip`): Node => ({
  id,
  name: id,
  latest_version: { node_id: id, version, downloadUrl },
});

/** A fake registry: `classes` maps a class name to its pack id; `packs` the registry's packs. */
function fakeLookup(classes: Record<string, string>, packs: Node[], opts: { delayMs?: number; fail?: Set<string> } = {}) {
  const calls = { nodeForClass: [] as string[], nodes: [] as string[][] };
  let inFlight = 0;
  let maxInFlight = 0;
  const lookup: PackLookup = {
    async nodeForClass(className) {
      calls.nodeForClass.push(className);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise((r) => setTimeout(r, opts.delayMs ?? 0));
        if (opts.fail?.has(className)) throw new APIConnectionError('GET', `https://registry.example/platform-nodes/${encodeURIComponent(className)}/node`);
        const id = classes[className];
        return id === undefined ? null : (packs.find((p) => p.id === id) ?? null);
      } finally {
        inFlight--;
      }
    },
    async nodes(ids) {
      calls.nodes.push([...ids]);
      return ids.flatMap((id) => packs.filter((p) => p.id === id));
    },
  };
  return { lookup, calls, maxInFlight: () => maxInFlight };
}

const OBJECT_INFO: Record<string, unknown> = { KSampler: {}, CLIPTextEncode: {}, VAEDecode: {}, SaveImage: {}, CheckpointLoaderSimple: {} };

/** API format: two classes of the Impact pack, one of the RIFE pack, one nobody provides, and core classes. */
const API_WORKFLOW = {
  '1': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'model.safetensors' } },
  '2': { class_type: 'FaceDetailer', inputs: { model: ['1', 0] }, _meta: { title: 'Face' } },
  '3': { class_type: 'KSampler', inputs: { model: ['1', 0] } },
  '4': { class_type: 'RIFE VFI', inputs: { frames: ['2', 0] } },
  '5': { class_type: 'SAMLoader (Impact)', inputs: {} },
  '6': { class_type: 'NobodyHasThis', inputs: {} },
  '7': { class_type: 'FaceDetailer', inputs: { model: ['1', 0] } },
  '8': { class_type: 'SaveImage', inputs: { images: ['4', 0] } },
};
const REGISTRY = {
  classes: { FaceDetailer: 'impact-pack', 'SAMLoader (Impact)': 'impact-pack', 'RIFE VFI': 'frame-interpolation' },
  packs: [pack('impact-pack', '8.1.0'), pack('frame-interpolation', '1.0.7', '')],
};

describe('findMissingPacks, API format', () => {
  it('groups unknown classes by pack, lists the unprovided ones, never looks up known classes', async () => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs);
    const result = await findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, new Map());

    expect(calls.nodeForClass.sort()).toEqual(['FaceDetailer', 'NobodyHasThis', 'RIFE VFI', 'SAMLoader (Impact)']);
    expect(calls.nodes).toEqual([['impact-pack', 'frame-interpolation']]);
    expect(result.packs.map((p) => ({ id: p.id, classTypes: p.classTypes, version: p.version, downloadUrl: p.downloadUrl }))).toEqual([
      { id: 'impact-pack', classTypes: ['FaceDetailer', 'SAMLoader (Impact)'], version: '8.1.0', downloadUrl: 'https://cdn.example/impact-pack/8.1.0.zip' },
      // '' on the wire reads as undefined
      { id: 'frame-interpolation', classTypes: ['RIFE VFI'], version: '1.0.7', downloadUrl: undefined },
    ]);
    expect(result.packs[0]!.node).toBe(REGISTRY.packs[0]);
    expect(result.packs[0]).not.toHaveProperty('pinnedVersion');
    expect(result.unknown).toEqual(['NobodyHasThis']);
    expect(result.coreUpdate).toEqual([]);
    expect(result.outsideRegistry).toEqual([]);
  });

  it('makes no request at all when every class is installed', async () => {
    const { lookup, calls } = fakeLookup({}, []);
    const result = await findMissingPacks({ '3': { class_type: 'KSampler', inputs: {} } }, { objectInfo: OBJECT_INFO }, lookup, new Map());
    expect(result).toEqual({ packs: [], unknown: [], coreUpdate: [], outsideRegistry: [] });
    expect(calls).toEqual({ nodeForClass: [], nodes: [] });
  });

  it('caches answers and nulls per cache: a second call looks nothing up', async () => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs);
    const cache = new Map<string, Promise<Node | null>>();
    const first = await findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache);
    expect(calls.nodeForClass).toHaveLength(4);
    expect([...cache.keys()].sort()).toEqual(['FaceDetailer', 'NobodyHasThis', 'RIFE VFI', 'SAMLoader (Impact)']);
    await expect(cache.get('NobodyHasThis')).resolves.toBeNull();

    const second = await findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache);
    expect(calls.nodeForClass).toHaveLength(4); // no new lookup, not even for the null
    expect(second).toEqual(first);
    // A fresh cache (another client) asks again.
    await findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, new Map());
    expect(calls.nodeForClass).toHaveLength(8);
  });

  it('shares in-flight lookups between concurrent calls on one cache', async () => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs, { delayMs: 20 });
    const cache = new Map<string, Promise<Node | null>>();
    const [a, b] = await Promise.all([
      findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache),
      findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache),
    ]);
    expect(calls.nodeForClass).toHaveLength(4);
    expect(a).toEqual(b);
  });

  it('never runs more than 4 lookups at once (10 classes), and looks each up once', async () => {
    const classes = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`Custom${i}`, `pack-${i % 3}`]));
    const workflow = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [String(i + 1), { class_type: `Custom${i % 10}`, inputs: {} }]));
    const { lookup, calls, maxInFlight } = fakeLookup(classes, [pack('pack-0'), pack('pack-1'), pack('pack-2')], { delayMs: 15 });
    const result = await findMissingPacks(workflow, { objectInfo: OBJECT_INFO }, lookup, new Map());
    expect(maxInFlight()).toBe(4);
    expect(calls.nodeForClass).toHaveLength(10);
    expect(new Set(calls.nodeForClass).size).toBe(10);
    expect(calls.nodes).toEqual([['pack-0', 'pack-1', 'pack-2']]);
    expect(result.packs.map((p) => [p.id, p.classTypes])).toEqual([
      ['pack-0', ['Custom0', 'Custom3', 'Custom6', 'Custom9']],
      ['pack-1', ['Custom1', 'Custom4', 'Custom7']],
      ['pack-2', ['Custom2', 'Custom5', 'Custom8']],
    ]);
  });

  it('keeps the limit of 4 across concurrent calls sharing a cache', async () => {
    const classes = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`C${i}`, 'p']));
    const wf = (from: number) => Object.fromEntries(Array.from({ length: 6 }, (_, i) => [String(i), { class_type: `C${from + i}`, inputs: {} }]));
    const { lookup, maxInFlight } = fakeLookup(classes, [pack('p')], { delayMs: 10 });
    const cache = new Map<string, Promise<Node | null>>();
    await Promise.all([findMissingPacks(wf(0), { objectInfo: {} }, lookup, cache), findMissingPacks(wf(6), { objectInfo: {} }, lookup, cache)]);
    expect(maxInFlight()).toBe(4);
  });

  it('rejects when a lookup fails, drops the failed entry from the cache, and a retry looks it up again', async () => {
    const fail = new Set(['RIFE VFI']);
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs, { fail });
    const cache = new Map<string, Promise<Node | null>>();
    await expect(findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache)).rejects.toBeInstanceOf(APIConnectionError);
    await new Promise((r) => setTimeout(r, 5)); // let the other lookups settle
    expect(cache.has('RIFE VFI')).toBe(false);
    expect(calls.nodes).toEqual([]);

    fail.clear();
    const before = calls.nodeForClass.length;
    const result = await findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO }, lookup, cache);
    expect(calls.nodeForClass.slice(before)).toEqual(['RIFE VFI']); // the others were cached
    expect(result.packs.map((p) => p.id)).toEqual(['impact-pack', 'frame-interpolation']);
  });

  it("does not fail a call because another call sharing the cache was aborted", async () => {
    const calls: string[] = [];
    const lookup: PackLookup = {
      nodeForClass: (className, o) =>
        new Promise((resolve, reject) => {
          calls.push(className);
          const timer = setTimeout(() => resolve(className === 'FaceDetailer' ? pack('impact-pack') : null), 30);
          o?.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new APIUserAbortError(undefined, { cause: o.signal?.reason }));
          });
        }),
      nodes: async (ids) => ids.map((id) => pack(id)),
    };
    const cache = new Map<string, Promise<Node | null>>();
    const wf = { '1': { class_type: 'FaceDetailer', inputs: {} } };
    const controller = new AbortController();
    const aborted = findMissingPacks(wf, { objectInfo: {}, signal: controller.signal }, lookup, cache);
    const other = findMissingPacks(wf, { objectInfo: {} }, lookup, cache);
    setTimeout(() => controller.abort(), 5);
    await expect(aborted).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(other).resolves.toMatchObject({ packs: [{ id: 'impact-pack', classTypes: ['FaceDetailer'] }] });
    expect(calls).toEqual(['FaceDetailer', 'FaceDetailer']); // asked again with the surviving call's own signal
  });

  it('rejects with APIUserAbortError and looks nothing up when the signal is already aborted', async () => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs);
    const controller = new AbortController();
    controller.abort();
    await expect(findMissingPacks(API_WORKFLOW, { objectInfo: OBJECT_INFO, signal: controller.signal }, lookup, new Map())).rejects.toBeInstanceOf(APIUserAbortError);
    expect(calls.nodeForClass).toEqual([]);
  });
});

describe('findMissingPacks, UI saved format', () => {
  const UI_WORKFLOW = {
    last_node_id: 12,
    links: [[1, 1, 0, 2, 0, 'MODEL']],
    nodes: [
      { id: 1, type: 'CheckpointLoaderSimple', mode: 0, properties: { cnr_id: 'comfy-core', ver: '0.3.10', 'Node name for S&R': 'CheckpointLoaderSimple' } },
      { id: 2, type: 'FaceDetailer', mode: 0, properties: { cnr_id: 'impact-pack', ver: '8.0.1', 'Node name for S&R': 'FaceDetailer' } },
      { id: 3, type: 'TorchCompileModelAdvanced', mode: 0, properties: { cnr_id: 'comfy-core', ver: 'v0.3.10' } },
      { id: 4, type: 'NewCoreNode', mode: 0, properties: { cnr_id: 'comfy-core', ver: '2a6ab2b3c51f37e8cd6bd6fb2c1fc6a0e5ad1d39' } },
      { id: 5, type: 'SomethingFromGit', mode: 0, properties: { aux_id: 'someone/some-nodes', ver: 'abc1234' } },
      { id: 6, type: 'NotOnGitHub', mode: 0, properties: { aux_id: 'local-pack' } },
      { id: 7, type: 'BypassedCustom', mode: 4, properties: { cnr_id: 'bypassed-pack' } },
      { id: 8, type: 'Note', mode: 0, properties: {}, widgets_values: ['hello'] },
      { id: 9, type: 'Reroute', mode: 0, properties: {} },
      { id: 10, type: 'MarkdownNote', mode: 0, properties: {} },
      { id: 11, type: 'PrimitiveNode', mode: 0, properties: {} },
      { id: 12, type: 'RIFE VFI', mode: 0, properties: {} }, // no cnr_id: looked up
      { id: 13, type: 'SAMLoader (Impact)', mode: 0, properties: { cnr_id: 'impact-pack', ver: '8.0.1' } },
      { id: 14, type: 'GoneFromRegistry', mode: 0, properties: { cnr_id: 'deleted-pack', ver: '1.0.0' } },
      { id: 15, type: 'PlatformCoreNode', mode: 0, properties: { cnr_id: 'platform-core' } },
      { id: 16, type: 'b2c5d1f0-6c1e-4d7a-9c1a-0a1b2c3d4e5f', mode: 0, properties: {} }, // a subgraph instance
      { id: 17, type: 'workflow>MyGroup', mode: 0, properties: {} },
    ],
    definitions: {
      subgraphs: [{ id: 'b2c5d1f0-6c1e-4d7a-9c1a-0a1b2c3d4e5f', nodes: [{ id: 1, type: 'InsideSubgraph', mode: 0, properties: { cnr_id: 'sub-pack', ver: 'v2.0.0' } }] }],
    },
    version: 0.4,
  };
  const PACKS = [pack('impact-pack', '8.1.0'), pack('frame-interpolation', '1.0.7'), pack('sub-pack', '2.1.0')];

  it('prefers cnr_id over a lookup, reports core updates, aux_id packs, and skips bypassed and editor-only nodes', async () => {
    const { lookup, calls } = fakeLookup({ ...REGISTRY.classes, BypassedCustom: 'x', Note: 'x', Reroute: 'x' }, PACKS);
    const result = await findMissingPacks(UI_WORKFLOW, { objectInfo: { CheckpointLoaderSimple: {} } }, lookup, new Map());

    expect(calls.nodeForClass).toEqual(['RIFE VFI']); // only the node without cnr_id nor aux_id
    expect(calls.nodes).toEqual([['impact-pack', 'frame-interpolation', 'deleted-pack', 'sub-pack']]);
    expect(result.packs.map(({ node: _node, ...p }) => p)).toEqual([
      { id: 'impact-pack', classTypes: ['FaceDetailer', 'SAMLoader (Impact)'], version: '8.1.0', downloadUrl: 'https://cdn.example/impact-pack/8.1.0.zip', pinnedVersion: '8.0.1' },
      { id: 'frame-interpolation', classTypes: ['RIFE VFI'], version: '1.0.7', downloadUrl: 'https://cdn.example/frame-interpolation/1.0.7.zip' },
      { id: 'sub-pack', classTypes: ['InsideSubgraph'], version: '2.1.0', downloadUrl: 'https://cdn.example/sub-pack/2.1.0.zip', pinnedVersion: '2.0.0' },
    ]);
    // A cnr_id the registry does not return: its class is unknown.
    expect(result.unknown).toEqual(['GoneFromRegistry']);
    // CheckpointLoaderSimple is installed: not reported although it says comfy-core.
    expect(result.coreUpdate).toEqual([
      { classType: 'TorchCompileModelAdvanced', version: '0.3.10' },
      { classType: 'NewCoreNode', version: '2a6ab2b3c51f37e8cd6bd6fb2c1fc6a0e5ad1d39' },
      { classType: 'PlatformCoreNode', version: undefined },
    ]);
    expect(result.outsideRegistry).toEqual([
      { classType: 'SomethingFromGit', auxId: 'someone/some-nodes', repository: 'https://github.com/someone/some-nodes' },
      { classType: 'NotOnGitHub', auxId: 'local-pack', repository: undefined },
    ]);
  });

  it('makes no lookup when every missing node carries a cnr_id', async () => {
    const { lookup, calls } = fakeLookup({}, PACKS);
    const wf = { nodes: [{ id: 1, type: 'FaceDetailer', mode: 0, properties: { cnr_id: 'impact-pack', ver: '8.0.1' } }], links: [] };
    const result = await findMissingPacks(wf, { objectInfo: {} }, lookup, new Map());
    expect(calls.nodeForClass).toEqual([]);
    expect(calls.nodes).toEqual([['impact-pack']]);
    expect(result.packs.map((p) => [p.id, p.pinnedVersion])).toEqual([['impact-pack', '8.0.1']]);
  });

  it('matches a cnr_id to the pack the registry returns under another case', async () => {
    const { lookup } = fakeLookup({}, [pack('impact-pack')]);
    const mixedCase: PackLookup = { nodeForClass: lookup.nodeForClass, nodes: async (ids) => (await lookup.nodes(ids.map((i) => i.toLowerCase()))) };
    const wf = { nodes: [{ id: 1, type: 'FaceDetailer', mode: 0, properties: { cnr_id: 'Impact-Pack' } }], links: [] };
    const result = await findMissingPacks(wf, { objectInfo: {} }, mixedCase, new Map());
    expect(result.packs.map((p) => [p.id, p.classTypes])).toEqual([['impact-pack', ['FaceDetailer']]]);
  });

  it('merges a cnr_id pack and a looked-up class of the same pack into one entry', async () => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs);
    const wf = {
      nodes: [
        { id: 1, type: 'SAMLoader (Impact)', mode: 0, properties: {} },
        { id: 2, type: 'FaceDetailer', mode: 0, properties: { cnr_id: 'impact-pack', ver: '8.0.0' } },
      ],
      links: [],
    };
    const result = await findMissingPacks(wf, { objectInfo: {} }, lookup, new Map());
    expect(calls.nodes).toEqual([['impact-pack']]);
    expect(result.packs.map(({ node: _n, ...p }) => p)).toEqual([
      { id: 'impact-pack', classTypes: ['SAMLoader (Impact)', 'FaceDetailer'], version: '8.1.0', downloadUrl: 'https://cdn.example/impact-pack/8.1.0.zip', pinnedVersion: '8.0.0' },
    ]);
  });
});

describe('findMissingPacks, invalid input', () => {
  it.each([
    ['null', null],
    ['a string', '{"1":{}}'],
    ['an array', [{ class_type: 'KSampler' }]],
    ['a node without class_type', { '1': { inputs: {} } }],
    ['a node that is not an object', { '1': 'KSampler' }],
    ['UI nodes without a type', { nodes: [{ id: 1, mode: 0 }], links: [] }],
  ])('rejects %s with InvalidArgumentError before any lookup', async (_label, workflow) => {
    const { lookup, calls } = fakeLookup(REGISTRY.classes, REGISTRY.packs);
    const err = await findMissingPacks(workflow, { objectInfo: OBJECT_INFO }, lookup, new Map()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('workflow');
    expect(calls).toEqual({ nodeForClass: [], nodes: [] });
  });

  it('rejects an objectInfo that is not an object', async () => {
    const { lookup, calls } = fakeLookup({}, []);
    const err = await findMissingPacks(API_WORKFLOW, { objectInfo: null as unknown as Record<string, unknown> }, lookup, new Map()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('objectInfo');
    expect(calls.nodeForClass).toEqual([]);
  });
});
