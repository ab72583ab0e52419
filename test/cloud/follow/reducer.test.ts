// The follower's reducer as a table: a sequence of inputs → the phase it ends in and the effects it
// asked for on the way (log lines left out; one test below reads them). No socket, no server, no
// clock: time is each input's `now`. A row's 'acceptOpen' is a submission answered with the socket open.
// The submission's own steps: submission.test.ts. The same reducer driven for real: follower.test.ts
// (scripted socket, manual clock) and follower.int.test.ts (real sockets).
import { describe, expect, it } from 'vitest';
import { APIConnectionError, APIUserAbortError, NotFoundError } from '../../../src/errors.ts';
import { initialFollower, reduce, type Effect, type FollowerConfig, type FollowerInput, type FollowerState } from '../../../src/cloud/follow/reducer.ts';
import type { JobStatusResult } from '../../../src/cloud/jobs.ts';
import type { SocketEvent } from '../../../src/cloud/socket.ts';

const config: FollowerConfig = { interval: 1000, lostAfter: 30_000, timeout: undefined, stopOnAbort: true, justSubmitted: true, pollsAtOnce: false, origin: 'http://server', onSubmitted: false, clientId: 'c1' };

type Input = FollowerInput extends infer I ? (I extends unknown ? Omit<I, 'now'> : never) : never;
const ev = (type: string, data: Record<string, unknown> = {}) => ({ type, data: { prompt_id: 'p1', ...data } }) as unknown as SocketEvent;
const status = (phase: string): JobStatusResult => ({ status: phase, phase }) as unknown as JobStatusResult;
const png = { images: [{ filename: 'a.png', subfolder: '', type: 'output' }] };

const I = {
  submit: { type: 'submit', workflow: { '9': { class_type: 'SaveImage', inputs: {} } }, aborted: false },
  tried: { type: 'socket_tried' },
  answeredOpen: { type: 'submitted', promptId: 'p1', socket: 'open' },
  answeredDown: { type: 'submitted', promptId: 'p1', socket: 'reconnecting' },
  attachOpen: { type: 'attach', socket: 'open', aborted: false },
  enter: { type: 'enter' },
  open: { type: 'socket_open' },
  down: { type: 'socket_down', socket: 'reconnecting' },
  due: { type: 'poll_due' },
  start: { type: 'event', event: ev('execution_start') },
  startSeen: { type: 'delivered', event: ev('execution_start') },
  executed: { type: 'event', event: ev('executed', { node: '9', output: png }) },
  executedSeen: { type: 'delivered', event: ev('executed', { node: '9', output: png }) },
  success: { type: 'event', event: ev('execution_success') },
  successSeen: { type: 'delivered', event: ev('execution_success') },
  errorSeen: { type: 'delivered', event: ev('execution_error', { exception_message: 'boom' }) },
  running: { type: 'poll_answer', status: status('running') },
  completed: { type: 'poll_answer', status: status('completed') },
  failed: { type: 'poll_answer', status: status('failed') },
  offline: { type: 'poll_failed', error: new APIConnectionError('GET', 'http://server/api/job/p1/status', 'Connection failed (ECONNREFUSED)', 'ECONNREFUSED') },
  unknownJob: { type: 'poll_failed', error: new NotFoundError({ status: 404, body: 'not found', method: 'GET', url: 'http://server/api/job/p1/status' }) },
  readNothing: { type: 'read', record: undefined },
  silent: { type: 'silent' },
  abort: { type: 'aborted', reason: 'user' },
  stopped: { type: 'stopped', stopError: undefined, reason: 'user' },
  threw: { type: 'callback_threw', error: new Error('callback') },
  lost: { type: 'lost' },
} satisfies Record<string, Input>;
/** The submission, answered with the socket open or down: the job is accepted. */
const MACROS = { acceptOpen: ['submit', 'tried', 'answeredOpen'], acceptDown: ['submit', 'tried', 'answeredDown'] } as const;
type Name = keyof typeof I | keyof typeof MACROS;
/** The effects of a submission up to its answer. */
const SENT = ['listen', 'subscribe', 'first attempt 1000', 'send'];

