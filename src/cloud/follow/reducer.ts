/**
 * The follower of one job as a pure reducer: `(state, input) → [state,
 * effects]`. Its phase is the machine of `states.ts` (`submitting`, `live`,
 * `polling`, `settling`, `settled`), and inside `submitting` the submission's
 * (`SUBMISSION`: the request, its answer, `onSubmitted`, what an abort does at
 * each step); beside them, what the socket heard of the job and where the
 * polls are. It does nothing itself: an effect is data
 * (`poll`, `sleep`, `emit`, `read`, `settle`, …) that the driver
 * (`follower.ts`) performs, feeding what came of it back as an input.
 *
 * Every input carries `now` (the driver's clock), so time is an input too and
 * a table of inputs replays a follower exactly (`test/cloud/follow/reducer.test.ts`).
 *
 * @module
 */
import { APIConnectionError, APIError, APIUserAbortError, NotFoundError } from '../../errors.ts';
import { ExecutionError, JobCancelledError, JobTimeoutError, ServerLostError } from '../job-errors.ts';
import type { NodeOutputs } from '../../schemas/cloud.ts';
import { count, describeError, errorDetails } from '../../transport/log.ts';
import type { JobStatusResult } from '../jobs.ts';
import type { JobResult } from '../run-options.ts';
import type { SocketEvent, SocketState } from '../socket/types.ts';
import { answerLost } from '../submission.ts';
import { following, type Effect, type FollowerInput, type FollowerState, type Step } from './model.ts';
import { completed, downPollGap, log, mergeOutputs, outcome } from './rules.ts';
import { jobEndOf, nextState, nextSubmissionStep, type FollowInput, type FollowState, type SubmissionInput } from './states.ts';

export { following, initialFollower, type Effect, type FollowerConfig, type FollowerInput, type FollowerState, type Step } from './model.ts';

/** As many early events as the socket holds for a job nobody has claimed (`socket/routes.ts`' bound; not imported, so the socket stays out of this file's chunk). */
const HOLD_MAX_EVENTS = 2000;
/** While the socket is open, the status is still confirmed every this many poll intervals. */
const OPEN_POLL_FACTOR = 20;
/** The longest a submission waits for a first socket connection still under way. */
const FIRST_ATTEMPT_MS = 1000;


/**
 * The follower's next state, and what the driver is to do, on `input`. Pure.
 *
 * @example
 * ```ts
 * const [next, effects] = reduce(state, { type: 'socket_down', socket: 'reconnecting', now });
 * // next.phase: 'polling'; effects: a log line and a `sleep` or a `poll`
 * ```
 */
export function reduce(state: FollowerState, input: FollowerInput): Step {
  const fx: Effect[] = [];
  const s = step(state, input, fx);
  return [s, fx];
}

function step(s: FollowerState, input: FollowerInput, fx: Effect[]): FollowerState {
  const now = input.now;
  switch (input.type) {
    case 'submit':
    case 'attach':
    case 'socket_tried':
    case 'submitted':
    case 'submit_failed':
    case 'resubscribed':
    case 'recorded':
    case 'record_failed':
      return submission(s, input, fx);
    case 'enter':
      if (s.entering === undefined) return s;
      return s.phase === s.entering ? enter({ ...s, entering: undefined }, s.phase, 'submitting', now, fx) : { ...s, entering: undefined };
    case 'event':
      return onEvent(s, input.event, now, fx);
    case 'delivered':
      return following(s) ? replayNext(heard(s, input.event, now, fx), now, fx) : s;
    case 'callback_threw':
      stopOnServer(s, 'a callback threw', fx);
      return giveUp(s, input.error instanceof Error ? input.error : new Error(String(input.error)), now, fx);
    case 'socket_open':
      return move({ ...s, socket: 'open' }, { type: 'socket_open' }, now, fx);
    case 'socket_down':
      return move({ ...s, heardWhole: false, dropped: true, socket: input.socket }, { type: 'socket_down' }, now, fx);
    case 'lost':
      return { ...s, heardWhole: false, dropped: true };
    case 'poll_due':
      return following(s) ? poll(s, now, fx) : s;
    case 'poll_answer': {
      const rtt = now - s.lastPollAt;
      const answered = { ...s, roundTrip: s.roundTrip === undefined ? rtt : s.roundTrip + (rtt - s.roundTrip) / 8, failures: 0, lastAnswer: now };
      return afterPoll(following(s) ? onStatus(answered, input.status, now, fx) : answered, now, fx);
    }
    case 'poll_failed':
      return afterPoll(following(s) ? onPollError(s, input.error, now, fx) : s, now, fx);
    case 'silent': {
      if (!following(s) && s.phase !== 'submitting') return s;
      const ms = s.config.timeout!;
      stopOnServer(s, `silent for ${ms} ms`, fx);
      return giveUp(s, new JobTimeoutError(s.promptId, ms), now, fx);
    }
    case 'aborted':
      return s.phase === 'submitting' ? submission(s, input, fx) : abort(s, input.reason, now, fx);
    case 'read':
      return s.phase === 'settling' ? finish(s, completed(s, input.record, fx), undefined, now, fx) : s;
    case 'read_failed':
      return s.phase === 'settling' ? finish(s, undefined, input.error, now, fx) : s;
    case 'stopped': {
      const id = s.promptId;
      const options = { cause: input.reason, promptId: id };
      const err = input.stopError
        ? new APIUserAbortError(`Aborted; job ${id} may still run: its stop was not confirmed (${describeError(input.stopError)})`, { ...options, stopError: input.stopError })
        : new APIUserAbortError(`Aborted; job ${id} was stopped`, options);
      return finish(s, undefined, err, now, fx);
    }
  }
}

