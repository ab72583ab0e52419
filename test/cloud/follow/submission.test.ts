// The submission of a job as the follower's reducer runs it (src/cloud/follow/states.ts' SUBMISSION,
// src/cloud/follow/reducer.ts): a table of (state, input) → (state, effects), each abort rule included
// (before the request, during it, while onSubmitted has the id, after acceptance). The states are reached
// through the reducer itself; no driver, socket or clock. The driver performing these effects:
// test/cloud/follow/follower.test.ts ('giving up').
import { describe, expect, it } from 'vitest';
import { APIConnectionError } from '../../../src/errors.ts';
import { initialFollower, reduce, type Effect, type FollowerConfig, type FollowerInput, type FollowerState } from '../../../src/cloud/follow/reducer.ts';
import { nextSubmissionStep, type SubmissionInput, type SubmissionStep } from '../../../src/cloud/follow/states.ts';

const config: FollowerConfig = { interval: 1000, lostAfter: 30_000, timeout: undefined, stopOnAbort: true, justSubmitted: true, pollsAtOnce: false, origin: 'http://server', onSubmitted: false, clientId: 'c1' };

type Input = FollowerInput extends infer I ? (I extends unknown ? Omit<I, 'now'> : never) : never;
const saveFailed = new Error('save failed');
const lost = (sent: 'no' | 'maybe') => new APIConnectionError('POST', 'http://server/api/prompt', 'Connection failed', undefined, { promptId: 'p1', sent });

const I = {
  submit: { type: 'submit', workflow: { '9': { class_type: 'SaveImage', inputs: {} } }, aborted: false },
  submitAborted: { type: 'submit', workflow: { '9': { class_type: 'SaveImage', inputs: {} } }, aborted: true, abortReason: 'user' },
  attach: { type: 'attach', socket: 'open', aborted: false },
  attachAborted: { type: 'attach', socket: 'open', aborted: true, abortReason: 'user' },
  tried: { type: 'socket_tried' },
  answered: { type: 'submitted', promptId: 'p1', socket: 'open' },
  answeredDown: { type: 'submitted', promptId: 'p1', socket: 'reconnecting' },
  answeredOther: { type: 'submitted', promptId: 'p9', socket: 'open' },
  refused: { type: 'submit_failed', error: lost('no') },
  unanswered: { type: 'submit_failed', error: lost('maybe') },
  resubscribed: { type: 'resubscribed', socket: 'open' },
  recorded: { type: 'recorded', socket: 'open' },
  recordFailed: { type: 'record_failed', error: saveFailed },
  abort: { type: 'aborted', reason: 'user' },
  enter: { type: 'enter' },
} satisfies Record<string, Input>;
type Name = keyof typeof I;

/** The states of the table, each reached from a fresh follower by these inputs (and these options). */
const FROM: Record<string, { steps: Name[]; options?: Partial<FollowerConfig> }> = {
  idle: { steps: [] },
  'idle (follow)': { steps: [], options: { justSubmitted: false } },
  connecting: { steps: ['submit'] },
  sending: { steps: ['submit', 'tried'] },
  'sending (onSubmitted)': { steps: ['submit', 'tried'], options: { onSubmitted: true } },
  'sending (no stopOnAbort)': { steps: ['submit', 'tried'], options: { stopOnAbort: false } },
  'sending (no stopOnAbort, aborted)': { steps: ['submit', 'tried', 'abort'], options: { stopOnAbort: false } },
  resubscribing: { steps: ['submit', 'tried', 'answeredOther'] },
  recording: { steps: ['submit', 'tried', 'answered'], options: { onSubmitted: true } },
  'recording (aborted)': { steps: ['submit', 'tried', 'answered', 'abort'], options: { onSubmitted: true } },
  abandoned: { steps: ['submit', 'tried', 'abort'] },
  'done (failed)': { steps: ['submit', 'tried', 'refused'] },
  accepted: { steps: ['submit', 'tried', 'answered', 'enter'] },
  'accepted (no stopOnAbort)': { steps: ['submit', 'tried', 'answered', 'enter'], options: { stopOnAbort: false } },
};

