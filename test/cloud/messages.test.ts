// parseMessage: every message type of the spec from real recorded JSON, forward
// compatibility (unknown fields and types pass through), wrong types reported
// as `invalid`, and never a throw, whatever the text.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isMessage, parseMessage, promptIdOf, type CloudMessage } from '../../src/cloud/messages.ts';
import type { NodeOutputs } from '../../src/schemas/cloud.ts';
import { EVENT_TYPES, type ExceptionTypeValue, type EventType } from '../../src/schemas/events.ts';

const FIXTURES = process.env.PLATFORMUI_FIXTURES ?? '/work/shared/fixtures/local-server';
const PID = '8d1b2a49-8b8e-4f69-95c6-231fc8ab70ae';

// Verbatim from the recordings (02, 05 and 07), so these tests run without the shared fixtures.
// `notification` and `execution_interrupted` were not recorded; they follow the spec's table.
const RECORDED: Record<EventType, string> = {
  status: '{"type":"status","data":{"status":{"exec_info":{"queue_remaining":0}},"sid":"80a5bdad-170a-4891-b89d-1702998d1fe4"}}',
  notification: '{"type":"notification","data":{"value":"Model download finished","id":"n1"}}',
  execution_start: `{"type":"execution_start","data":{"prompt_id":"${PID}","timestamp":1795324115016}}`,
  executing: `{"type":"executing","data":{"node":"1","display_node":"1","prompt_id":"${PID}"}}`,
  progress: '{"type":"progress","data":{"value":0,"max":1,"prompt_id":"14be957c-c4b1-4e28-b8b5-cb4c710312bc","node":"6"}}',
  progress_state: `{"type":"progress_state","data":{"prompt_id":"${PID}","nodes":{"1":{"value":1,"max":1,"state":"finished","node_id":"1","prompt_id":"${PID}","display_node_id":"1","parent_node_id":null,"real_node_id":"1"},"2":{"value":0,"max":1,"state":"running","node_id":"2","prompt_id":"${PID}","display_node_id":"2","parent_node_id":null,"real_node_id":"2"}}}}`,
  executed: `{"type":"executed","data":{"node":"2","display_node":"2","output":{"images":[{"filename":"t_00001_.png","subfolder":"","type":"output"}]},"prompt_id":"${PID}"}}`,
  execution_cached: `{"type":"execution_cached","data":{"nodes":["1","2"],"prompt_id":"${PID}","timestamp":1795324115739}}`,
  execution_success: `{"type":"execution_success","data":{"prompt_id":"${PID}","timestamp":1795324115030}}`,
  execution_error:
    '{"type":"execution_error","data":{"prompt_id":"79b9c22c-4592-4f04-b919-f8ceaafc5e00","node_id":"1","node_type":"LoadImage","executed":[],"exception_message":"cannot identify image file \'/tmp/comfyui/input/probe_broken.png\'\\n","exception_type":"PIL.UnidentifiedImageError","traceback":["  File \\"/tmp/comfyui/execution.py\\", line 518, in execute\\n","  File \\"/usr/lib/python3/dist-packages/PIL/Image.py\\", line 3283, in open\\n    raise UnidentifiedImageError(msg)\\n"],"current_inputs":{"image":["probe_broken.png"]},"current_outputs":["1","2"],"timestamp":1795324119497}}',
  execution_interrupted: `{"type":"execution_interrupted","data":{"prompt_id":"${PID}","node_id":"3","node_type":"KSampler","executed":["1","2"],"timestamp":1795324119600}}`,
};

/** Every text message the server sent in the shared recordings. */
function recorded(): string[] {
  const out: string[] = [];
  for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(FIXTURES, f), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line) as { dir?: string; kind?: string; json?: unknown };
      if (rec.dir === 'in' && rec.kind === 'text') out.push(JSON.stringify(rec.json));
    }
  }
  return out;
}

const msg = (type: string, data: unknown) => JSON.stringify({ type, data });