// --- the submission

type SubmissionStepInput = Extract<FollowerInput, { type: 'submit' | 'attach' | 'socket_tried' | 'submitted' | 'submit_failed' | 'resubscribed' | 'recorded' | 'record_failed' | 'aborted' }>;

/** An input of the submission, as its table (`SUBMISSION` in `states.ts`) reads it. */
function asSubmissionInput(s: FollowerState, input: SubmissionStepInput): SubmissionInput {
  const records = s.config.onSubmitted;
  switch (input.type) {
    case 'submit':
      return { type: 'submit', aborted: input.aborted };
    case 'submitted':
      return { type: 'submitted', sameId: input.promptId === s.promptId, records };
    case 'resubscribed':
      return { type: 'resubscribed', records };
    case 'submit_failed':
    case 'record_failed':
      return { type: 'failed' };
    case 'aborted':
      return { type: 'aborted', stopOnAbort: s.config.stopOnAbort };
    default:
      return { type: input.type };
  }
}

/** Moves the submission as its table says, doing what the step entered does. */
function submission(s: FollowerState, input: SubmissionStepInput, fx: Effect[]): FollowerState {
  const from = s.submission;
  const to = nextSubmissionStep(from, asSubmissionInput(s, input));
  if (to === undefined) return s;
  const now = input.now;
  const id = s.promptId;
  s = { ...s, submission: to };
  switch (input.type) {
    case 'submit':
      if (to === 'done') return giveUp(s, new APIUserAbortError(undefined, { cause: input.abortReason }), now, fx);
      // Subscribed before the request: no event of the job can come before its subscriber. A job's events sent
      // before its socket is connected are lost for good (a local server sends them only to a connected socket),
      // but a refused socket or a bad key must not delay anything.
      fx.push({ type: 'listen' }, { type: 'subscribe' }, { type: 'first_attempt', ms: FIRST_ATTEMPT_MS });
      return { ...s, workflow: input.workflow };
    case 'attach':
      fx.push({ type: 'listen' });
      return accept(input.aborted ? { ...s, abort: { reason: input.abortReason } } : s, input.socket, now, fx);
    case 'socket_tried':
      fx.push({ type: 'send', workflow: s.workflow! });
      return s;
    case 'aborted':
      if (to === 'done') return giveUp(s, new APIUserAbortError(undefined, { cause: input.reason }), now, fx);
      // With stopOnAbort, an abort while the submission is out (its answer may be slow, or being looked up) ends
      // the run at once; the submission is not given the signal, and the job, if it was made, is stopped once it
      // has settled. Without (a caller who stops jobs itself, as the pool does), the run waits for the submission,
      // so that the job it may have made is known by its id before the run gives up.
      if (to === 'abandoned') return giveUp(s, new APIUserAbortError(`Aborted while submitting job ${id}; it is stopped if it was made`, { cause: input.reason, promptId: id }), now, fx);
      return { ...s, abort: s.abort ?? { reason: input.reason } };
    case 'submit_failed':
      if (from !== 'abandoned') return giveUp(s, input.error, now, fx);
      // Stopping an id the server never took does nothing.
      if (answerLost(input.error) === 'maybe') stopOnServer(s, 'aborted while submitting', fx);
      return s;
    case 'submitted':
      s = { ...s, promptId: input.promptId, socket: input.socket };
      if (from === 'abandoned') {
        stopOnServer(s, 'aborted while submitting', fx);
        return s;
      }
      if (to !== 'resubscribing') return submitted(s, now, fx);
      // A server that does not honour chosen ids: follow its own (the socket holds that job's early events).
      fx.push(log('debug', `job ${input.promptId}: the server chose this id (${id} was sent)`, { promptId: input.promptId, sent: id }), { type: 'resubscribe' });
      return s;
    case 'resubscribed':
      return submitted({ ...s, socket: input.socket }, now, fx);
    case 'recorded':
      return accept(s, input.socket, now, fx);
    case 'record_failed':
      // Nobody will follow the job this callback was meant to record.
      stopOnServer(s, 'onSubmitted threw', fx);
      return giveUp(s, input.error, now, fx);
  }
}

