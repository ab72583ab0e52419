// Outputs of every kind (issue 25): filesOf() over the keys servers and custom nodes send
// (images, video, audio, gifs, 3d, latents, text, animated, …) and over malformed entries;
// what the schemas keep of them; how the command line's summary shows them. Over real
// sockets: test/cloud/jobs-outputs.int.test.ts (emulator, CLI) and test/real-server/outputs-suite.ts.
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { filesOf, type NodeOutputs } from '../../src/index.ts';
import { parseMessage } from '../../src/cloud/messages.ts';
import { createDisplay } from '../../src/cli/display.ts';
import { oneLine, summaryLines, textLines, textsOf } from '../../src/cli/display/render.ts';
import { History, NodeOutputs as NodeOutputsSchema } from '../../src/schemas/cloud.ts';
import * as rules from '../../src/schemas/rules.generated.ts';
import { validate } from '../../src/schemas/validate.ts';

const ref = (filename: string, subfolder = '', type = 'output') => ({ filename, subfolder, type });
/** What a test expects of each file: node, key, name. */
const brief = (outputs: unknown) => filesOf(outputs as Record<string, NodeOutputs>).map((f) => [f.nodeId, f.mediaType, f.filename]);

describe('filesOf', () => {
  it.each<[string, unknown, string[][]]>([
    ['images, as before', { '9': { images: [ref('a.png'), ref('b.png')] } }, [['9', 'images', 'a.png'], ['9', 'images', 'b.png']]],
    ['video and audio', { '3': { video: [ref('v.mp4')] }, '4': { audio: [ref('a.flac', 'audio')] } }, [['3', 'video', 'v.mp4'], ['4', 'audio', 'a.flac']]],
    ['a video pack’s gifs', { '7': { gifs: [{ ...ref('x.gif'), format: 'image/gif', frame_rate: 8, fullpath: '/srv/output/x.gif' }] } }, [['7', 'gifs', 'x.gif']]],
    ['3d and a latent (a real server’s SaveLatent)', { '5': { '3d': [ref('m.glb', 'mesh')] }, '6': { latents: [ref('l.latent', 'latents')] } }, [['5', '3d', 'm.glb'], ['6', 'latents', 'l.latent']]],
    ['an animated image: the flag is not a file', { '2': { images: [ref('anim.webp')], animated: [true] } }, [['2', 'images', 'anim.webp']]],
    ['text is not a file', { '8': { text: ['hello', 'a.png'] } }, []],
    ['Preview3D’s result (a path, nulls) is not a file', { '3': { result: ['x.glb', null, null] } }, []],
    ['keys in the order the node sent them', { '1': { gifs: [ref('g.gif')], images: [ref('i.png')], audio: [ref('a.wav')] } }, [['1', 'gifs', 'g.gif'], ['1', 'images', 'i.png'], ['1', 'audio', 'a.wav']]],
    ['nodes in the order of the outputs (as JSON.parse gives them)', JSON.parse('{"10:2":{"images":[{"filename":"c.png"}]},"9":{"images":[{"filename":"a.png"}]},"10":{"images":[{"filename":"b.png"}]}}'), [['9', 'images', 'a.png'], ['10', 'images', 'b.png'], ['10:2', 'images', 'c.png']]],
    ['a list mixing files and other things: the files', { '4': { custom: [ref('k.png'), 'note', 3, null, { name: 'n' }] } }, [['4', 'custom', 'k.png']]],
    ['only filename is needed', { '4': { images: [{ filename: 'bare.png' }] } }, [['4', 'images', 'bare.png']]],
    ['malformed entries are skipped, never thrown', { '4': { images: [{ filename: 3 }, { filename: 'x.png', subfolder: null }, { filename: 'y.png', type: 7 }, [], 'z.png'], gifs: 'x.gif', weird: { filename: 'o.png' } } }, []],
    ['malformed nodes are skipped', { '1': null, '2': 'text', '3': [ref('in-a-list.png')], '4': 7, '5': { images: [ref('ok.png')] } }, [['5', 'images', 'ok.png']]],
    ['no outputs', {}, []],
    ['null outputs (a record without any)', null, []],
    ['undefined outputs', undefined, []],
  ])('%s', (_name, outputs, expected) => {
    expect(brief(outputs)).toEqual(expected);
  });

  it('keeps every member the server sent, and adds the node and the key', () => {
    const [file] = filesOf({ '7': { gifs: [{ ...ref('x.gif'), format: 'image/gif', frame_rate: 8 }] } } as Record<string, NodeOutputs>);
    expect(file).toEqual({ filename: 'x.gif', subfolder: '', type: 'output', format: 'image/gif', frame_rate: 8, nodeId: '7', mediaType: 'gifs' });
  });

  it('copies: the outputs given are left as they were', () => {
    const outputs = { '1': { images: [ref('a.png')] } };
    const before = structuredClone(outputs);
    filesOf(outputs)[0]!.filename = 'changed.png';
    expect(outputs).toEqual(before);
  });
});