/** An effect in a few words; an error with its class and message. */
function describeEffect(e: Effect): string {
  switch (e.type) {
    case 'log':
      return `log ${e.level} ${e.message}`;
    case 'first_attempt':
    case 'sleep':
      return `${e.type} ${e.ms}`;
    case 'stop':
      return `stop${e.confirm ? ' and confirm' : ''} (${e.why})`;
    case 'settle': {
      if ('result' in e) return `resolve ${e.result.promptId}`;
      const err = e.error as Error & { promptId?: string };
      return `reject ${err.constructor.name}: ${err.message}${err.promptId ? ` [${err.promptId}]` : ''}`;
    }
    default:
      return e.type;
  }
}

function reach(name: string): FollowerState {
  const from = FROM[name]!;
  let state = initialFollower({ ...config, ...from.options }, 'p1', 0);
  for (const step of from.steps) state = reduce(state, { ...I[step], now: 0 } as FollowerInput)[0];
  return state;
}

describe('the submission, as a table of (state, input) → (state, effects)', () => {
  const submitted = 'log info job p1 submitted (1 node)';
  const stopped = 'log info job p1 ended without a result after 5 ms: aborted (APIUserAbortError)';
  it.each<[string, Name, string, string, string[]]>([
    // Start.
    ['idle', 'submit', 'submitting', 'connecting', ['listen', 'subscribe', 'first_attempt 1000']],
    ['idle (follow)', 'attach', 'live', 'accepted', ['listen', 'subscribe', 'enter']],
    // Abort before the request: nothing was sent, nothing to stop, no outcome line (nothing was followed).
    ['idle', 'submitAborted', 'settled', 'done', ['unlisten', 'reject APIUserAbortError: Request was aborted']],
    ['connecting', 'abort', 'settled', 'done', ['unlisten', 'reject APIUserAbortError: Request was aborted']],
    // The request and its answer.
    ['connecting', 'tried', 'submitting', 'sending', ['send']],
    ['sending', 'answered', 'live', 'accepted', [submitted, 'enter']],
    ['sending', 'answeredDown', 'polling', 'accepted', [submitted, 'enter']],
    ['sending (onSubmitted)', 'answered', 'submitting', 'recording', [submitted, 'record']],
    ['sending', 'answeredOther', 'submitting', 'resubscribing', ['log debug job p9: the server chose this id (p1 was sent)', 'resubscribe']],
    ['resubscribing', 'resubscribed', 'live', 'accepted', ['log info job p9 submitted (1 node)', 'enter']],
    ['sending', 'refused', 'settled', 'done', ['unlisten', 'reject APIConnectionError: Connection failed: POST http://server/api/prompt (job p1 was not sent) [p1]']],
    ['recording', 'recorded', 'live', 'accepted', ['enter']],
    ['recording', 'recordFailed', 'settled', 'done', ['stop (onSubmitted threw)', 'unlisten', 'reject Error: save failed']],
    // Abort during the request: with stopOnAbort the run rejects now, and the job its answer shows may exist is stopped.
    ['sending', 'abort', 'settled', 'abandoned', ['unlisten', 'reject APIUserAbortError: Aborted while submitting job p1; it is stopped if it was made [p1]']],
    ['abandoned', 'answered', 'settled', 'done', ['stop (aborted while submitting)']],
    ['abandoned', 'answeredOther', 'settled', 'done', ['stop (aborted while submitting)']],
    ['abandoned', 'unanswered', 'settled', 'done', ['stop (aborted while submitting)']],
    ['abandoned', 'refused', 'settled', 'done', []],
    // Without stopOnAbort the run waits for the answer, so that the job is known by its id, then gives it up.
    ['sending (no stopOnAbort)', 'abort', 'submitting', 'sending', []],
    ['sending (no stopOnAbort, aborted)', 'answered', 'settled', 'accepted', [submitted, 'unlisten', stopped, 'reject APIUserAbortError: Aborted; stopped following job p1 (it keeps running) [p1]']],
    // Abort while onSubmitted has the id: kept until the job is accepted, then stopped and confirmed.
    ['recording', 'abort', 'submitting', 'recording', []],
    ['recording (aborted)', 'recorded', 'settled', 'accepted', ['unlisten', 'stop and confirm (aborted)']],
    // Abort after acceptance.
    ['accepted', 'abort', 'settled', 'accepted', ['unlisten', 'stop and confirm (aborted)']],
    ['accepted (no stopOnAbort)', 'abort', 'settled', 'accepted', ['unlisten', stopped, 'reject APIUserAbortError: Aborted; stopped following job p1 (it keeps running) [p1]']],
    ['idle (follow)', 'attachAborted', 'settled', 'accepted', ['listen', 'unlisten', 'stop and confirm (aborted)']],
    // Late answers change nothing.
    ['done (failed)', 'answered', 'settled', 'done', []],
    ['accepted', 'answeredOther', 'live', 'accepted', []],
    ['accepted', 'tried', 'live', 'accepted', []],
  ])('%s + %s → %s (%s)', (from, input, phase, step, effects) => {
    const [next, fx] = reduce(reach(from), { ...I[input], now: 5 } as FollowerInput);
    expect(fx.map(describeEffect)).toEqual(effects);
    expect([next.phase, next.submission]).toEqual([phase, step]);
  });

  it('follows the server\'s id from its answer on: stops, records and polls that job', () => {
    const state = reach('abandoned');
    expect(reduce(state, { ...I.answeredOther, now: 5 })[0].promptId).toBe('p9');
    expect(reach('resubscribing').promptId).toBe('p9');
  });

  it('sends the workflow it was given', () => {
    const [, fx] = reduce(reach('connecting'), { ...I.tried, now: 5 });
    expect(fx).toEqual([{ type: 'send', workflow: I.submit.workflow }]);
  });
});