/** The server took the job under the id followed: `onSubmitted` is told, or the job is accepted. */
function submitted(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  const id = s.promptId;
  const nodes = Object.keys(s.workflow ?? {}).length;
  fx.push(log('info', `job ${id} submitted (${count(nodes, 'node')})`, { promptId: id, nodes, clientId: s.config.clientId, socket: s.socket }));
  if (s.submission === 'recording') {
    fx.push({ type: 'record' });
    return s;
  }
  return accept(s, s.socket!, now, fx);
}

/** The job is the follower's now: the silence starts, its first events are delivered, then it enters `live` or `polling`. */
function accept(s: FollowerState, socket: SocketState, now: number, fx: Effect[]): FollowerState {
  if (s.phase !== 'submitting') return s;
  s = { ...s, followed: true, socket };
  if (s.abort) return abort(s, s.abort.reason, now, fx);
  resetSilence(s, fx);
  const target = nextState(s.phase, { type: 'accepted', socketOpen: socket === 'open' })!;
  // A job submitted now is polled after a first interval; one followed later may have ended already, and so may
  // a short one whose feed only a poll confirms (v2: the poll is the truth).
  const lastPollAt = s.config.justSubmitted && !s.config.pollsAtOnce ? now : -Infinity;
  // In the new phase before the first events are delivered (they may end the job at once), entering it after.
  s = { ...s, phase: target, entering: target, lastPollAt };
  if (!s.config.justSubmitted) {
    fx.push({ type: 'subscribe' }, { type: 'enter' });
    return s;
  }
  s = replayNext(s, now, fx);
  fx.push({ type: 'enter' });
  return s;
}

/** Delivers the next early event, if the job is still followed; `enter` follows the last. */
function replayNext(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  if (s.early.length === 0 || !following(s)) return s.early.length === 0 ? s : { ...s, early: [] };
  const [first, ...rest] = s.early;
  return onEvent({ ...s, early: rest }, first!, now, fx);
}

/** Moves on `input` as the table of `states.ts` says, doing what the new phase does on entry. */
function move(s: FollowerState, input: FollowInput, now: number, fx: Effect[]): FollowerState {
  const target = nextState(s.phase, input);
  return target ? enter({ ...s, phase: target }, target, s.phase, now, fx) : s;
}

/** What each phase does on entry. */
function enter(s: FollowerState, phase: FollowState, from: FollowState, now: number, fx: Effect[]): FollowerState {
  const id = s.promptId;
  switch (phase) {
    case 'live':
      if (from !== 'polling') return schedulePoll(s, now, fx);
      // Whatever ended while the socket was down shows here.
      fx.push(log('debug', `job ${id}: the socket is back; confirming the status once`, { promptId: id }));
      return pollNow(s, now, fx);
    case 'polling': {
      const gap = cadence(s);
      fx.push(log('debug', `job ${id}: the socket is ${s.socket}; polling the status every ${gap} ms`, { promptId: id, socket: s.socket, intervalMs: gap }));
      return schedulePoll(s, now, fx);
    }
    default:
      // Settling or settled: nothing more may change the outcome.
      fx.push({ type: 'unlisten' });
      return { ...s, early: [] };
  }
}

// --- polls

/** The time between polls in this phase. */
function cadence(s: FollowerState): number {
  const { interval, justSubmitted } = s.config;
  if (s.phase === 'polling') return downPollGap(s.roundTrip, interval, s.failures);
  // Live. A job followed later is polled until this socket hears from it: a local
  // server sends a job's events only to the socket that submitted it.
  return justSubmitted || s.heardFromJob ? interval * OPEN_POLL_FACTOR : interval;
}

