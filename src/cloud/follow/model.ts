/**
 * What the follower's reducer (`reducer.ts`) reads and returns: its state,
 * its inputs and its effects, all plain data.
 *
 * @module
 */
import type { NodeOutputs, Workflow } from '../../schemas/cloud.ts';
import type { JobRecord, JobStatusResult } from '../jobs.ts';
import type { JobResult } from '../run-options.ts';
import type { SocketEvent, SocketState } from '../socket/types.ts';
import type { FollowState, JobEnding, SubmissionStep } from './states.ts';

/** What a follower is given once: the caller's options, as the reducer needs them. */
export interface FollowerConfig {
  /** `pollInterval` (ms). */
  interval: number;
  /** `serverLostAfter` (ms). */
  lostAfter: number;
  /** `timeout`: the longest silence (ms) of the job, or none. */
  timeout: number | undefined;
  /** Whether giving up on the job stops it on the server. */
  stopOnAbort: boolean;
  /** Whether this run submits the job: a job followed later may have ended already, and is polled at once. */
  justSubmitted: boolean;
  /** The feed only confirms an end by a poll (v2's stream): a job just submitted is polled at once. */
  pollsAtOnce: boolean;
  /** The server, as errors and log lines name it. */
  origin: string;
  /** An `onSubmitted` is told the job's id before the job is followed. */
  onSubmitted: boolean;
  /** The socket's client id, as the submission's log line names it. */
  clientId: string | undefined;
}

/** Everything a follower knows. Immutable: {@link reduce} returns a new one. */
export interface FollowerState {
  readonly config: FollowerConfig;
  readonly phase: FollowState;
  /** Where the submission is (the table `SUBMISSION` of `states.ts`); `accepted` once the job is followed. */
  readonly submission: SubmissionStep;
  /** The workflow being submitted (until it is sent). */
  readonly workflow: Workflow | undefined;
  /** The caller aborted before the job was accepted, and the abort waits for it (`sending` without `stopOnAbort`, `recording`). */
  readonly abort: { readonly reason: unknown } | undefined;
  readonly promptId: string;
  readonly startedAt: number;
  /** Followed (accepted or attached): only then does its end get an outcome line. */
  readonly followed: boolean;
  /** The phase being entered once the first events are delivered (`enter` input). */
  readonly entering: FollowState | undefined;
  /** Events of the job that came while it was submitted; then those still to deliver. */
  readonly early: readonly SocketEvent[];
  readonly outputs: Readonly<Record<string, NodeOutputs>>;
  /** Cached nodes the socket sent no outputs for (the cloud sends no `executed` for those). */
  readonly cachedUnheard: readonly string[];
  /** `execution_start` came and the socket never dropped since the subscription: it heard the whole job. */
  readonly heardWhole: boolean;
  readonly dropped: boolean;
  readonly heardFromJob: boolean;
  /** How the job ended, once that is found (socket or poll): its listener (`FOLLOWER_STATES`) and the reconcile line read it. */
  readonly ending: JobEnding | undefined;
  // Polls: one at a time.
  readonly pollInFlight: boolean;
  /** A poll was asked for while one was in flight (its answer may predate what the new one is for). */
  readonly pollAgain: boolean;
  /** When the last poll went out (at first: when following began). */
  readonly lastPollAt: number;
  /** Smoothed round trip of a status poll (ms). */
  readonly roundTrip: number | undefined;
  /** Polls in a row that got no answer. */
  readonly failures: number;
  /** The last time the server showed it is alive: an answer to a poll, an open socket, an event. */
  readonly lastAnswer: number;
  readonly lastStatus: string | undefined;
  /** The socket's state when last told (for the line that says why the job is polled). */
  readonly socket: SocketState | undefined;
}

/** What can happen to a follower (each stamped with the driver's `now`). */
export type FollowerInput = { now: number } & (
  /** `run()`: submit `workflow` (`aborted`: the caller's signal was aborted already). */
  | { type: 'submit'; workflow: Workflow; aborted: boolean; abortReason?: unknown }
  /** `follow()`: the job exists; it is the follower's at once. */
  | { type: 'attach'; socket: SocketState; aborted: boolean; abortReason?: unknown }
  /** The socket's first connection attempt has an outcome, or took too long (`first_attempt`). */
  | { type: 'socket_tried' }
  /** The server took the job, under `promptId` (`send`). */
  | { type: 'submitted'; promptId: string; socket: SocketState }
  /** The submission failed (`send`). */
  | { type: 'submit_failed'; error: unknown }
  /** Subscribed under the server's own id, its held events in (`resubscribe`). */
  | { type: 'resubscribed'; socket: SocketState }
  /** `onSubmitted` returned (`record`). */
  | { type: 'recorded'; socket: SocketState }
  | { type: 'record_failed'; error: unknown }
  /** The first events are delivered: enter the phase. */
  | { type: 'enter' }
  | { type: 'event'; event: SocketEvent }
  /** The caller's callbacks took the event. */
  | { type: 'delivered'; event: SocketEvent }
  | { type: 'callback_threw'; error: unknown }
  | { type: 'socket_open' }
  | { type: 'socket_down'; socket: SocketState }
  /** The socket dropped some of the job's events before they were delivered. */
  | { type: 'lost' }
  | { type: 'poll_due' }
  | { type: 'poll_answer'; status: JobStatusResult }
  | { type: 'poll_failed'; error: unknown }
  /** The job said nothing for `timeout` ms. */
  | { type: 'silent' }
  | { type: 'aborted'; reason: unknown }
  /** The ending is read: a completed job's record (if one was read), or the error it ended with. */
  | { type: 'read'; record: JobRecord | undefined }
  | { type: 'read_failed'; error: unknown }
  /** The stop of an aborted job is confirmed (`stopError` undefined) or not. */
  | { type: 'stopped'; stopError: Error | undefined; reason: unknown }
);

