// Judging a pool's job is synchronous, loading the validator and the editor-format converter is not (issue 34):
// judge() gives no verdict (the job waits) until loadJudging() has brought what the job needs, then judges as before.
import { describe, expect, it } from 'vitest';
import { judge, loadJudging, type Convertible } from '../../../src/cloud/pool/placement.ts';
import type { ObjectInfo } from '../../../src/schemas/cloud.ts';

const info: ObjectInfo = {
  LoadImage: { input: { required: { image: [['cat.png'], { image_upload: true }] } }, output: ['IMAGE', 'MASK'] },
  SaveImage: { input: { required: { images: ['IMAGE'] } }, output: [], output_node: true },
} as unknown as ObjectInfo;
const job = (workflow: Convertible['workflow']): Convertible => ({ workflow, uploaded: new Set(), converted: new Map(), options: {} });
const api = { '1': { class_type: 'LoadImage', inputs: { image: 'cat.png' } }, '2': { class_type: 'Upscale', inputs: { image: ['1', 0] } } };
const editor = { nodes: [{ id: 1, type: 'LoadImage', mode: 0, inputs: [], outputs: [], widgets_values: ['cat.png', 'image'] }], links: [] };

describe('placement: judging waits for what it needs', () => {
  it('no verdict before the validator is here, the same verdict after; the converter only for an editor file', async () => {
    expect(judge(job(api), 'a', info)).toBeUndefined();
    await loadJudging();
    expect(judge(job(api), 'a', info)).toEqual([expect.stringContaining('no node class "Upscale"')]);
    // The validator alone does not convert an editor file: still no verdict until the converter is here.
    expect(judge(job(editor), 'a', info)).toBeUndefined();
    await loadJudging(editor);
    expect(loadJudging(editor)).toBeUndefined();
    expect(judge(job(editor), 'a', info)).toEqual([]);
  });

  it("a server whose nodes are unknown needs neither: placed by load, an editor file refused there", () => {
    expect(judge(job(api), 'v2', 'unknown')).toEqual([]);
    expect(judge(job(editor), 'v2', 'unknown')).toEqual([expect.stringContaining("a workflow in the editor's format needs them")]);
  });
});