describe('the schemas keep outputs of every kind', () => {
  const output = { images: [ref('a.png')], animated: [true], gifs: [{ ...ref('g.gif'), format: 'image/gif' }], text: ['hi'], '3d': [ref('m.glb')], result: ['x.glb', null], weird: [{ filename: 3 }], flag: 'yes' };

  it('NodeOutputs: every unknown key kept as sent, a malformed one too (both validators)', () => {
    const r = validate(rules.NodeOutputs, output);
    expect(r.ok && r.value).toBe(output);
    expect(z.parse(NodeOutputsSchema, output)).toEqual(output);
  });

  it('a history entry (a local server’s record) with them validates', () => {
    const history = { p1: { prompt: [0, 'p1', {}, {}, []], outputs: { '9': output }, status: { status_str: 'success', completed: true, messages: [] } } };
    expect(validate(rules.History, history).ok).toBe(true);
    expect(z.safeParse(History, history).success).toBe(true);
  });

  it('an executed event with them is an executed event, not an invalid one', () => {
    const e = parseMessage(JSON.stringify({ type: 'executed', data: { node: '9', display_node: '9', output, prompt_id: 'p1' } }));
    expect(e.type).toBe('executed');
    expect(filesOf({ '9': (e as { data: { output: NodeOutputs } }).data.output }).map((f) => f.mediaType)).toEqual(['images', 'gifs', '3d']);
  });

  it('a wrong type under a known key is still an error (images are checked)', () => {
    expect(validate(rules.NodeOutputs, { images: [{ filename: 3 }] }).ok).toBe(false);
  });
});

describe('the command line’s summary', () => {
  const files = [
    { path: 'out/a_00001_.png', bytes: 405, nodeId: '2', mediaType: 'images' },
    { path: 'out/g_00001_.gif', bytes: 43, nodeId: '3', mediaType: 'gifs' },
    { path: 'out/plain.png', bytes: 1 },
  ];

  it('says the key beside a file that is not under images', () => {
    expect(summaryLines(undefined, files, 1000, false, false).slice(1)).toEqual(['  405 B  out/a_00001_.png', '   43 B  out/g_00001_.gif (gifs)', '    1 B  out/plain.png']);
  });

  it('then each text output (every string under a node’s text key), the node by name where the workflow gives one', () => {
    const texts = textsOf({ '4': { text: ['hello\nworld\n!'] }, '5': { text: ['two', 'three'] }, '6': { text: [3], images: [ref('x.png')] }, '7': null });
    expect(textLines({ labels: { '4': { classType: 'PreviewAny', title: 'Say it' } } }, texts, false)).toEqual(['  PreviewAny "Say it" (#4): hello (+2 lines)', '  node #5: two', '  node #5: three']);
  });

  it('plain mode: the text outputs under the summary, named from the workflow even when no event came (a job followed after its end)', () => {
    let text = '';
    const d = createDisplay({ mode: 'plain', out: { write: (s: string) => void (text += s) }, color: false, nodes: { '4': { classType: 'PreviewAny' } } });
    d.finish({ promptId: 'p1', files: [], outputs: { '4': { text: ['hi'] } } as unknown as Record<string, NodeOutputs> });
    expect(text).toBe('Done\n  no output files\n  PreviewAny (#4): hi\n');
  });

  it('a text output is one line: its first, cut to 120 columns, without control characters', () => {
    expect(oneLine('x'.repeat(200))).toBe(`${'x'.repeat(119)}…`);
    expect(oneLine('a\x1b[31mb')).toBe('a [31mb');
    expect(oneLine('')).toBe('');
  });

  it('--json: each file with its node and key, and the outputs whole', () => {
    let text = '';
    const d = createDisplay({ mode: 'json', out: { write: (s: string) => void (text += s) }, color: false });
    const outputs = { '4': { text: ['hello\nworld'] }, '3': { gifs: [ref('g_00001_.gif')] } } as unknown as Record<string, NodeOutputs>;
    d.finish({ promptId: 'p1', files, outputs });
    expect(JSON.parse(text)).toEqual({
      type: 'result',
      promptId: 'p1',
      files: [
        { path: 'out/a_00001_.png', bytes: 405, nodeId: '2', mediaType: 'images' },
        { path: 'out/g_00001_.gif', bytes: 43, nodeId: '3', mediaType: 'gifs' },
        { path: 'out/plain.png', bytes: 1 },
      ],
      outputs,
    });
  });
});
