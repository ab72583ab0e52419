/**
 * The states of a job follower and the only moves between them. Pure: what
 * each state does on entry (poll, listen, read the record) is the reducer's
 * (`reducer.ts`), performed by the driver (`follower.ts`); this table says
 * only where an input leads.
 *
 * ```text
 *   from             input                    to
 *   submitting       accepted, socket open    live
 *   submitting       accepted, socket down    polling
 *   live             socket down              polling
 *   polling          socket open              live
 *   live, polling    ended                    settling
 *   settling         done                     settled
 *   submitting,
 *   live, polling    gave up                  settled
 * ```
 *
 * How `submitting` goes (the request, its answer, `onSubmitted`, an abort
 * meanwhile) is the table of {@link SUBMISSION}.
 *
 * "ended": the job's end was heard or polled and its outputs or error are read
 * (`settling`). "gave up": the run ends without reading more (an abort, a
 * silence, a callback that threw, a lost server, a failed submission, an
 * error event).
 *
 * @module
 */

/**
 * - `submitting`: subscribed under the job's id, the submission not answered
 *   yet (a job followed later passes through it at once). Events wait.
 * - `live`: the socket is open and hears the job; a slow confirming poll.
 * - `polling`: the socket is down; the job's status is polled at a short gap.
 * - `settling`: the job ended; its record is being read (outputs, error).
 * - `settled`: resolved or rejected; nothing is listened to any more.
 */
export type FollowState = 'submitting' | 'live' | 'polling' | 'settling' | 'settled';

/** What can happen to a follower. */
export type FollowInput =
  /** The submission was answered (and `onSubmitted` returned), or a job followed later is attached. */
  | { type: 'accepted'; socketOpen: boolean }
  /** The socket opened (first time or again). */
  | { type: 'socket_open' }
  /** The socket dropped or closed. */
  | { type: 'socket_down' }
  /** The job's end was heard on the socket or found by a poll, and is to be read. */
  | { type: 'ended' }
  /** The run ends without reading anything more: an abort, a silence, a callback that threw, a lost server, a submission that failed, an ending whose error is known. */
  | { type: 'gave_up' }
  /** The ending was read: the run has its outcome. */
  | { type: 'done' };

type Target = FollowState | ((input: FollowInput) => FollowState);

/** Every move; an input a state does not list changes nothing there. */
export const TRANSITIONS: Readonly<Record<FollowState, Partial<Record<FollowInput['type'], Target>>>> = {
  submitting: { accepted: (i) => (i.type === 'accepted' && i.socketOpen ? 'live' : 'polling'), gave_up: 'settled' },
  live: { socket_down: 'polling', ended: 'settling', gave_up: 'settled' },
  polling: { socket_open: 'live', ended: 'settling', gave_up: 'settled' },
  settling: { done: 'settled' },
  settled: {},
};

/**
 * Where `input` leads from `state`, or `undefined` when it changes nothing
 * there (a socket that drops again while polling, anything once settled).
 *
 * @example
 * ```ts
 * nextState('live', { type: 'socket_down' }); // 'polling'
 * nextState('settled', { type: 'ended' }); // undefined
 * ```
 */
export function nextState(state: FollowState, input: FollowInput): FollowState | undefined {
  const target = TRANSITIONS[state][input.type];
  return typeof target === 'function' ? target(input) : target;
}

/**
 * - `idle`: not started (`run()` submits; `follow()` attaches at once).
 * - `connecting`: listening, subscribed under the chosen id; waiting (at most a
 *   second) for the outcome of a first socket connection still under way.
 * - `sending`: the request is out.
 * - `resubscribing`: the server answered with an id of its own; the events the
 *   socket held for that id come in before anything else.
 * - `recording`: `onSubmitted` has the id.
 * - `accepted`: the job is the follower's (`live` or `polling`).
 * - `abandoned`: aborted while the request was out, with `stopOnAbort`: the run
 *   rejected at once; the job its answer shows may exist is stopped.
 * - `done`: over (it failed, was aborted before the request, or the abandoned
 *   request's answer was dealt with).
 */
export type SubmissionStep = 'idle' | 'connecting' | 'sending' | 'resubscribing' | 'recording' | 'accepted' | 'abandoned' | 'done';

/** What can happen to a submission. */
export type SubmissionInput =
  /** `run()`: submit (`aborted`: the caller's signal was aborted already). */
  | { type: 'submit'; aborted: boolean }
  /** `follow()`: the job exists. */
  | { type: 'attach' }
  /** The socket's first connection attempt has an outcome, or took too long. */
  | { type: 'socket_tried' }
  /** The server took the job: under the id sent (`sameId`) or its own; `records`: an `onSubmitted` is to be told. */
  | { type: 'submitted'; sameId: boolean; records: boolean }
  /** Subscribed under the server's id, its held events in. */
  | { type: 'resubscribed'; records: boolean }
  /** `onSubmitted` returned. */
  | { type: 'recorded' }
  /** The request failed, or `onSubmitted` threw. */
  | { type: 'failed' }
  /** The caller's signal aborted. */
  | { type: 'aborted'; stopOnAbort: boolean };