describe('parseMessage: the eleven types of the spec', () => {
  it('has a recorded sample for every type', () => {
    expect(Object.keys(RECORDED).sort()).toEqual([...EVENT_TYPES].sort());
  });

  for (const type of EVENT_TYPES) {
    it(`${type}: typed, data kept as sent`, () => {
      const text = RECORDED[type];
      const m = parseMessage(text);
      expect(m.type).toBe(type);
      expect(m).toEqual(JSON.parse(text));
    });
  }

  it('gives typed access to the members of each type', () => {
    const status = parseMessage(RECORDED.status);
    if (status.type !== 'status') throw new Error(status.type);
    expect(status.data.status.exec_info.queue_remaining).toBe(0);
    expect(status.data.sid).toBe('80a5bdad-170a-4891-b89d-1702998d1fe4');

    const ps = parseMessage(RECORDED.progress_state);
    if (ps.type !== 'progress_state') throw new Error(ps.type);
    expect(ps.data.nodes['2']).toMatchObject({ value: 0, max: 1, state: 'running', parent_node_id: null, real_node_id: '2' });

    const ex = parseMessage(RECORDED.executed);
    if (!isMessage(ex, 'executed')) throw new Error(ex.type);
    expect(ex.data.output?.images?.[0]).toEqual({ filename: 't_00001_.png', subfolder: '', type: 'output' });

    const err = parseMessage(RECORDED.execution_error);
    if (err.type !== 'execution_error') throw new Error(err.type);
    // An exception_type outside the six of the spec is kept, not rejected.
    expect(err.data.exception_type).toBe('PIL.UnidentifiedImageError');
    expect(Array.isArray(err.data.traceback) && err.data.traceback.length).toBe(2);
    expectTypeOf(err.data.exception_type).toEqualTypeOf<ExceptionTypeValue | undefined>();
    const known: ExceptionTypeValue = 'OOMError';
    expect(known).toBe('OOMError');

    const executing = parseMessage(`{"type":"executing","data":{"node":null,"prompt_id":"${PID}"}}`);
    if (executing.type !== 'executing') throw new Error(executing.type);
    expect(executing.data.node).toBeNull();
    expectTypeOf(executing.data.node).toEqualTypeOf<string | null>();
  });

  it('keeps unknown fields at every level', () => {
    const m = parseMessage(msg('executed', { node: '9', output: { images: [{ filename: 'a.png', subfolder: '', type: 'output', extra: 1 }], animated: [true], text: ['hi'] }, prompt_id: 'p', new_field: { x: 1 } }));
    expect(m).toMatchObject({ type: 'executed', data: { new_field: { x: 1 }, output: { animated: [true], text: ['hi'], images: [{ extra: 1 }] } } });
    const s = parseMessage('{"type":"status","data":{"status":{"exec_info":{"queue_remaining":2,"running":1}},"sid":"x"},"top_level_extra":true}');
    expect(s).toMatchObject({ type: 'status', top_level_extra: true, data: { status: { exec_info: { running: 1 } } } });
  });

  it('accepts the tolerant variants: traceback as one string, known exception types, optional members absent', () => {
    const one = parseMessage(msg('execution_error', { prompt_id: 'p', exception_type: 'OOMError', exception_message: 'out of memory', traceback: 'line 1\nline 2' }));
    expect(one).toMatchObject({ type: 'execution_error', data: { exception_type: 'OOMError', traceback: 'line 1\nline 2' } });
    expect(parseMessage(msg('execution_error', { prompt_id: 'p' })).type).toBe('execution_error');
    expect(parseMessage(msg('execution_start', { prompt_id: 'p' })).type).toBe('execution_start');
    expect(parseMessage(msg('execution_cached', { nodes: [], prompt_id: 'p' })).type).toBe('execution_cached');
    expect(parseMessage(msg('progress_state', { prompt_id: 'p', nodes: {} })).type).toBe('progress_state');
    expect(parseMessage(msg('progress_state', { prompt_id: 'p', nodes: { 1: { value: 0, max: 1, state: 'brand_new_state', node_id: '1' } } })).type).toBe('progress_state');
    expect(parseMessage(msg('executed', { node: '1', output: {}, prompt_id: 'p' })).type).toBe('executed');
  });

  it.skipIf(!existsSync(FIXTURES))('every recorded server message is known (or an unknown type), none invalid or malformed', () => {
    const all = recorded();
    expect(all.length).toBeGreaterThan(100);
    const seen = new Set<string>();
    for (const text of all) {
      const m = parseMessage(text);
      expect(m.type, text.slice(0, 200)).not.toMatch(/^(invalid|malformed)$/);
      seen.add(m.type === 'unknown' ? `unknown:${m.rawType}` : m.type);
      expect(m.type === 'unknown' ? m.data : m).toEqual(m.type === 'unknown' ? JSON.parse(text).data : JSON.parse(text));
    }
    expect([...seen].sort()).toEqual(
      ['status', 'execution_start', 'execution_cached', 'progress_state', 'executing', 'executed', 'execution_success', 'progress', 'execution_error', 'unknown:feature_flags'].sort(),
    );
  });
});