/** An effect in a few words. */
function describeEffect(e: Effect): string | undefined {
  switch (e.type) {
    case 'log':
      return undefined;
    case 'sleep':
    case 'silence':
      return `${e.type} ${e.ms}`;
    case 'poll':
      return e.timeout === undefined ? 'poll' : `poll (within ${e.timeout})`;
    case 'first_attempt':
      return `first attempt ${e.ms}`;
    case 'emit':
      return `emit ${e.event.type}`;
    case 'read':
      return e.kind === 'completed' ? `read completed${e.socketHeardAll ? ' (heard all)' : ''}` : 'read failure';
    case 'stop':
      return `stop${e.confirm ? ' and confirm' : ''} (${e.why})`;
    case 'settle':
      return 'result' in e ? `resolve ${e.result.files.length} file(s)` : `reject ${(e.error as Error).constructor.name}`;
    default:
      return e.type;
  }
}

/** Feeds `steps` (name, or [name, ms later]) from time 0; the last state and every effect. */
function play(steps: Array<Name | [Name, number]>, overrides: Partial<FollowerConfig> = {}): { state: FollowerState; effects: string[]; all: Effect[] } {
  let state = initialFollower({ ...config, ...overrides }, 'p1', 0);
  let now = 0;
  const all: Effect[] = [];
  for (const step of steps) {
    const [name, later] = typeof step === 'string' ? [step, 0] : step;
    now += later;
    for (const one of name in MACROS ? MACROS[name as keyof typeof MACROS] : [name as keyof typeof I]) {
      const [next, fx] = reduce(state, { ...I[one], now } as FollowerInput);
      state = next;
      all.push(...fx);
    }
  }
  return { state, effects: all.map(describeEffect).filter((d): d is string => d !== undefined), all };
}

