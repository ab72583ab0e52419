// A Comfy API v2 job's event stream as the follower's socket (src/cloud/v2/stream.ts) and the
// translation of its frames (src/cloud/v2/events.ts): driven by a scripted `open()` whose streams
// the test writes, and a manual clock (time moves only when the test moves it: no sleeping).
// The same stream over a real HTTP server: test/cloud/v2/stream.int.test.ts.
import { describe, expect, it } from 'vitest';
import { APIConnectionError, APIError } from '../../../src/errors.ts';
import { isJobStatusEvent, jobSent, translate } from '../../../src/cloud/v2/events.ts';
import { JobEventStream, STREAM_AFTER_END_MS, STREAM_MOVES, STREAM_STABLE_AFTER_MS, type StreamInput, type StreamPhase } from '../../../src/cloud/v2/stream.ts';
import type { BinaryEvent, SocketEvent } from '../../../src/cloud/socket.ts';
import { JobFollower, type FollowSocket } from '../../../src/cloud/follow/follower.ts';
import type { JobBackend, JobRecord, JobStatusResult } from '../../../src/cloud/jobs.ts';
import { recorder } from '../../helpers/log-recorder.ts';
import { ManualClock, settle } from '../../helpers/manual-clock.ts';

const enc = new TextEncoder();
const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** One stream the test writes to. */
interface Conn {
  id: string;
  at: number;
  signal: AbortSignal;
  push(text: string): void;
  end(): void;
  fail(): void;
}

const apiError = (status: number, code?: string, retryAfter?: string) =>
  Object.assign(new APIError({ status, method: 'GET', url: 'http://x/api/v2/jobs/j1/events', body: code ? { error: { code, message: code } } : '', headers: new Headers(retryAfter ? { 'retry-after': retryAfter } : {}) }), code ? { code } : {});

/** A scripted server: `answer` decides each request's fate (a stream by default). */
function server(clock: ManualClock, answer: (n: number) => 'stream' | 'hang' | 'end' | Error | Response = () => 'stream') {
  const conns: Conn[] = [];
  const requests: number[] = [];
  const open = async (id: string, signal: AbortSignal): Promise<Response> => {
    requests.push(clock.now());
    const a = answer(requests.length);
    if (a instanceof Error) throw a;
    if (a instanceof Response) return a;
    if (a === 'hang') return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    let c!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (ctl) => void (c = ctl) });
    const conn: Conn = {
      id,
      at: clock.now(),
      signal,
      push: (t) => c.enqueue(enc.encode(t)),
      end: () => c.close(),
      fail: () => c.error(new TypeError('terminated')),
    };
    signal.addEventListener('abort', () => {
      try {
        c.error(new DOMException('aborted', 'AbortError'));
      } catch {
        // closed already
      }
    });
    conns.push(conn);
    if (a === 'end') c.close();
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return { open, conns, requests, last: () => conns[conns.length - 1]! };
}

function setup(answer?: Parameters<typeof server>[1], opts: { random?: number; defer?: string } = {}) {
  const clock = new ManualClock();
  const srv = server(clock, answer);
  const log = recorder();
  const stream = new JobEventStream({ open: srv.open, log: log.logger, clock, random: () => opts.random ?? 0.5, ...(opts.defer ? { defer: opts.defer } : {}) });
  const seen: string[] = [];
  for (const k of ['open', 'reconnecting', 'close'] as const) stream.on(k, () => seen.push(k));
  const events: SocketEvent[] = [];
  let lost = 0;
  const sub = (id = 'j1') => stream.subscribe(id, (e) => events.push(e), { onLost: () => lost++ });
  return { clock, srv, log, stream, seen, events, sub, lost: () => lost };
}

describe('the move table', () => {
  const inputs: StreamInput[] = ['follow', 'unfollow', 'opened', 'failed', 'dropped', 'finished', 'timer', 'refused', 'close'];
  // One row per phase, one column per input above; '·' changes nothing.
  const table: Record<StreamPhase, string[]> = {
    idle: ['connecting', '·', '·', '·', '·', '·', '·', '·', 'closed'],
    connecting: ['·', 'idle', 'open', 'waiting', '·', '·', '·', 'closed', 'closed'],
    open: ['·', 'idle', '·', '·', 'waiting', 'ended', '·', 'closed', 'closed'],
    waiting: ['·', 'idle', '·', '·', '·', '·', 'connecting', '·', 'closed'],
    ended: ['connecting', 'idle', '·', '·', '·', '·', '·', '·', 'closed'],
    closed: ['·', '·', '·', '·', '·', '·', '·', '·', '·'],
  };
  const rows = Object.entries(table).flatMap(([phase, targets]) => inputs.map((input, i) => [phase as StreamPhase, input, targets[i]] as const));
  it.each(rows)('%s + %s → %s', (phase, input, target) => {
    expect(STREAM_MOVES[phase][input] ?? '·').toBe(target);
  });
});