describe('the submission table (states.ts)', () => {
  const inputs: Record<string, SubmissionInput> = {
    submit: { type: 'submit', aborted: false },
    'submit (aborted)': { type: 'submit', aborted: true },
    attach: { type: 'attach' },
    socket_tried: { type: 'socket_tried' },
    'submitted (same id)': { type: 'submitted', sameId: true, records: false },
    'submitted (same id, onSubmitted)': { type: 'submitted', sameId: true, records: true },
    'submitted (other id)': { type: 'submitted', sameId: false, records: true },
    resubscribed: { type: 'resubscribed', records: false },
    recorded: { type: 'recorded' },
    failed: { type: 'failed' },
    'aborted (stopOnAbort)': { type: 'aborted', stopOnAbort: true },
    aborted: { type: 'aborted', stopOnAbort: false },
  };
  // One row per step, one column per input above; '·' changes nothing.
  const table: Record<SubmissionStep, string[]> = {
    idle: ['connecting', 'done', 'accepted', '·', '·', '·', '·', '·', '·', '·', '·', '·'],
    connecting: ['·', '·', '·', 'sending', '·', '·', '·', '·', '·', '·', 'done', 'done'],
    sending: ['·', '·', '·', '·', 'accepted', 'recording', 'resubscribing', '·', '·', 'done', 'abandoned', 'sending'],
    resubscribing: ['·', '·', '·', '·', '·', '·', '·', 'accepted', '·', '·', 'resubscribing', 'resubscribing'],
    recording: ['·', '·', '·', '·', '·', '·', '·', '·', 'accepted', 'done', 'recording', 'recording'],
    accepted: ['·', '·', '·', '·', '·', '·', '·', '·', '·', '·', '·', '·'],
    abandoned: ['·', '·', '·', '·', 'done', 'done', 'done', '·', '·', 'done', '·', '·'],
    done: ['·', '·', '·', '·', '·', '·', '·', '·', '·', '·', '·', '·'],
  };
  const rows = Object.entries(table).flatMap(([step, targets]) => Object.entries(inputs).map(([name, input], i) => [step as SubmissionStep, name, targets[i], input] as const));
  it.each(rows)('%s + %s → %s', (step, _name, target, input) => {
    expect(nextSubmissionStep(step, input) ?? '·').toBe(target);
  });
});