function schedulePoll(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  if (s.pollInFlight) return s; // its end schedules the next
  const wait = s.lastPollAt + cadence(s) - now;
  if (wait <= 0) return poll(s, now, fx);
  fx.push({ type: 'sleep', ms: wait });
  return s;
}

function pollNow(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  return s.pollInFlight ? { ...s, pollAgain: true } : poll(s, now, fx);
}

function poll(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  // With the socket down, a poll must end within the bound: a frozen server that accepts
  // connections and never answers would otherwise hold it for the client's timeout and retries.
  const left = s.config.lostAfter - (now - s.lastAnswer);
  fx.push(s.phase === 'live' || !Number.isFinite(left) ? { type: 'poll' } : { type: 'poll', timeout: Math.max(1, left) });
  return { ...s, pollInFlight: true, lastPollAt: now };
}

/** A poll is over: the next one, at once when one was asked for meanwhile. */
function afterPoll(s: FollowerState, now: number, fx: Effect[]): FollowerState {
  const again = s.pollAgain;
  s = { ...s, pollInFlight: false, pollAgain: false };
  if (!following(s)) return s;
  return again ? poll(s, now, fx) : schedulePoll(s, now, fx);
}

function onStatus(s: FollowerState, status: JobStatusResult, now: number, fx: Effect[]): FollowerState {
  const id = s.promptId;
  if (status.status !== s.lastStatus) {
    resetSilence(s, fx);
    fx.push(log('debug', `job ${id}: status ${status.status} (${status.phase})`, { promptId: id, status: status.status, phase: status.phase }));
  }
  s = { ...s, lastStatus: status.status };
  if (status.phase === 'completed') return complete(s, status, now, fx);
  if (status.phase === 'failed' || status.phase === 'cancelled') return settle({ ...s, ending: { end: status.phase, by: 'status' } }, { type: 'read', kind: 'failure', status }, now, fx);
  return s;
}

function onPollError(s: FollowerState, err: unknown, now: number, fx: Effect[]): FollowerState {
  const id = s.promptId;
  const { origin, lostAfter, justSubmitted } = s.config;
  const busy = err instanceof APIError && err.status === 429;
  // Connection failures, timeouts, 5xx and 429 are tried again (or settled by the next reconnect);
  // a revoked key, an unknown job or an off-spec answer will not get better.
  if (!(err instanceof APIConnectionError || err instanceof APIUserAbortError || busy || (err instanceof APIError && (err.status >= 500 || err.status === 408)))) {
    // The server took this job and now does not know it: it restarted and lost its queue.
    return giveUp({ ...s, lastAnswer: now }, err instanceof NotFoundError && justSubmitted ? new ServerLostError(id, origin, 'forgotten', 0, { cause: err }) : err, now, fx);
  }
  // An open socket is an answer of its own, and so is a server that says it is busy.
  s = { ...s, failures: s.failures + 1, lastAnswer: s.phase === 'live' || busy ? now : s.lastAnswer };
  const silentMs = now - s.lastAnswer;
  if (silentMs < lostAfter) return s;
  fx.push(log('warn', `job ${id}: no answer from ${origin} for ${silentMs} ms; giving the job up as lost`, { promptId: id, server: origin, silentMs, ...errorDetails(err) }));
  return giveUp(s, new ServerLostError(id, origin, 'unreachable', silentMs, { cause: err }), now, fx);
}

// --- events

function onEvent(s: FollowerState, e: SocketEvent, now: number, fx: Effect[]): FollowerState {
  if (s.phase === 'submitting') return keepForLater(s, e);
  if (!following(s)) return s;
  s = { ...s, heardFromJob: true, lastAnswer: now };
  resetSilence(s, fx);
  fx.push({ type: 'emit', event: e });
  return s;
}

/** An event of a job still being submitted waits for the answer (`onSubmitted` comes first); previews are for the moment they arrive. */
function keepForLater(s: FollowerState, e: SocketEvent): FollowerState {
  if (e.type === 'binary') return s;
  // As many as the socket holds for a job nobody has claimed.
  return s.early.length < HOLD_MAX_EVENTS ? { ...s, early: [...s.early, e] } : { ...s, dropped: true };
}

