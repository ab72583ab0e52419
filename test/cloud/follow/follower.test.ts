// The job follower as a state machine: its table, and the follower driven through it by a
// scripted socket, a scripted backend and a manual clock (no sleeping: time moves when the
// test moves it). The same follower over real sockets: test/cloud/follow/follower.int.test.ts.
import { describe, expect, it } from 'vitest';
import { APIConnectionError, JobTimeoutError, RateLimitError, ServerLostError, type JobBackend, type JobRecord, type JobStatusResult } from '../../../src/index.ts';
import { downPollGap, JobFollower, type FollowSocket } from '../../../src/cloud/follow/follower.ts';
import { FOLLOWER_STATES, nextState, type FollowerStatesListener, type FollowInput, type FollowState, type JobEnding } from '../../../src/cloud/follow/states.ts';
import { followJob, runJob } from '../../../src/cloud/run.ts';
import type { SocketEvent } from '../../../src/cloud/socket.ts';
import { ManualClock, settle } from '../../helpers/manual-clock.ts';

describe('the transition table', () => {
  const inputs: Record<string, FollowInput> = {
    'accepted (socket open)': { type: 'accepted', socketOpen: true },
    'accepted (socket down)': { type: 'accepted', socketOpen: false },
    socket_open: { type: 'socket_open' },
    socket_down: { type: 'socket_down' },
    ended: { type: 'ended' },
    gave_up: { type: 'gave_up' },
    done: { type: 'done' },
  };
  // One row per state, one column per input above; '·' changes nothing.
  const table: Record<FollowState, string[]> = {
    submitting: ['live', 'polling', '·', '·', '·', 'settled', '·'],
    live: ['·', '·', '·', 'polling', 'settling', 'settled', '·'],
    polling: ['·', '·', 'live', '·', 'settling', 'settled', '·'],
    settling: ['·', '·', '·', '·', '·', '·', 'settled'],
    settled: ['·', '·', '·', '·', '·', '·', '·'],
  };
  const rows = Object.entries(table).flatMap(([state, targets]) => Object.entries(inputs).map(([name, input], i) => [state as FollowState, name, input, targets[i]] as const));
  it.each(rows)('%s + %s → %s', (state, _name, input, target) => {
    expect(nextState(state, input) ?? '·').toBe(target);
  });
});

describe('downPollGap', () => {
  it.each([
    [undefined, 1000, 0, 25],
    [2, 1000, 0, 25],
    [10, 1000, 0, 40],
    [120, 1000, 0, 480],
    [400, 1000, 0, 1000],
    [2, 1000, 3, 200],
    [2, 1000, 10, 1000],
    [2, 5, 0, 5],
  ])('round trip %s ms, pollInterval %s, %s failures → %s ms', (rtt, interval, failures, gap) => {
    expect(downPollGap(rtt, interval, failures)).toBe(gap);
  });
});

/** The part of a CloudSocket a follower uses, moved by the test. */
class ScriptSocket {
  clientId = 'client-1';
  state: 'connecting' | 'open' | 'reconnecting' | 'closed' = 'open';
  readonly subscribed: string[] = [];
  #listeners = new Map<string, Set<(e: unknown) => void>>();
  #subs = new Map<string, (e: SocketEvent) => void>();
  #held = new Map<string, SocketEvent[]>();