type SubmissionTarget = SubmissionStep | ((input: SubmissionInput) => SubmissionStep);

const recordOrAccept = (i: SubmissionInput): SubmissionStep => ((i as { records?: boolean }).records ? 'recording' : 'accepted');

/**
 * The submission of a job, inside `submitting` (and, once abandoned, after the
 * run settled). An input a step does not list changes nothing there; one that
 * leads back to its own step (an abort while `sending` without `stopOnAbort`,
 * or while `recording`) is kept: it aborts the job once it is accepted.
 *
 * ```text
 *   from           input                          to
 *   idle           submit                         connecting
 *   idle           submit, signal aborted         done           (nothing sent)
 *   idle           attach                         accepted
 *   connecting     socket_tried                   sending
 *   connecting     aborted                        done           (nothing sent)
 *   sending        submitted, the id sent         recording      (accepted without onSubmitted)
 *   sending        submitted, another id          resubscribing
 *   sending        failed                         done
 *   sending        aborted, stopOnAbort           abandoned      (the run rejects now)
 *   sending        aborted                        sending        (kept until the answer)
 *   resubscribing  resubscribed                   recording      (accepted without onSubmitted)
 *   recording      recorded                       accepted
 *   recording      failed                         done           (the job is stopped)
 *   recording      aborted                        recording      (kept until accepted)
 *   abandoned      submitted, failed              done           (the job is stopped if it may exist)
 * ```
 */
export const SUBMISSION: Readonly<Record<SubmissionStep, Partial<Record<SubmissionInput['type'], SubmissionTarget>>>> = {
  idle: { submit: (i) => (i.type === 'submit' && i.aborted ? 'done' : 'connecting'), attach: 'accepted' },
  connecting: { socket_tried: 'sending', aborted: 'done' },
  sending: {
    submitted: (i) => (i.type === 'submitted' && !i.sameId ? 'resubscribing' : recordOrAccept(i)),
    failed: 'done',
    aborted: (i) => (i.type === 'aborted' && i.stopOnAbort ? 'abandoned' : 'sending'),
  },
  resubscribing: { resubscribed: recordOrAccept, aborted: 'resubscribing' },
  recording: { recorded: 'accepted', failed: 'done', aborted: 'recording' },
  accepted: {},
  abandoned: { submitted: 'done', failed: 'done' },
  done: {},
};

/**
 * Where `input` leads a submission from `step`, or `undefined` when it changes
 * nothing there (an answer to a run that failed already, anything once done).
 *
 * @example
 * ```ts
 * nextSubmissionStep('sending', { type: 'aborted', stopOnAbort: true }); // 'abandoned'
 * nextSubmissionStep('done', { type: 'recorded' }); // undefined
 * ```
 */
export function nextSubmissionStep(step: SubmissionStep, input: SubmissionInput): SubmissionStep | undefined {
  const target = SUBMISSION[step][input.type];
  return typeof target === 'function' ? target(input) : target;
}

/** How a job's event ends it, if it does. */
export type JobEnd = 'completed' | 'failed' | 'cancelled';

/**
 * Whether a job event of this type ends the job, and how: the one reading of
 * the socket's endings, for the follower (`ended` / `gave_up`) and for the
 * command line's display. An off-spec ending (`invalid`) is read by its `rawType`.
 *
 * @example
 * ```ts
 * jobEndOf('execution_success'); // 'completed'
 * jobEndOf('progress'); // undefined
 * ```
 */
export function jobEndOf(type: string): JobEnd | undefined {
  if (type === 'execution_success') return 'completed';
  if (type === 'execution_error') return 'failed';
  return type === 'execution_interrupted' ? 'cancelled' : undefined;
}

/** How a job ended, as its follower found it: heard on the socket, or read from its status by a poll. */
export interface JobEnding {
  readonly end: JobEnd;
  readonly by: 'socket' | 'status';
  /** The ending event's data (where a failure stopped, and why), when the socket said it. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Told each state a follower enters, with the job's ending once one is found (the same object from then on). */
export type FollowerStatesListener = (state: FollowState, ending: JobEnding | undefined) => void;

/**
 * The key of an internal option of `run()` and `follow()`, not part of
 * `RunOptions`: a {@link FollowerStatesListener}. The command line's display
 * reads a job's end from it, so an ending found by a poll shows as one heard
 * on the socket does. Registered (`Symbol.for`): the command line's bundle
 * and the SDK's name the same key; the options check reads string keys only,
 * and object spreads carry it to the follower.
 */
export const FOLLOWER_STATES: unique symbol = Symbol.for('@platformui/sdk:follower-states');