/** What the driver does. */
export type Effect =
  /** Listens to the socket's state (`socket_open`, `socket_down`) and the caller's signal (`aborted`) until `unlisten`. */
  | { type: 'listen' }
  /** Answers `socket_tried` once a first socket connection under way has an outcome, or after `ms`; a microtask later when none is under way. Undone by `unlisten`. */
  | { type: 'first_attempt'; ms: number }
  /** Sends the submission under the job's id. Answers `submitted` / `submit_failed`. */
  | { type: 'send'; workflow: Workflow }
  /** Subscribes under the job's id instead of the one sent. Answers `resubscribed` after the events the socket held for it. */
  | { type: 'resubscribe' }
  /** Tells `onSubmitted` the job's id. Answers `recorded` / `record_failed`. */
  | { type: 'record' }
  /** Feeds `enter` once every input pending now, and every input those cause, is taken: the job's first events are delivered. */
  | { type: 'enter' }
  /** Reads the job's status (`timeout`: the bound of a poll while the socket is down). Answers `poll_answer` / `poll_failed`. */
  | { type: 'poll'; timeout?: number }
  /** Feeds `poll_due` after `ms`, replacing a poll timer. */
  | { type: 'sleep'; ms: number }
  /** (Re)arms the silence timer: `silent` after `ms`. */
  | { type: 'silence'; ms: number }
  /** Subscribes under the job's id (before the submission, or on `attach`); events come as `event`s. */
  | { type: 'subscribe' }
  /** Gives the event to the caller's callbacks, then feeds `delivered` (or `callback_threw`). */
  | { type: 'emit'; event: SocketEvent }
  /** Reads the ending: a completed job's record unless the socket heard it all, or a failed job's error. Answers `read` / `read_failed`. */
  | { type: 'read'; kind: 'completed'; status: JobStatusResult | undefined; socketHeardAll: boolean }
  | { type: 'read'; kind: 'failure'; status: JobStatusResult }
  /** Stops this job on the server: in the background, or (`confirm`) answering `stopped`. */
  | { type: 'stop'; why: string; confirm?: { reason: unknown } }
  /** Stops every listener and timer: nothing more may change the outcome. */
  | { type: 'unlisten' }
  | { type: 'log'; level: 'debug' | 'info' | 'warn'; message: string; details: Record<string, unknown> }
  /** Resolves or rejects the run. */
  | { type: 'settle'; result: JobResult }
  | { type: 'settle'; error: unknown };

/** Where {@link reduce} leads: the next state and what to do. */
export type Step = [FollowerState, Effect[]];

/**
 * A follower that has not been given its job yet (`submitting`, its submission `idle`).
 *
 * @example
 * ```ts
 * let [s, effects] = [initialFollower(config, 'p1', Date.now()), [] as Effect[]];
 * [s, effects] = reduce(s, { type: 'attach', socket: 'open', aborted: false, now: Date.now() });
 * ```
 */
export function initialFollower(config: FollowerConfig, promptId: string, now: number): FollowerState {
  return {
    config,
    phase: 'submitting',
    submission: 'idle',
    workflow: undefined,
    abort: undefined,
    promptId,
    startedAt: now,
    followed: false,
    entering: undefined,
    early: [],
    outputs: {},
    cachedUnheard: [],
    heardWhole: false,
    dropped: false,
    heardFromJob: false,
    ending: undefined,
    pollInFlight: false,
    pollAgain: false,
    lastPollAt: 0,
    roundTrip: undefined,
    failures: 0,
    lastAnswer: now,
    lastStatus: undefined,
    socket: undefined,
  };
}

/** Whether the job is followed now (live or polling). */
export const following = (s: FollowerState): boolean => s.phase === 'live' || s.phase === 'polling';

