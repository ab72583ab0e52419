// Review of issue 25: hostile or malformed saved files give typed issues, never a TypeError, a stack overflow or a hang.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ObjectInfo } from '../../src/schemas/cloud.ts';
import { convertEditorWorkflow } from '../../src/workflow/editor.ts';

const SERVER_INFO = `${process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server'}/object_info.json`;
const info = JSON.parse(readFileSync(SERVER_INFO, 'utf8')) as ObjectInfo;
const codes = (saved: unknown) => convertEditorWorkflow(saved, info).issues.map((i) => [i.code, i.nodeId]);

const invert = (id: number, link: number) => ({ id, type: 'ImageInvert', mode: 0, inputs: [{ name: 'image', type: 'IMAGE', link }], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [] }] });
const empty = { id: 1, type: 'EmptyImage', mode: 0, inputs: [], outputs: [{ name: 'IMAGE', type: 'IMAGE', links: [1] }], widgets_values: [8, 8, 1, 0] };

describe('malformed saved files', () => {
  it('a subgraph definition without nodes or links is an empty graph, not a TypeError', () => {
    const saved = { nodes: [{ id: 5, type: 'S', mode: 0 }, empty, invert(2, 1)], links: [[1, 1, 0, 2, 0, 'IMAGE']], definitions: { subgraphs: [{ id: 'S', nodes: 3 }] } };
    const { workflow, issues } = convertEditorWorkflow(saved, info);
    expect(issues).toEqual([]);
    expect(Object.keys(workflow)).toEqual(['1', '2']);
  });

  it('a subgraph that contains itself is refused, naming the instance', () => {
    const saved = { nodes: [{ id: 5, type: 'S', mode: 0, title: 'Loop' }], links: [], definitions: { subgraphs: [{ id: 'S', nodes: [{ id: 1, type: 'S', mode: 0 }], links: [] }] } };
    expect(codes(saved)).toEqual([['unsupported_node', '5:1']]);
  });

  it("a subgraph whose output comes from an instance of itself is refused", () => {
    const def = { id: 'S', nodes: [{ id: 1, type: 'S', mode: 0, inputs: [], outputs: [{ type: 'IMAGE' }] }], links: [{ id: 1, origin_id: 1, origin_slot: 0, target_id: -20, target_slot: 0 }], outputs: [{ linkIds: [1] }] };
    const saved = { nodes: [{ id: 5, type: 'S', mode: 0, inputs: [], outputs: [{ type: 'IMAGE', links: [1] }] }, invert(2, 1)], links: [[1, 5, 0, 2, 0, 'IMAGE']], definitions: { subgraphs: [def] } };
    expect(codes(saved)).toContainEqual(['unsupported_node', '5:1']);
  });

  it('a loop of reroutes is a broken link, not a stack overflow', () => {
    const reroute = (id: number, link: number) => ({ id, type: 'Reroute', mode: 0, inputs: [{ name: '', type: '*', link }], outputs: [{ name: '', type: '*', links: [] }] });
    const saved = { nodes: [reroute(1, 2), reroute(2, 1), invert(3, 3)], links: [[1, 1, 0, 2, 0, '*'], [2, 2, 0, 1, 0, '*'], [3, 1, 0, 3, 0, 'IMAGE']] };
    expect(codes(saved)).toEqual([['broken_link', '3']]);
  });

  it('a long chain of bypassed nodes still resolves', () => {
    const n = 250;
    const nodes: object[] = [empty];
    const links: unknown[][] = [[1, 1, 0, 2, 0, 'IMAGE']];
    for (let i = 2; i < n + 2; i++) {
      nodes.push({ ...invert(i, i - 1), mode: 4 });
      links.push([i, i, 0, i + 1, 0, 'IMAGE']);
    }
    nodes.push(invert(n + 2, n + 1));
    const { workflow, issues } = convertEditorWorkflow({ nodes, links }, info);
    expect(issues).toEqual([]);
    expect(workflow[String(n + 2)]!.inputs.image).toEqual(['1', 0]);
  });

  it.each([[[1, 1]], [[1, 1, 'abc', 2, 0]], [{ id: 1, origin_id: 1, target_id: 2 }], [[1, 1, -1, 2, 0]]])('a link without a valid origin slot (%j) is a broken link', (link) => {
    const saved = { nodes: [empty, invert(2, 1)], links: [link] };
    expect(codes(saved)).toEqual([['broken_link', '2']]);
  });

  it('a dynamic prompt nested very deep is refused, not a stack overflow', () => {
    const saved = { nodes: [{ id: 1, type: 'CLIPTextEncode', mode: 0, inputs: [{ name: 'clip', type: 'CLIP', link: null }], widgets_values: ['{'.repeat(20_000)] }], links: [] };
    expect(codes(saved)).toEqual([['unsupported_node', '1']]);
  });
});
