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
});