describe('translate: v2 frames as socket events', () => {
  it('status running → execution_start once, and job_status every time', () => {
    const job = jobSent('j1');
    const first = translate(job, 'status', '{"status":"running"}');
    expect(first.map((e) => e.type)).toEqual(['execution_start', 'unknown']);
    expect(first[0]).toEqual({ type: 'execution_start', data: { prompt_id: 'j1' } });
    expect(translate(job, 'status', '{"status":"running"}').map((e) => e.type)).toEqual(['unknown']);
  });

  it.each([
    ['queued', false],
    ['running', false],
    ['canceling', false],
    ['succeeded', true],
    ['failed', true],
    ['canceled', true],
    ['expired', true],
  ])('status %s → job_status, terminal %s (never execution_success or execution_error)', (status, terminal) => {
    const job = jobSent('j1');
    const events = translate(job, 'status', JSON.stringify({ status, queue_position: status === 'queued' ? 2 : undefined }));
    const e = events[events.length - 1]!;
    expect(isJobStatusEvent(e)).toBe(true);
    expect(e).toMatchObject({ type: 'unknown', rawType: 'job_status', data: { prompt_id: 'j1', status, terminal, ...(status === 'queued' ? { queue_position: 2 } : {}) } });
    expect(job.terminal).toBe(terminal);
  });

  it('progress: nodes done of nodes when both > 0, else percent of value; never back for the user', () => {
    const job = jobSent('j1');
    const p = (d: unknown) => translate(job, 'progress', JSON.stringify(d))[0];
    expect(p({ value: 0, nodes_done: 0, nodes_total: 0 })).toEqual({ type: 'progress', data: { value: 0, max: 100, node: null, prompt_id: 'j1' } });
    expect(p({ value: 0.256, nodes_done: 0, nodes_total: 0, current_node: '3' })).toEqual({ type: 'progress', data: { value: 26, max: 100, node: '3', prompt_id: 'j1' } });
    expect(p({ value: 1, nodes_done: 1, nodes_total: 2 })).toMatchObject({ data: { value: 1, max: 2 } });
    expect(p({ value: 1, nodes_done: 2, nodes_total: 2 })).toMatchObject({ data: { value: 2, max: 2 } });
    // The real server's native progress frames restart at 0 (§9.4).
    expect(p({ value: 0, nodes_done: 0, nodes_total: 0, current_node: '3', step: 0, steps: 1 })).toEqual({ type: 'progress', data: { value: 2, max: 2, node: '3', prompt_id: 'j1' } });
    expect(p({ value: 1, nodes_done: 3, nodes_total: 4 })).toMatchObject({ data: { value: 2, max: 2 } }); // 0.75 < 1
  });

  it('preview → a binary preview_image_with_metadata event with the decoded bytes and their MIME type', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
    const b64 = btoa(String.fromCharCode(...png));
    const [e] = translate(jobSent('j1'), 'preview', JSON.stringify({ node_id: '3', content_type: 'image/png', data_base64: b64 })) as [BinaryEvent];
    expect(e.type).toBe('binary');
    expect(e.promptId).toBe('j1');
    expect(e.frame).toMatchObject({ type: 'preview_image_with_metadata', eventType: 4, metadata: { node_id: '3', prompt_id: 'j1', image_type: 'image/png' }, nodeId: '3', promptId: 'j1', mime: 'image/png' });
    expect([...(e.frame as { image: Uint8Array }).image]).toEqual([...png]);
  });

  it('output → executed with the file as fileOfOutput() makes it, after the terminal status too', () => {
    const job = jobSent('j1');
    translate(job, 'status', '{"status":"succeeded"}');
    const out = { node_id: '9', name: 'a.png', type: 'image', content_type: 'image/png', id: 'tok', url: 'http://x/a', size_bytes: 0, hash: null };
    expect(translate(job, 'output', JSON.stringify(out))).toEqual([
      { type: 'executed', data: { node: '9', output: { images: [{ filename: 'a.png', subfolder: '', type: 'output', output_type: 'image', node_id: '9', name: 'a.png', content_type: 'image/png', id: 'tok', url: 'http://x/a', size_bytes: 0, hash: null }] }, prompt_id: 'j1' } },
    ]);
  });

  it('log, error and unknown frames pass through as unknown; bad data becomes malformed, never a throw', () => {
    const job = jobSent('j1');
    expect(translate(job, 'log', '{"level":"error","message":"boom"}')).toEqual([{ type: 'unknown', rawType: 'log', data: { level: 'error', message: 'boom', prompt_id: 'j1' } }]);
    expect(translate(job, 'brand_new', '{}')).toEqual([{ type: 'unknown', rawType: 'brand_new', data: { prompt_id: 'j1' } }]);
    for (const [event, data] of [['status', '{"status":'], ['status', '"running"'], ['status', '{"status":1}'], ['progress', '{"value":"x"}'], ['preview', '{"data_base64":"%%%"}'], ['output', 'nope']]) {
      expect(translate(job, event!, data!)[0]?.type).toBe('malformed');
    }
    expect(translate(job, 'output', '{"name":"x"}')[0]).toMatchObject({ type: 'unknown', rawType: 'output' });
  });
});