describe('parseMessage: forward compatibility and bad input', () => {
  it("a local server's `executing` to a socket that just connected, with no prompt_id, is a known message of no job", () => {
    // Seen from the real local server after a reconnect mid-job: `{ node }` alone, 46 bytes.
    const m = parseMessage('{"type": "executing", "data": {"node": "3"}}');
    expect(m.type).toBe('executing');
    expect(promptIdOf(m)).toBeUndefined();
    expect(parseMessage('{"type": "executing", "data": {"node": 3}}').type).toBe('invalid');
  });

  it('passes unknown types through, typed as unknown', () => {
    const ff = parseMessage('{"type":"feature_flags","data":{"supports_preview_metadata":true,"max_upload_size":104857600}}');
    expect(ff).toEqual({ type: 'unknown', rawType: 'feature_flags', data: { supports_preview_metadata: true, max_upload_size: 104857600 } });
    expect(parseMessage('{"type":"brand_new"}')).toEqual({ type: 'unknown', rawType: 'brand_new', data: undefined });
    // Type names that are members of Object.prototype must not be mistaken for known ones.
    for (const t of ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'unknown', 'invalid', 'malformed']) {
      expect(parseMessage(msg(t, { prompt_id: 'p' }))).toEqual({ type: 'unknown', rawType: t, data: { prompt_id: 'p' } });
    }
  });

  it('reports wrong types of known messages as invalid, with the path, without throwing', () => {
    const data = { value: '3', max: 20, prompt_id: 'p' };
    const m = parseMessage(msg('progress', data));
    expect(m).toMatchObject({ type: 'invalid', rawType: 'progress', data });
    if (m.type !== 'invalid') throw new Error(m.type);
    expect(m.issues[0]).toMatchObject({ code: 'invalid_type', path: ['value'] });
    const cases: [string, unknown, (string | number)[]][] = [
      ['status', { status: { exec_info: { queue_remaining: '0' } } }, ['status', 'exec_info', 'queue_remaining']],
      ['executing', { node: 5, prompt_id: 'p' }, ['node']],
      ['executing', { prompt_id: 'p' }, ['node']],
      ['progress_state', { prompt_id: 'p', nodes: { 1: { value: 0, max: 1, state: 'running', node_id: 1 } } }, ['nodes', '1', 'node_id']],
      ['progress_state', { prompt_id: 'p', nodes: { 1: { value: 0, max: 1, state: 'running', node_id: '1', parent_node_id: 7 } } }, ['nodes', '1', 'parent_node_id']],
      ['executed', { node: '1', output: { images: [{ filename: 3 }] }, prompt_id: 'p' }, ['output', 'images', 0, 'filename']],
      ['executed', { node: '1', output: { video: 'x' }, prompt_id: 'p' }, ['output', 'video']],
      ['execution_cached', { nodes: [1], prompt_id: 'p' }, ['nodes', 0]],
      ['execution_error', { prompt_id: 'p', traceback: 42 }, ['traceback']],
      ['execution_error', { prompt_id: 'p', exception_type: 1 }, ['exception_type']],
      ['execution_success', { prompt_id: 7 }, ['prompt_id']],
      ['notification', { value: null }, ['value']],
      ['execution_interrupted', {}, ['prompt_id']],
    ];
    for (const [type, d, path] of cases) {
      const r = parseMessage(msg(type, d));
      expect(r, `${type} ${JSON.stringify(d)}`).toMatchObject({ type: 'invalid', rawType: type, data: d });
      if (r.type === 'invalid') expect(r.issues.map((i) => i.path)).toContainEqual(path);
    }
  });

  it('executed with output null (a cached node without UI output, as a local server sends it) is a valid executed', () => {
    // The local server's execution.py, cached branch: "output": cached_ui.get("output", None).
    const text = `{"type":"executed","data":{"node":"1","display_node":"1","output":null,"prompt_id":"${PID}"}}`;
    const m = parseMessage(text);
    expect(m).toEqual(JSON.parse(text));
    if (!isMessage(m, 'executed')) throw new Error(m.type);
    expectTypeOf(m.data.output).toEqualTypeOf<NodeOutputs | null>();
    expect(m.data.output).toBeNull();
  });

  it('a known type without an object `data` is invalid', () => {
    for (const data of [undefined, null, 'x', 3, []]) {
      expect(parseMessage(JSON.stringify({ type: 'execution_success', data })).type).toBe('invalid');
    }
  });

  it('reports malformed text as malformed, keeping the raw text', () => {
    for (const raw of ['', 'not json', '{"type":', '[1,2]', 'null', '"status"', '42', '{"data":{}}', '{"type":5,"data":{}}', '{"type":null}']) {
      const m = parseMessage(raw);
      expect(m, raw).toMatchObject({ type: 'malformed', raw });
      if (m.type === 'malformed') expect(typeof m.error).toBe('string');
    }
  });

  it('never throws, whatever the text', () => {
    const envelope = fc.record({ type: fc.oneof(fc.constantFrom(...EVENT_TYPES), fc.string()), data: fc.jsonValue() }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), envelope.map((e) => JSON.stringify(e))), (text) => {
        const m = parseMessage(text);
        expect(['unknown', 'invalid', 'malformed', ...EVENT_TYPES]).toContain(m.type);
        promptIdOf(m);
      }),
      { numRuns: 3000 },
    );
  });

  it('known + valid messages are the parsed object itself; the rest carry what the server sent', () => {
    fc.assert(
      fc.property(fc.constantFrom(...EVENT_TYPES), fc.jsonValue(), (type, data) => {
        const text = msg(type, data);
        const m = parseMessage(text);
        if (m.type === 'invalid') expect(m.data).toEqual(JSON.parse(text).data);
        else expect(m).toEqual(JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('promptIdOf', () => {
  it('returns data.prompt_id of known, unknown and invalid messages', () => {
    expect(promptIdOf(parseMessage(RECORDED.executed))).toBe(PID);
    expect(promptIdOf(parseMessage(msg('future_event', { prompt_id: 'f' })))).toBe('f');
    expect(promptIdOf(parseMessage(msg('progress', { value: 'x', max: 1, prompt_id: 'i' })))).toBe('i');
  });

  it('returns undefined when there is none, or it is not a string', () => {
    expect(promptIdOf(parseMessage(RECORDED.status))).toBeUndefined();
    expect(promptIdOf(parseMessage(RECORDED.notification))).toBeUndefined();
    expect(promptIdOf(parseMessage(msg('future_event', { prompt_id: 5 })))).toBeUndefined();
    expect(promptIdOf(parseMessage(msg('future_event', 'str')))).toBeUndefined();
    expect(promptIdOf(parseMessage('nope'))).toBeUndefined();
  });

  it('narrows the union by type', () => {
    const m: CloudMessage = parseMessage(RECORDED.progress);
    if (m.type === 'progress') expectTypeOf(m.data.value).toEqualTypeOf<number>();
    if (m.type === 'unknown') expectTypeOf(m.data).toEqualTypeOf<unknown>();
    if (m.type === 'invalid') expectTypeOf(m.rawType).toEqualTypeOf<EventType>();
    if (m.type === 'malformed') expectTypeOf(m.raw).toEqualTypeOf<string>();
  });
});