describe('the follower reducer, as a table of input sequences', () => {
  it.each<[string, Array<Name | [Name, number]>, Partial<FollowerConfig>, string, string[]]>([
    ['accepted with the socket open: a slow confirming poll (20 intervals)', ['acceptOpen', 'enter'], {}, 'live', [...SENT, 'enter', 'sleep 20000']],
    ['accepted with the socket down: polled a gap later (25 ms at least)', ['acceptDown', 'enter'], {}, 'polling', [...SENT, 'enter', 'sleep 25']],
    ['a job followed later: subscribed, polled at once', ['attachOpen', 'enter'], { justSubmitted: false }, 'live', ['listen', 'subscribe', 'enter', 'poll']],
    ['a v2 feed (the poll is the truth): polled at once', ['acceptOpen', 'enter'], { pollsAtOnce: true }, 'live', [...SENT, 'enter', 'poll']],
    ['the socket drops: polling one gap after the last poll', ['acceptOpen', 'enter', ['down', 100]], {}, 'polling', [...SENT, 'enter', 'sleep 20000', 'poll (within 29900)']],
    ['the socket comes back: the status is read at once', ['acceptDown', 'enter', ['open', 10]], {}, 'live', [...SENT, 'enter', 'sleep 25', 'poll']],
    ['a poll asked for while one is in flight goes out when it ends', ['acceptDown', 'enter', ['due', 25], 'open', ['running', 5]], {}, 'live', [...SENT, 'enter', 'sleep 25', 'poll (within 29975)', 'poll']],
    ['an event: the caller sees it first', ['acceptOpen', 'enter', 'start'], {}, 'live', [...SENT, 'enter', 'sleep 20000', 'emit execution_start']],
    ['events before the answer wait for it, then are delivered in order', ['submit', 'tried', 'start', 'executed', 'answeredOpen', 'startSeen', 'executedSeen', 'enter'], {}, 'live', [...SENT, 'emit execution_start', 'enter', 'emit executed', 'sleep 20000']],
    ['heard whole, with outputs: no record read', ['acceptOpen', 'enter', 'startSeen', 'executedSeen', 'successSeen', 'readNothing'], {}, 'settled', [...SENT, 'enter', 'sleep 20000', 'unlisten', 'read completed (heard all)', 'unlisten', 'resolve 1 file(s)']],
    ['heard, but the socket dropped: the record is read', ['acceptOpen', 'enter', 'startSeen', 'lost', 'executedSeen', 'successSeen'], {}, 'settling', [...SENT, 'enter', 'sleep 20000', 'unlisten', 'read completed']],
    ['an ending found by a poll: the record is read', ['acceptDown', 'enter', ['due', 25], 'completed'], {}, 'settling', [...SENT, 'enter', 'sleep 25', 'poll (within 29975)', 'unlisten', 'read completed']],
    ['a failure found by a poll: its error is read', ['acceptDown', 'enter', ['due', 25], 'failed'], {}, 'settling', [...SENT, 'enter', 'sleep 25', 'poll (within 29975)', 'unlisten', 'read failure']],
    ['an execution_error ends the run with it', ['acceptOpen', 'enter', 'errorSeen'], {}, 'settled', [...SENT, 'enter', 'sleep 20000', 'unlisten', 'reject ExecutionError']],
    ['polls without an answer back off', ['acceptDown', 'enter', ['due', 25], 'offline', ['due', 50], 'offline'], {}, 'polling', [...SENT, 'enter', 'sleep 25', 'poll (within 29975)', 'sleep 50', 'poll (within 29925)', 'sleep 100']],
    ['a server silent for serverLostAfter: the job is given up as lost', ['acceptDown', 'enter', ['due', 25], ['offline', 1000]], { lostAfter: 1000 }, 'settled', [...SENT, 'enter', 'sleep 25', 'poll (within 975)', 'unlisten', 'reject ServerLostError']],
    ['a job the server no longer knows: lost at once', ['acceptDown', 'enter', ['due', 25], 'unknownJob'], {}, 'settled', [...SENT, 'enter', 'sleep 25', 'poll (within 29975)', 'unlisten', 'reject ServerLostError']],
    ['a silence of `timeout`: stopped, JobTimeoutError', ['acceptOpen', 'enter', ['silent', 500]], { timeout: 500 }, 'settled', [...SENT, 'silence 500', 'enter', 'sleep 20000', 'stop (silent for 500 ms)', 'unlisten', 'reject JobTimeoutError']],
    ['an abort: settled at once, rejected once the stop is confirmed', ['acceptOpen', 'enter', 'abort', 'stopped'], {}, 'settled', [...SENT, 'enter', 'sleep 20000', 'unlisten', 'stop and confirm (aborted)', 'reject APIUserAbortError']],
    ['an abort without stopOnAbort: stops following, the job runs on', ['acceptOpen', 'enter', 'abort'], { stopOnAbort: false }, 'settled', [...SENT, 'enter', 'sleep 20000', 'unlisten', 'reject APIUserAbortError']],
    ['a callback that throws: the job is stopped, the run rejects with its error', ['acceptOpen', 'enter', 'threw'], {}, 'settled', [...SENT, 'enter', 'sleep 20000', 'stop (a callback threw)', 'unlisten', 'reject Error']],
    ['nothing moves a settled follower', ['acceptOpen', 'enter', 'threw', 'successSeen', 'completed', 'down', 'open', 'due', 'silent'], {}, 'settled', [...SENT, 'enter', 'sleep 20000', 'stop (a callback threw)', 'unlisten', 'reject Error']],
  ])('%s', (_what, steps, overrides, phase, effects) => {
    const played = play(steps, overrides);
    expect(played.state.phase).toBe(phase);
    expect(played.effects).toEqual(effects);
  });

  it('settles exactly once, with the outputs heard and the record merged (the record wins)', () => {
    const { all } = play(['acceptOpen', 'enter', 'executedSeen', 'successSeen']);
    let state = play(['acceptOpen', 'enter', 'executedSeen', 'successSeen']).state;
    expect(all.filter((e) => e.type === 'read')).toEqual([{ type: 'read', kind: 'completed', status: undefined, socketHeardAll: false }]);
    const record = { id: 'p1', status: 'completed', outputs: { '12': { images: [{ filename: 'b.png', subfolder: '', type: 'output' }] } } };
    const [next, fx] = reduce(state, { type: 'read', record: record as never, now: 5 });
    state = next;
    const settle = fx.find((e) => e.type === 'settle');
    expect(settle && 'result' in settle && settle.result.files.map((f) => f.filename)).toEqual(['a.png', 'b.png']);
    expect(reduce(state, { type: 'read', record: undefined, now: 6 })[1]).toEqual([]);
  });

  it('says what it does in log lines: why it polls, and how the job ended', () => {
    const { all } = play(['acceptDown', 'enter', ['threw', 40]]);
    const lines = all.flatMap((e) => (e.type === 'log' ? [`${e.level} ${e.message}`] : []));
    expect(lines).toEqual(['info job p1 submitted (1 node)', 'debug job p1: the socket is reconnecting; polling the status every 25 ms', 'info job p1 ended without a result after 40 ms: error (Error: callback)']);
  });

  it('an error before the job is accepted settles without an outcome line (nothing was followed)', () => {
    const { state } = play(['submit', 'tried']);
    const [next, fx] = reduce(state, { type: 'submit_failed', error: new APIUserAbortError(), now: 1 });
    expect(next.phase).toBe('settled');
    expect(fx.map((e) => e.type)).toEqual(['unlisten', 'settle']);
  });
});