describe('JobEventStream', () => {
  it('starts reconnecting (never connecting), opens nothing for the deferred id, opens the job it is given', async () => {
    const t = setup(undefined, { defer: 'key-1' });
    expect(t.stream.state).toBe('reconnecting');
    expect(t.stream.clientId).toBeUndefined();
    const offKey = t.stream.subscribe('key-1', () => undefined);
    await settle();
    expect(t.srv.requests).toHaveLength(0);
    offKey();
    t.sub('j1');
    await settle();
    expect(t.srv.conns.map((c) => c.id)).toEqual(['j1']);
    expect(t.stream.state).toBe('open');
    expect(t.seen).toEqual(['open']);
  });

  it('delivers the job events in order, an output after the terminal status included, then ends without reconnecting', async () => {
    const t = setup();
    t.sub();
    await settle();
    const c = t.srv.last();
    c.push(frame('status', { status: 'running' }) + ': keepalive\n\n' + frame('progress', { value: 1, nodes_done: 1, nodes_total: 1 }));
    c.push(frame('status', { status: 'succeeded' }));
    c.push(frame('output', { node_id: '9', name: 'a.png', type: 'image' }));
    c.end();
    await t.clock.advance(60_000);
    expect(t.events.map((e) => (e.type === 'unknown' ? e.rawType : e.type))).toEqual(['execution_start', 'job_status', 'progress', 'job_status', 'executed']);
    expect(t.stream.phase).toBe('ended');
    expect(t.stream.state).toBe('closed');
    expect(t.seen).toEqual(['open', 'close']);
    expect(t.srv.requests).toHaveLength(1);
    expect(t.lost()).toBe(0);
  });

  it(`after the terminal status, a stream the server keeps open is read ${STREAM_AFTER_END_MS} ms more, then let go`, async () => {
    const t = setup();
    t.sub();
    await settle();
    t.srv.last().push(frame('status', { status: 'failed' }));
    await t.clock.advance(STREAM_AFTER_END_MS - 1);
    t.srv.last().push(frame('output', { node_id: '9', name: 'a.png', type: 'image' }));
    await t.clock.advance(1);
    expect(t.events.map((e) => e.type)).toEqual(['unknown', 'executed']);
    expect(t.srv.last().signal.aborted).toBe(true);
    expect(t.stream.phase).toBe('ended');
  });

  it('a drop before the end: reconnecting, onLost, a backoff, then the same job again, progress still monotonic and execution_start not repeated', async () => {
    const t = setup();
    t.sub();
    await settle();
    t.srv.last().push(frame('status', { status: 'running' }) + frame('progress', { value: 1, nodes_done: 3, nodes_total: 4 }));
    await t.clock.advance(STREAM_STABLE_AFTER_MS);
    t.srv.last().fail();
    await settle();
    expect(t.stream.state).toBe('reconnecting');
    expect(t.lost()).toBe(1);
    // A stream that lasted: the first step again (250–500 ms; random 0.5 → 375).
    expect(t.log.of('debug').some((l) => /reconnecting in 375 ms \(attempt 1\): the stream failed/.test(l.message))).toBe(true);
    await t.clock.advance(374);
    expect(t.srv.requests).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.srv.requests).toHaveLength(2);
    expect(t.stream.state).toBe('open');
    t.srv.last().push(frame('status', { status: 'running' }) + frame('progress', { value: 0, nodes_done: 0, nodes_total: 0 }));
    await settle();
    expect(t.events.map((e) => (e.type === 'progress' ? `${e.data.value}/${e.data.max}` : e.type === 'unknown' ? e.rawType : e.type))).toEqual(['execution_start', 'job_status', '3/4', 'job_status', '3/4']);
    expect(t.seen).toEqual(['open', 'reconnecting', 'open']);
  });

  it('an idle stream (no byte for 45 s; comments count) reconnects; the old one is aborted', async () => {
    const t = setup();
    t.sub();
    await settle();
    for (let i = 0; i < 8; i++) {
      await t.clock.advance(15_000);
      t.srv.last().push(': keepalive\n\n');
    }
    expect(t.srv.requests).toHaveLength(1);
    await t.clock.advance(44_999);
    expect(t.stream.state).toBe('open');
    await t.clock.advance(1);
    expect(t.srv.conns[0]!.signal.aborted).toBe(true);
    expect(t.stream.state).toBe('reconnecting');
    expect(t.log.of('debug').some((l) => /no byte for 45000 ms/.test(l.message))).toBe(true);
    await t.clock.advance(1000);
    expect(t.srv.requests).toHaveLength(2);
  });

  it('a request that never answers is given up after 45 s and tried again', async () => {
    const t = setup((n) => (n === 1 ? 'hang' : 'stream'));
    t.sub();
    await t.clock.advance(45_000);
    expect(t.stream.state).toBe('reconnecting');
    await t.clock.advance(1000);
    expect(t.srv.requests).toHaveLength(2);
    expect(t.stream.state).toBe('open');
  });

  it('429 too_many_streams: the next try waits Retry-After when it is longer than the backoff', async () => {
    const t = setup((n) => (n === 1 ? apiError(429, 'too_many_streams', '5') : 'stream'));
    t.sub();
    await settle();
    expect(t.stream.state).toBe('reconnecting');
    await t.clock.advance(4999);
    expect(t.srv.requests).toHaveLength(1);
    await t.clock.advance(1);
    expect(t.srv.requests).toHaveLength(2);
    expect(t.stream.state).toBe('open');
    expect(t.log.of('warn')).toEqual([]);
  });

  it.each([
    [501, 'not_implemented'],
    [404, 'not_found'],
    [401, undefined],
    [403, undefined],
    [400, 'invalid_request'],
  ])('%s → closed for good, warned once, never tried again', async (status, code) => {
    const t = setup(() => apiError(status, code));
    t.sub();
    await t.clock.advance(600_000);
    expect(t.srv.requests).toHaveLength(1);
    expect(t.stream.state).toBe('closed');
    expect(t.seen).toEqual(['close']);
    expect(t.log.of('warn')).toHaveLength(1);
    expect(t.log.of('warn')[0]!.message).toMatch(/no event stream .*following the job by polling/);
    t.sub('j2'); // a closed stream opens nothing more
    await settle();
    expect(t.srv.requests).toHaveLength(1);
  });

  it('an answer that is not an event stream → closed for good', async () => {
    const t = setup(() => new Response('<html>', { headers: { 'content-type': 'text/html' } }));
    t.sub();
    await t.clock.advance(60_000);
    expect(t.srv.requests).toHaveLength(1);
    expect(t.stream.state).toBe('closed');
  });

  it.each([
    ['refuses the connection', () => new APIConnectionError('GET', 'http://x/api/v2/jobs/j1/events', 'Connection refused', 'ECONNREFUSED')],
    ['answers 503', () => apiError(503)],
    ['answers 429 with no Retry-After', () => apiError(429, 'too_many_streams')],
    ['accepts and ends the stream at once', () => 'end' as const],
  ])('the bound: at most 6 connects in any 10 s against a server that %s (shortest jitter)', async (_name, refuse) => {
    const t = setup(refuse as never, { random: 0 });
    t.sub();
    await t.clock.advance(120_000);
    const at = t.srv.requests;
    expect(at.length).toBeGreaterThan(10); // it keeps trying, at the capped pace
    for (const start of at) expect(at.filter((x) => x >= start && x < start + 10_000).length).toBeLessThanOrEqual(6);
    expect(at.filter((x) => x < at[0]! + 10_000)).toHaveLength(6);
    // The capped step: no faster than every 5 s (half of 10 s) once grown.
    expect(at[at.length - 1]! - at[at.length - 2]!).toBeGreaterThanOrEqual(5000);
  });

  it('unsubscribing the last handler aborts the stream (the server’s slot is released) and nothing reconnects', async () => {
    const t = setup();
    const off1 = t.sub();
    const off2 = t.stream.subscribe('j1', () => undefined);
    await settle();
    off1();
    expect(t.srv.last().signal.aborted).toBe(false);
    off2();
    expect(t.srv.last().signal.aborted).toBe(true);
    expect(t.stream.phase).toBe('idle');
    await t.clock.advance(120_000);
    expect(t.srv.requests).toHaveLength(1);
  });

  it('moving from the deferred key to the server’s id: one stream, for the id', async () => {
    const t = setup(undefined, { defer: 'key-1' });
    const offKey = t.sub('key-1');
    await settle();
    t.sub('job-9');
    offKey();
    await settle();
    expect(t.srv.conns.map((c) => c.id)).toEqual(['job-9']);
    t.srv.last().push(frame('status', { status: 'queued', queue_position: 1 }));
    await settle();
    expect(t.events).toEqual([{ type: 'unknown', rawType: 'job_status', data: { prompt_id: 'job-9', status: 'queued', terminal: false, queue_position: 1 } }]);
  });

  it('a handler that throws does not stop the stream or the other handlers; it is logged, never thrown', async () => {
    const t = setup();
    t.stream.subscribe('j1', () => {
      throw new Error('user bug');
    });
    t.sub();
    t.stream.on('open', () => {
      throw new Error('listener bug');
    });
    await settle();
    t.srv.last().push(frame('status', { status: 'running' }) + 'event: status\ndata: {oops\n\n');
    await settle();
    expect(t.events.map((e) => e.type)).toEqual(['execution_start', 'unknown', 'malformed']);
    expect(t.log.of('error').map((l) => l.message)).toEqual([expect.stringMatching(/listener threw/), expect.stringMatching(/listener threw/), expect.stringMatching(/listener threw/), expect.stringMatching(/listener threw/)]);
    expect(t.log.of('warn').map((l) => l.message)).toEqual([expect.stringMatching(/malformed status event/)]);
    expect(JSON.stringify(t.log.lines)).not.toContain('oops');
    expect(t.stream.state).toBe('open');
  });

  it('close() ends it for good: aborted, `close` once, no reconnect', async () => {
    const t = setup();
    t.sub();
    await settle();
    t.stream.close();
    expect(t.srv.last().signal.aborted).toBe(true);
    expect(t.stream.state).toBe('closed');
    await t.clock.advance(120_000);
    expect(t.srv.requests).toHaveLength(1);
    expect(t.seen).toEqual(['open', 'close']);
    expect(t.lost()).toBe(0);
  });
});