  on(type: string, handler: (e: unknown) => void): () => void {
    const set = this.#listeners.get(type) ?? new Set();
    this.#listeners.set(type, set.add(handler));
    return () => void set.delete(handler);
  }
  subscribe(promptId: string, handler: (e: SocketEvent) => void): () => void {
    this.subscribed.push(promptId);
    this.#subs.set(promptId, handler);
    for (const e of this.#held.get(promptId) ?? []) handler(e);
    this.#held.delete(promptId);
    return () => void this.#subs.delete(promptId);
  }
  /** A message of a job: to its subscriber, else held (as the socket holds early events). */
  push(promptId: string, type: string, data: Record<string, unknown> = {}): void {
    const event = { type, data: { prompt_id: promptId, ...data } } as unknown as SocketEvent;
    const sub = this.#subs.get(promptId);
    if (sub) sub(event);
    else this.#held.set(promptId, [...(this.#held.get(promptId) ?? []), event]);
  }
  open(): void {
    this.state = 'open';
    this.#emit('open', { reconnect: true });
  }
  drop(): void {
    this.state = 'reconnecting';
    this.#emit('reconnecting', { attempt: 1, delay: 60_000, code: 1006 });
  }
  /** Listeners and subscriptions still held. */
  get listenerCount(): number {
    let n = this.#subs.size;
    for (const s of this.#listeners.values()) n += s.size;
    return n;
  }
  #emit(type: string, e: unknown): void {
    for (const h of this.#listeners.get(type) ?? []) h(e);
  }
}

const file = (name: string) => ({ images: [{ filename: name, subfolder: '', type: 'output' }] });

/**
 * A backend whose answers the test scripts: `status()` for each poll (or an error to throw),
 * each answer taking `rtt` ms of the manual clock. Every call is logged with its time.
 */
function backend(clock: ManualClock, script: { status?: () => Partial<JobStatusResult> | Error; rtt?: number; submit?: (options: { promptId?: string }) => Promise<{ prompt_id: string }> } = {}) {
  const calls: Array<{ call: string; at: number; options?: unknown }> = [];
  const after = <T>(ms: number, f: () => T) => new Promise<T>((resolve, reject) => clock.setTimeout(() => {
    try {
      resolve(f());
    } catch (err) {
      reject(err);
    }
  }, ms));
  const jobs: JobBackend = {
    submit: async (_w, options) => (calls.push({ call: 'submit', at: clock.now(), options }), script.submit ? script.submit(options) : { prompt_id: options.promptId! }),
    getJobStatus: () => {
      calls.push({ call: 'status', at: clock.now() });
      return after(script.rtt ?? 0, () => {
        const s = script.status?.() ?? {};
        if (s instanceof Error) throw s;
        return { phase: 'running', status: 'executing', ...s } as JobStatusResult;
      });
    },
    getJob: async (promptId) => (calls.push({ call: 'record', at: clock.now() }), { id: promptId, status: 'completed', phase: 'completed', outputs: { '9': file('a.png') } }) as JobRecord,
    stopJob: async (promptId) => void calls.push({ call: `stop ${promptId}`, at: clock.now() }),
  };
  const polls = () => calls.filter((c) => c.call === 'status').map((c) => c.at);
  return { jobs, calls, polls };
}

/** A follower of a job whose submission the backend accepts, on a script socket and a manual clock. */
function start(opts: Parameters<typeof runJob>[3] = {}, script: Parameters<typeof backend>[1] = {}) {
  const clock = new ManualClock();
  const socket = new ScriptSocket();
  const b = backend(clock, script);
  const follower = new JobFollower(b.jobs, socket as unknown as FollowSocket, opts.promptId ?? 'job-1', { stopOnAbort: true, ...opts }, clock, true);
  const outcome = follower.submit({ '9': { class_type: 'SaveImage', inputs: {} } }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { clock, socket, follower, outcome, ...b };
}
const t0 = 1_000_000;

describe('the follower, driven through its states', () => {
  it('moves through the states as the socket and the job say, and leaves nothing behind', async () => {
    let done = false;
    const { clock, socket, follower, outcome, polls } = start({ pollInterval: 1000 }, { status: () => (done ? { status: 'success', phase: 'completed' } : {}), rtt: 2 });
    const seen: Array<[string, FollowState]> = [];
    const step = async (what: string, act: () => void | Promise<void>) => {
      await act();
      await settle();
      seen.push([what, follower.state]);
    };
    await step('submitted', () => undefined);
    await step('socket drops', () => socket.drop());
    await step('socket drops again', () => socket.drop());
    await step('socket back', () => socket.open());
    await step('socket drops', () => socket.drop());
    await step('job ends, found by a poll', async () => {
      done = true;
      await clock.advance(100);
    });
    expect(seen).toEqual([
      ['submitted', 'live'],
      ['socket drops', 'polling'],
      ['socket drops again', 'polling'],
      ['socket back', 'live'],
      ['socket drops', 'polling'],
      ['job ends, found by a poll', 'settled'],
    ]);
    expect((await outcome).result?.files).toHaveLength(1);
    expect(polls()[0]).toBe(t0); // the socket back: a read at once
    expect(socket.listenerCount).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('an event of the job during its submission waits for onSubmitted, then counts: the socket heard the whole job', async () => {
    const clock = new ManualClock();
    const socket = new ScriptSocket();
    const order: string[] = [];
    let answer!: () => void;
    const b = backend(clock, {
      submit: (options) =>
        new Promise((resolve) => {
          // The job starts and ends before the answer to its submission comes.
          socket.push(options.promptId!, 'execution_start');
          socket.push(options.promptId!, 'executed', { node: '9', output: file('a.png') });
          socket.push(options.promptId!, 'execution_success');
          answer = () => resolve({ prompt_id: options.promptId! });
        }),
    });
    const run = runJob(b.jobs, socket as unknown as FollowSocket, {}, { promptId: 'mine', onSubmitted: (id) => void order.push(`submitted ${id}`), onEvent: (e) => void order.push(e.type) }, clock);
    await settle();
    expect(socket.subscribed).toEqual(['mine']); // before the request went out
    expect(order).toEqual([]);
    answer();
    const result = await run;
    expect(order).toEqual(['submitted mine', 'execution_start', 'executed', 'execution_success']);
    expect(result).toMatchObject({ promptId: 'mine', files: [{ filename: 'a.png' }] });
    expect(b.calls.map((c) => c.call)).toEqual(['submit']); // no poll, no record: the socket heard it all
  });

  it('more early events than the socket would hold: the record is read, as when the socket drops', async () => {
    const { socket, outcome, calls } = start({}, {
      submit: async (options) => {
        socket.push(options.promptId!, 'execution_start');
        for (let i = 0; i < 2000; i++) socket.push(options.promptId!, 'progress', { value: i, max: 2000 });
        socket.push(options.promptId!, 'executed', { node: '9', output: file('a.png') });
        return { prompt_id: options.promptId! };
      },
    });
    await settle();
    socket.push('job-1', 'execution_success');
    expect((await outcome).result?.files).toHaveLength(1);
    expect(calls.map((c) => c.call)).toEqual(['submit', 'record']);
  });

  it('sends the chosen id, confirmWithin and resubmitUnconfirmed with the submission; a random UUID by default', async () => {
    const { calls, outcome, socket } = start({ promptId: 'chosen', confirmWithin: 5000, resubmitUnconfirmed: true });
    await settle();
    expect(calls[0]!.options).toMatchObject({ promptId: 'chosen', confirmWithin: 5000, resubmitUnconfirmed: true, clientId: 'client-1' });
    socket.push('chosen', 'execution_error', { exception_message: 'boom' });
    expect((await outcome).error).toMatchObject({ name: 'ExecutionError', promptId: 'chosen' });

    const clock = new ManualClock();
    const other = backend(clock);
    void runJob(other.jobs, new ScriptSocket() as unknown as FollowSocket, {}, {}, clock);
    await settle();
    expect((other.calls[0]!.options as { promptId: string }).promptId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('follows the server\'s own id when it answers another, with the events it held for it', async () => {
    const { socket, outcome } = start({}, {
      submit: async () => {
        socket.push('server-9', 'execution_start');
        socket.push('server-9', 'executed', { node: '9', output: file('b.png') });
        return { prompt_id: 'server-9' };
      },
    });
    await settle();
    expect(socket.subscribed).toEqual(['job-1', 'server-9']);
    socket.push('server-9', 'execution_success');
    expect((await outcome).result).toMatchObject({ promptId: 'server-9', files: [{ filename: 'b.png' }] });
    expect(socket.listenerCount).toBe(0);
  });

  it('a submission that rejects leaves no subscription, listener or timer behind', async () => {
    const lost = new APIConnectionError('answer lost', { promptId: 'job-1', sent: 'maybe' } as never);
    const { socket, outcome, clock } = start({ timeout: 1000 }, { submit: async () => Promise.reject(lost) });
    expect((await outcome).error).toBe(lost);
    expect(socket.listenerCount).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

describe('polling while the socket is down (manual clock)', () => {
  it('polls one gap after the last poll, every 4 round trips (at least 25 ms), so an ending is found within one gap', async () => {
    let done = false;
    const { clock, socket, outcome, polls } = start({ pollInterval: 1000 }, { status: () => (done ? { status: 'success', phase: 'completed', outputs: { '9': file('a.png') } } : {}), rtt: 2 });
    await settle();
    await clock.advance(1000);
    socket.drop(); // t0 + 1000: the last sign of the job was the submission, a second ago: a poll at once
    await clock.advance(100);
    expect(polls()).toEqual([t0 + 1000, t0 + 1025, t0 + 1050, t0 + 1075, t0 + 1100]);
    await clock.advance(3); // the poll of t0 + 1100 is answered: running
    done = true; // the job ends at t0 + 1103
    await clock.advance(30);
    const { result } = await outcome;
    expect(result?.files).toHaveLength(1);
    expect(polls().at(-1)).toBe(t0 + 1125); // found 22 ms after the end (+ its round trip), not a pollInterval later
  });

  it('a slow server is polled less often, down to once per pollInterval', async () => {
    const { clock, socket, polls } = start({ pollInterval: 1000 }, { rtt: 100 });
    await settle();
    socket.drop();
    await clock.advance(2000);
    const gaps = polls().slice(1).map((at, i) => at - polls()[i]!);
    expect(polls()[0]).toBe(t0 + 25);
    expect(gaps).toEqual([400, 400, 400, 400]);
  });

  it('backs off while polls get no answer, and gives the job up once the server has been silent for serverLostAfter', async () => {
    const refused = new APIConnectionError('refused', { sent: 'no' } as never);
    const { clock, socket, outcome, polls } = start({ pollInterval: 1000, serverLostAfter: 3000 }, { status: () => refused });
    await settle();
    socket.drop();
    await clock.advance(5000);
    const gaps = polls().slice(1).map((at, i) => at - polls()[i]!);
    expect(gaps.slice(0, 6)).toEqual([50, 100, 200, 400, 800, 1000]);
    const { error } = await outcome;
    expect(error).toBeInstanceOf(ServerLostError);
    expect(error).toMatchObject({ reason: 'unreachable', promptId: 'job-1' });
  });

  it('a 429 while down is tried again later, not the end of the run', async () => {
    let n = 0;
    const busy = new RateLimitError({ status: 429, body: { error: 'slow down' }, method: 'GET', url: 'https://cloud.test/api/job/job-1/status' } as never);
    const { clock, socket, outcome } = start({ pollInterval: 1000 }, { status: () => (++n < 3 ? busy : { status: 'success', phase: 'completed', outputs: { '9': file('a.png') } }) });
    await settle();
    socket.drop();
    await clock.advance(500);
    expect((await outcome).result?.files).toHaveLength(1);
  });

  it('reads the job at once when the socket comes back, again after a poll in flight that predates the return', async () => {
    const { clock, socket, polls } = start({ pollInterval: 1000 }, { rtt: 10 });
    await settle();
    socket.drop();
    await clock.advance(30); // a poll went out at t0 + 25, answered at t0 + 35
    socket.open(); // t0 + 30: that answer may predate what happened while the socket was down
    await clock.advance(20);
    expect(polls()).toEqual([t0 + 25, t0 + 35]);
    socket.drop();
    await clock.advance(200);
    socket.open(); // no poll in flight: a read at once
    await settle();
    expect(polls().filter((at) => at === clock.now())).toHaveLength(1);
    const count = polls().length;
    await clock.advance(1000);
    expect(polls()).toHaveLength(count); // live: the next confirming poll is 20 intervals away
  });

  it('a storm (the socket opening and dropping again and again) keeps one poll in flight and one queued', async () => {
    const { clock, socket, polls } = start({ pollInterval: 1000 }, { rtt: 10 });
    await settle();
    await clock.advance(1000);
    for (let i = 0; i < 20; i++) {
      socket.drop();
      socket.open();
    }
    socket.drop();
    await clock.advance(12);
    // The first return read at once; the others asked for one more read, made once the first was answered.
    expect(polls()).toEqual([t0 + 1000, t0 + 1010]);
  });

  it('a job followed later is polled at once and every interval until the socket hears from it', async () => {
    const clock = new ManualClock();
    const socket = new ScriptSocket();
    const b = backend(clock);
    void followJob(b.jobs, socket as unknown as FollowSocket, 'old-job', { pollInterval: 100 }, clock);
    await clock.advance(250);
    expect(b.polls()).toEqual([t0, t0 + 100, t0 + 200]);
    socket.push('old-job', 'progress', { value: 1, max: 2 });
    await clock.advance(2000);
    expect(b.polls()).toEqual([t0, t0 + 100, t0 + 200, t0 + 300]); // the one already scheduled, then every 20 intervals
  });
});

describe('giving up (manual clock)', () => {
  it('a silence of `timeout` ms stops this job (stopJob with its id) and rejects with JobTimeoutError', async () => {
    const { clock, socket, outcome, calls } = start({ timeout: 500 });
    await settle();
    await clock.advance(300);
    socket.push('job-1', 'progress', { value: 1, max: 9 });
    await clock.advance(499);
    expect(calls.map((c) => c.call)).toEqual(['submit']);
    await clock.advance(1);
    expect((await outcome).error).toBeInstanceOf(JobTimeoutError);
    await settle();
    expect(calls.map((c) => c.call)).toEqual(['submit', 'stop job-1']);
    expect(socket.listenerCount).toBe(0);
  });

  it('an abort during the submission stops the job once its submission is answered, and never another', async () => {
    const ac = new AbortController();
    let answer!: () => void;
    const { outcome, calls, socket } = start({ signal: ac.signal }, { submit: (o) => new Promise((resolve) => (answer = () => resolve({ prompt_id: o.promptId! }))) });
    await settle();
    ac.abort();
    // The run ends at once, naming the job; the job is stopped only once the submission has said it exists.
    expect((await outcome).error).toMatchObject({ name: 'APIUserAbortError', promptId: 'job-1', message: 'Aborted while submitting job job-1; it is stopped if it was made' });
    await settle();
    expect(calls.map((c) => c.call)).toEqual(['submit']);
    answer();
    await settle();
    expect(calls.map((c) => c.call)).toEqual(['submit', 'stop job-1']);
    expect(socket.listenerCount).toBe(0);
  });

  it('without stopOnAbort (the pool stops jobs itself), an abort during the submission waits for it, so the job is known by its id', async () => {
    const ac = new AbortController();
    let answer!: () => void;
    const { outcome, calls } = start({ signal: ac.signal, stopOnAbort: false }, { submit: (o) => new Promise((resolve) => (answer = () => resolve({ prompt_id: o.promptId! }))) });
    await settle();
    ac.abort();
    await settle();
    answer();
    expect((await outcome).error).toMatchObject({ name: 'APIUserAbortError', message: 'Aborted; stopped following job job-1 (it keeps running)' });
    await settle();
    expect(calls.map((c) => c.call)).toEqual(['submit']);
  });
});

describe("the follower's states, told to the internal listener (FOLLOWER_STATES)", () => {
  /** A follower whose listener records each state it is told, and the ending told with it. */
  function told(script: Parameters<typeof backend>[1], opts: Parameters<typeof runJob>[3] = {}) {
    const seen: Array<[FollowState, JobEnding | undefined]> = [];
    const listener: FollowerStatesListener = (state, ending) => void seen.push([state, ending]);
    // Spread as run() and the pool spread the caller's options: the key goes along.
    const run = start({ ...opts, ...{ [FOLLOWER_STATES]: listener } }, script);
    return { ...run, seen };
  }

  it('an ending found by a poll: settling, then settled, with the same ending (by status)', async () => {
    let done = false;
    const { clock, socket, seen, outcome } = told({ status: () => (done ? { status: 'success', phase: 'completed' } : {}) });
    await settle();
    socket.drop();
    done = true;
    await clock.advance(100);
    expect((await outcome).result?.files).toHaveLength(1);
    expect(seen).toEqual([
      ['live', undefined],
      ['polling', undefined],
      ['settling', { end: 'completed', by: 'status' }],
      ['settled', { end: 'completed', by: 'status' }],
    ]);
    expect(seen[3]![1]).toBe(seen[2]![1]);
  });

  it('an ending heard on the socket, and a failure with what its event said', async () => {
    const ok = told({});
    await settle();
    ok.socket.push('job-1', 'execution_success');
    await settle();
    expect(ok.seen.slice(1, 2)).toEqual([['settling', { end: 'completed', by: 'socket' }]]);
    const failed = told({});
    await settle();
    failed.socket.push('job-1', 'execution_error', { node_id: '9', exception_type: 'OOMError' });
    expect((await failed.outcome).error).toMatchObject({ name: 'ExecutionError' });
    expect(failed.seen).toEqual([
      ['live', undefined],
      ['settled', { end: 'failed', by: 'socket', data: { prompt_id: 'job-1', node_id: '9', exception_type: 'OOMError' } }],
    ]);
  });

  it('giving up is not an ending: a silence settles with none', async () => {
    const { clock, seen, outcome } = told({}, { timeout: 500 });
    await settle();
    await clock.advance(600);
    expect((await outcome).error).toBeInstanceOf(JobTimeoutError);
    expect(seen).toEqual([
      ['live', undefined],
      ['settled', undefined],
    ]);
  });

  it('a listener that throws ends the run as a callback that throws does', async () => {
    const boom = new Error('listener');
    const { outcome } = start({ pollInterval: 1000, ...{ [FOLLOWER_STATES]: () => { throw boom; } } });
    expect((await outcome).error).toBe(boom);
  });
});
