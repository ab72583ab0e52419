/**
 * What the follower's reducer (`reducer.ts`) reads and returns: its state,
 * its inputs and its effects, all plain data.
 *
 * @module
 */
import type { NodeOutputs } from '../../schemas/cloud.ts';
import type { JobRecord, JobStatusResult } from '../jobs.ts';
import type { JobResult } from '../run-options.ts';
import type { SocketEvent, SocketState } from '../socket/types.ts';
import type { FollowState } from './states.ts';

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
}

/** Everything a follower knows. Immutable: {@link reduce} returns a new one. */
export interface FollowerState {
  readonly config: FollowerConfig;
  readonly phase: FollowState;
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
  /** How the job's completion was found (for the reconcile line). */
  readonly endedBy: 'socket' | 'status' | undefined;
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
  /** The job is the follower's (submission answered, or attached): `replay` its early events, or `subscribe` (they come as `event`s). */
  | { type: 'accepted'; promptId: string; socket: SocketState; aborted: boolean; abortReason?: unknown }
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
  /** The run ends from outside the machine (the submission failed, was aborted, or `onSubmitted` threw). */
  | { type: 'give_up'; error: unknown }
);

/** What the driver does. */
export type Effect =
  /** Reads the job's status (`timeout`: the bound of a poll while the socket is down). Answers `poll_answer` / `poll_failed`. */
  | { type: 'poll'; timeout?: number }
  /** Feeds `poll_due` after `ms`, replacing a poll timer. */
  | { type: 'sleep'; ms: number }
  /** (Re)arms the silence timer: `silent` after `ms`. */
  | { type: 'silence'; ms: number }
  /** Subscribes under the job's id (`accepted` of a job followed later). */
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
 * A follower that has not been given its job yet (`submitting`).
 *
 * @example
 * ```ts
 * let [s, effects] = [initialFollower(config, 'p1', Date.now()), [] as Effect[]];
 * [s, effects] = reduce(s, { type: 'accepted', promptId: 'p1', socket: 'open', aborted: false, now: Date.now() });
 * ```
 */
export function initialFollower(config: FollowerConfig, promptId: string, now: number): FollowerState {
  return {
    config,
    phase: 'submitting',
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
    endedBy: undefined,
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