describe('JobEventStream under the job follower as it is today', () => {
  it('a run listens under its key, streams the id the server chose, ends by the poll, and lets the stream go', async () => {
    const t = setup(undefined, { defer: 'key-1' });
    let done = false;
    const calls: string[] = [];
    const jobs: JobBackend = {
      submit: async (_w, options) => (calls.push(`submit ${options.promptId}`), { prompt_id: 'srv-1' }),
      getJobStatus: async (id) => (calls.push(`status ${id}`), (done ? { status: 'succeeded', phase: 'completed', outputs: { '9': { images: [{ filename: 'a.png', subfolder: '', type: 'output' }] } } } : { status: 'running', phase: 'running' }) as unknown as JobStatusResult),
      getJob: async (id) => ({ id, status: 'succeeded', phase: 'completed', outputs: {} }) as unknown as JobRecord,
      stopJob: async () => undefined,
    };
    const progress: string[] = [];
    // clientId: the one member FollowSocket types as a string (see the report).
    const follower = new JobFollower(jobs, t.stream as unknown as FollowSocket, 'key-1', { pollInterval: 1000, onProgress: (p) => void progress.push(`${p.value}/${p.max}`) }, t.clock, true);
    const outcome = follower.submit({ '9': { class_type: 'SaveImage', inputs: {} } });
    await t.clock.advance(0);
    expect(calls[0]).toBe('submit key-1');
    expect(t.srv.conns.map((c) => c.id)).toEqual(['srv-1']);
    expect(follower.state).toBe('live');
    t.srv.last().push(frame('status', { status: 'running' }) + frame('progress', { value: 1, nodes_done: 1, nodes_total: 1 }) + frame('progress', { value: 0, nodes_done: 0, nodes_total: 0 }));
    await settle();
    done = true;
    t.srv.last().push(frame('status', { status: 'succeeded' }));
    t.srv.last().end();
    await t.clock.advance(100);
    const result = await outcome;
    expect(result).toMatchObject({ promptId: 'srv-1', files: [{ filename: 'a.png' }] });
    expect(progress).toEqual(['1/1', '1/1']);
    expect(t.srv.requests).toHaveLength(1);
    expect(t.stream.phase).toBe('idle');
  });
});