/** What an event the caller has seen says of the job. */
function heard(s: FollowerState, e: SocketEvent, now: number, fx: Effect[]): FollowerState {
  // An ending whose payload is off-spec still ends the job.
  const type = e.type === 'invalid' ? e.rawType : e.type;
  const end = jobEndOf(type);
  if (end === 'completed') return complete(s, undefined, now, fx);
  const data = (e as { data?: Record<string, unknown> }).data;
  if (end) return giveUp({ ...s, ending: { end, by: 'socket', ...(data ? { data } : {}) } }, end === 'failed' ? new ExecutionError(s.promptId, data) : new JobCancelledError(s.promptId, data), now, fx);
  switch (type) {
    case 'executed': {
      if (e.type !== 'executed') return s;
      const node = e.data.node;
      if (typeof node !== 'string' || !e.data.output) return s;
      return { ...s, outputs: { ...s.outputs, [node]: mergeOutputs(s.outputs[node], e.data.output as NodeOutputs) }, cachedUnheard: s.cachedUnheard.filter((n) => n !== node) };
    }
    case 'execution_cached': {
      const nodes = (e as { data?: { nodes?: unknown } }).data?.nodes;
      if (!Array.isArray(nodes)) return s;
      const unheard = [...s.cachedUnheard];
      for (const n of nodes) if (typeof n === 'string' && !s.outputs[n] && !unheard.includes(n)) unheard.push(n);
      return { ...s, cachedUnheard: unheard };
    }
    case 'execution_start':
      return { ...s, heardWhole: !s.dropped };
    case 'unknown':
      // A v2 stream's status (`v2/events.ts`, not imported: the v2 chunk stays out of this one): its end is
      // confirmed by the poll, which carries the outputs (the poll is the truth).
      if (e.type === 'unknown' && e.rawType === 'job_status' && (e.data as { terminal?: unknown } | undefined)?.terminal === true) return pollNow(s, now, fx);
      return s;
    default:
      return s;
  }
}

// --- endings

/** The job completed: its outputs, from the socket when it heard the whole job and said so, else from the record. */
function complete(s: FollowerState, fromStatus: JobStatusResult | undefined, now: number, fx: Effect[]): FollowerState {
  // An ending found by a status poll may come before the last `executed` arrives. Outputs of any
  // kind count: a job whose only output is text, heard whole, needs no record either.
  const socketHeardAll = fromStatus === undefined && s.heardWhole && s.cachedUnheard.length === 0 && Object.keys(s.outputs).length > 0;
  return settle({ ...s, ending: { end: 'completed', by: fromStatus === undefined ? 'socket' : 'status' } }, { type: 'read', kind: 'completed', status: fromStatus, socketHeardAll }, now, fx);
}

/** The job ended: `settling` while `read` reads what it ended with. */
function settle(s: FollowerState, read: Effect, now: number, fx: Effect[]): FollowerState {
  const next = move(s, { type: 'ended' }, now, fx);
  if (next !== s) fx.push(read);
  return next;
}

/** Ends the run at once with `err`. */
function giveUp(s: FollowerState, err: unknown, now: number, fx: Effect[]): FollowerState {
  const next = move(s, { type: 'gave_up' }, now, fx);
  return next === s ? s : finish(next, undefined, err, now, fx);
}

function finish(s: FollowerState, result: JobResult | undefined, err: unknown, now: number, fx: Effect[]): FollowerState {
  s = move(s, { type: 'done' }, now, fx);
  if (s.followed) fx.push(outcome(s, result, err, now));
  fx.push(result ? { type: 'settle', result } : { type: 'settle', error: err });
  return s;
}

/** The caller's signal aborted: stop following, and with `stopOnAbort` stop the job and settle once its stop is confirmed (or not). */
function abort(s: FollowerState, reason: unknown, now: number, fx: Effect[]): FollowerState {
  const id = s.promptId;
  if (!s.config.stopOnAbort) return giveUp(s, new APIUserAbortError(`Aborted; stopped following job ${id} (it keeps running)`, { cause: reason, promptId: id }), now, fx);
  // Settled now, so that nothing the job still sends decides the outcome; rejected once the server shows it stopped.
  const next = move(s, { type: 'gave_up' }, now, fx);
  if (next !== s) fx.push({ type: 'stop', why: 'aborted', confirm: { reason } });
  return next;
}

// --- the caller's side

function stopOnServer(s: FollowerState, why: string, fx: Effect[]): void {
  if (s.config.stopOnAbort) fx.push({ type: 'stop', why });
}

function resetSilence(s: FollowerState, fx: Effect[]): void {
  const ms = s.config.timeout;
  if (ms && (following(s) || s.phase === 'submitting')) fx.push({ type: 'silence', ms });
}
