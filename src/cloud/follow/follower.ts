/**
 * The follower of one job: the state machine of `states.ts` driven by the
 * submission, the socket, status polls, the caller's signal and a clock.
 * The socket is a live feed; the job status is the truth (an ending missed
 * while the socket was down is found by polling) and the job record is where
 * outputs the socket did not carry are recovered (DESIGN §8).
 *
 * It only follows: the one thing it does to a job is `jobs.stopJob` (this
 * job, never another) when the caller gives up on it with `stopOnAbort`; an
 * abort rejects once that stop is confirmed, or says the job may still run.
 *
 * @module
 */
import { APIConnectionError, APIError, APIUserAbortError, NotFoundError } from '../../errors.ts';
import { ExecutionError, JobCancelledError, JobTimeoutError, ServerLostError } from '../job-errors.ts';
import type { NodeOutputs, Workflow } from '../../schemas/cloud.ts';
import { count, describeError, errorDetails } from '../../transport/log.ts';
import type { RequestOptions } from '../../transport/options.ts';
import { isImageFrame } from '../frames.ts';
import { filesOf, type JobBackend, type JobStatusResult } from '../jobs.ts';
import type { JobResult, RunOptions } from '../run-options.ts';
import type { BinaryEvent, CloudSocket, SocketEvent } from '../socket.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { asRecord, failureOf, hasOutputs, readCompletedRecord, stopAndConfirm, stopInBackground } from './records.ts';
import { nextState, type FollowInput, type FollowState } from './states.ts';
import { answerLost } from '../submission.ts';

/**
 * The part of `CloudSocket` a follower uses: the client's socket, or one
 * Comfy API v2 job's event stream (`v2/stream.ts`), which has no client id.
 */
export type FollowSocket = Pick<CloudSocket, 'state' | 'on' | 'subscribe'> & {
  readonly clientId: string | undefined;
  /** A feed whose job's end is only confirmed by a poll (v2's stream): a job just submitted is polled at once, not an interval later. */
  readonly pollsAtOnce?: boolean;
};

/** As many early events as the socket holds for a job nobody has claimed (`socket.ts`'s bound; not imported, so the socket stays out of this file's chunk). */
const HOLD_MAX_EVENTS = 2000;
/** The longest a submission waits for a first socket connection still under way. */
const FIRST_ATTEMPT_MS = 1000;
/** While the socket is open, the status is still confirmed every this many poll intervals. */
const OPEN_POLL_FACTOR = 20;
/** How long a server may give no answer before a run gives its job up as lost (`serverLostAfter`). */
const SERVER_LOST_AFTER_MS = 30_000;
/** The shortest gap between two polls while the socket is down. */
const MIN_GAP_MS = 25;
/** While the socket is down, a poll goes out this many of its own round trips after the last went out. */
const GAP_PER_ROUND_TRIP = 4;

/**
 * The gap (ms) from one status poll to the next while the socket is down:
 * four round trips of the poll itself (smoothed), at least 25 ms and at most
 * `pollInterval`; doubled for each poll in a row that got no answer (or a
 * 429). One poll at a time. So an ending is found within one gap and a round
 * trip (about 30 ms on loopback), and a follower keeps at most a quarter of
 * one connection to the server busy: a slow, loaded or distant server is
 * polled less often, down to once per `pollInterval`.
 *
 * @example
 * ```ts
 * downPollGap(2, 1000, 0); // 25: loopback
 * downPollGap(120, 1000, 0); // 480: a distant server
 * downPollGap(2, 1000, 3); // 200: three polls in a row without an answer
 * ```
 */
export function downPollGap(roundTripMs: number | undefined, pollInterval: number, failures: number): number {
  const gap = Math.max(MIN_GAP_MS, Math.round(GAP_PER_ROUND_TRIP * (roundTripMs ?? 0)));
  return Math.min(pollInterval, gap * 2 ** failures);
}

/** How a run that rejected ended, in one word. */
function howEnded(err: unknown): string {
  if (err instanceof JobCancelledError) return 'cancelled';
  if (err instanceof JobTimeoutError) return 'timed_out';
  if (err instanceof APIUserAbortError) return 'aborted';
  return err instanceof ExecutionError ? 'failed' : 'error';
}

const abortError = (signal: AbortSignal) => new APIUserAbortError(undefined, { cause: signal.reason });

/**
 * Resolves once the socket's first connection attempt has an outcome (open,
 * refused, failed) or after `ms`: a job's events sent before its socket is
 * connected are lost for good (a local server sends them only to a connected
 * socket), but a refused socket or a bad key must not delay anything.
 */
function firstAttempt(socket: FollowSocket, ms: number, signal: AbortSignal | undefined, clock: Clock): Promise<void> {
  if (socket.state !== 'connecting') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clock.clearTimeout(timer);
      for (const off of offs) off();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    const offs = [socket.on('open', done), socket.on('reconnecting', done), socket.on('close', done)];
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * One job followed to its end, once: {@link submit} a workflow (`run()`), or
 * {@link attach} to a job that exists (`follow()`). Each input goes through
 * {@link nextState}; what a state does is in `#enter`.
 */
export class JobFollower {
  readonly #jobs: JobBackend;
  readonly #socket: FollowSocket;
  readonly #opts: RunOptions;
  readonly #clock: Clock;
  readonly #interval: number;
  readonly #lostAfter: number;
  readonly #request: RequestOptions;
  /** Whether this run submitted the job (else it was submitted earlier, maybe elsewhere). */
  readonly #justSubmitted: boolean;
  readonly #startedAt: number;
  readonly #result: Promise<JobResult>;
  #resolve!: (result: JobResult) => void;
  #reject!: (err: unknown) => void;

  #state: FollowState = 'submitting';
  /** Whether the job is followed (its submission accepted, or attached to): only then does its end get an outcome line. */
  #followed = false;
  #promptId: string;
  /** Socket listeners and the signal's, undone when the job ends. */
  #offs: Array<() => void> = [];
  #unsubscribe: (() => void) | undefined;
  /** The job's events that arrived while it was being submitted. */
  #early: SocketEvent[] = [];

  // What the socket heard of the job.
  #outputs: Record<string, NodeOutputs> = {};
  /** Cached nodes the socket sent no outputs for (the cloud sends no `executed` for those). */
  #cachedUnheard = new Set<string>();
  /** The job's `execution_start` arrived and the socket never dropped since the subscription: it heard the whole job. */
  #heardWhole = false;
  #dropped = false;
  #heardFromJob = false;

  // Polls: one at a time.
  #pollTimer: TimerHandle;
  #pollInFlight = false;
  /** A poll was asked for while one was in flight (its answer may predate what the new one is for). */
  #pollAgain = false;
  /** When the last poll went out (at first: when following began). */
  #lastPollAt = 0;
  /** Smoothed round trip of a status poll (ms). */
  #roundTrip: number | undefined;
  /** Polls in a row that got no answer. */
  #failures = 0;
  /** The last time the server showed it is alive: an answer to a poll, an open socket, an event. */
  #lastAnswer: number;
  #lastStatus: string | undefined;
  #silence: TimerHandle;

  /**
   * @param justSubmitted Whether this run submits the job: a job followed later may have ended already, and is polled at once.
   */
  constructor(jobs: JobBackend, socket: FollowSocket, promptId: string, opts: RunOptions, clock: Clock, justSubmitted: boolean) {
    this.#jobs = jobs;
    this.#socket = socket;
    this.#promptId = promptId;
    this.#opts = opts;
    this.#clock = clock;
    this.#justSubmitted = justSubmitted;
    this.#interval = opts.pollInterval ?? 1000;
    this.#lostAfter = opts.serverLostAfter ?? SERVER_LOST_AFTER_MS;
    this.#request = { ...(opts.headers ? { headers: opts.headers } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
    this.#startedAt = this.#lastAnswer = clock.now();
    this.#result = new Promise<JobResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The state the follower is in. */
  get state(): FollowState {
    return this.#state;
  }

  /** Subscribes under the job's id, submits `workflow`, and follows the job to its end. */
  submit(workflow: Workflow): Promise<JobResult> {
    this.#submit(workflow).catch((err: unknown) => this.#giveUp(err));
    return this.#result;
  }

  /** Follows a job that exists already. */
  attach(): Promise<JobResult> {
    this.#listen();
    this.#accept(() => this.#subscribe());
    return this.#result;
  }

  async #submit(workflow: Workflow): Promise<void> {
    const { signal, onSubmitted } = this.#opts;
    if (signal?.aborted) return this.#giveUp(abortError(signal));
    this.#listen();
    // Before the request: no event of the job can come before its subscriber.
    this.#subscribe();
    await firstAttempt(this.#socket, FIRST_ATTEMPT_MS, signal, this.#clock);
    if (signal?.aborted) return this.#giveUp(abortError(signal));
    const { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit } = this.#opts;
    let id: string;
    // With stopOnAbort, an abort while the submission is out (its answer may be slow, or being looked up) ends
    // the run at once; the submission is not given the signal, and the job, if it was made, is stopped once it
    // has settled. Without (a caller who stops jobs itself, as the pool does), the run waits for the submission,
    // so that the job it may have made is known by its id before the run gives up.
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      this.#giveUp(new APIUserAbortError(`Aborted while submitting job ${this.#promptId}; it is stopped if it was made`, { cause: signal!.reason, promptId: this.#promptId }));
    };
    if (this.#opts.stopOnAbort) signal?.addEventListener('abort', onAbort, { once: true });
    try {
      ({ prompt_id: id } = await this.#jobs.submit(workflow, { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit, promptId: this.#promptId, clientId: this.#socket.clientId, ...(signal ? { stopBefore: signal } : {}) }));
    } catch (err) {
      if (!abandoned) return this.#giveUp(err);
      // Stopping an id the server never took does nothing.
      if (answerLost(err) === 'maybe') this.#stopOnServer('aborted while submitting');
      return;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (abandoned) {
      this.#promptId = id;
      return this.#stopOnServer('aborted while submitting');
    }
    if (id !== this.#promptId) {
      // A server that does not honour chosen ids: follow its own (the socket holds that job's early events).
      this.#jobs.log?.debug?.(`job ${id}: the server chose this id (${this.#promptId} was sent)`, { promptId: id, sent: this.#promptId });
      this.#unsubscribe?.();
      this.#promptId = id;
      this.#subscribe();
    }
    const nodes = Object.keys(workflow).length;
    this.#jobs.log?.info?.(`job ${id} submitted (${count(nodes, 'node')})`, { promptId: id, nodes, clientId: this.#socket.clientId, socket: this.#socket.state });
    if (onSubmitted) {
      try {
        await onSubmitted(id);
      } catch (err) {
        // Nobody will follow the job this callback was meant to record.
        this.#stopOnServer('onSubmitted threw');
        return this.#giveUp(err);
      }
    }
    this.#accept(() => {
      for (const e of this.#early.splice(0)) this.#onEvent(e);
    });
  }

  /** The job is the follower's now: listen to the signal and the silence, deliver what came first, then enter `live` or `polling`. */
  #accept(deliverFirstEvents: () => void): void {
    if (this.#state !== 'submitting') return;
    this.#followed = true;
    const { signal } = this.#opts;
    if (signal) {
      const onAbort = () => {
        const id = this.#promptId;
        if (!this.#opts.stopOnAbort) return this.#giveUp(new APIUserAbortError(`Aborted; stopped following job ${id} (it keeps running)`, { cause: signal.reason, promptId: id }));
        // Settled now, so that nothing the job still sends decides the outcome; rejected once the server shows it stopped.
        if (!this.#send({ type: 'gave_up' })) return;
        void stopAndConfirm(this.#jobs, id, this.#opts.headers, 'aborted', this.#opts.stopWithin).then((stopError) => {
          const options = { cause: signal.reason, promptId: id };
          this.#finish(undefined, stopError ? new APIUserAbortError(`Aborted; job ${id} may still run: its stop was not confirmed (${describeError(stopError)})`, { ...options, stopError }) : new APIUserAbortError(`Aborted; job ${id} was stopped`, options));
        });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#offs.push(() => signal.removeEventListener('abort', onAbort));
      if (signal.aborted) return onAbort();
    }
    this.#resetSilence();
    // A job submitted now is polled after a first interval; one followed later may have ended already, and so may
    // a short one whose feed only a poll confirms (v2: the poll is the truth).
    this.#lastPollAt = this.#justSubmitted && !this.#socket.pollsAtOnce ? this.#clock.now() : -Infinity;
    const target = nextState(this.#state, { type: 'accepted', socketOpen: this.#socket.state === 'open' })!;
    // In the new state before the first events are delivered (they may end the job at once), acting on it after.
    this.#state = target;
    deliverFirstEvents();
    if (this.#state === target) this.#enter(target, 'submitting');
  }

  /** Moves on `input` as the table says; false when it changes nothing here. */
  #send(input: FollowInput): boolean {
    const target = nextState(this.#state, input);
    if (!target) return false;
    const from = this.#state;
    this.#state = target;
    this.#enter(target, from);
    return true;
  }

  /** What each state does on entry. */
  #enter(state: FollowState, from: FollowState): void {
    const id = this.#promptId;
    switch (state) {
      case 'live':
        if (from !== 'polling') return this.#schedulePoll();
        // Whatever ended while the socket was down shows here.
        this.#jobs.log?.debug?.(`job ${id}: the socket is back; confirming the status once`, { promptId: id });
        return this.#pollNow();
      case 'polling': {
        const gap = this.#cadence();
        this.#jobs.log?.debug?.(`job ${id}: the socket is ${this.#socket.state}; polling the status every ${gap} ms`, { promptId: id, socket: this.#socket.state, intervalMs: gap });
        return this.#schedulePoll();
      }
      case 'settling':
      case 'settled':
        // Nothing more may change the outcome.
        return this.#stopListening();
    }
  }

  #following(): boolean {
    return this.#state === 'live' || this.#state === 'polling';
  }

  #listen(): void {
    const down = () => {
      this.#heardWhole = false;
      this.#dropped = true;
      this.#send({ type: 'socket_down' });
    };
    this.#offs.push(
      this.#socket.on('reconnecting', down),
      this.#socket.on('close', down),
      this.#socket.on('open', () => void this.#send({ type: 'socket_open' })),
    );
  }

  #subscribe(): void {
    const off = this.#socket.subscribe(this.#promptId, this.#onEvent, {
      onLost: () => {
        this.#heardWhole = false;
        this.#dropped = true;
      },
    });
    // Held events replayed by subscribe() may have ended the job already.
    if (this.#state === 'settling' || this.#state === 'settled') off();
    else this.#unsubscribe = off;
  }

  #stopListening(): void {
    this.#clock.clearTimeout(this.#pollTimer);
    this.#clock.clearTimeout(this.#silence);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const off of this.#offs.splice(0)) off();
    this.#early.length = 0;
  }

  // --- polls

  /** The time between polls in this state. */
  #cadence(): number {
    if (this.#state === 'polling') return downPollGap(this.#roundTrip, this.#interval, this.#failures);
    // Live. A job followed later is polled until this socket hears from it: a local
    // server sends a job's events only to the socket that submitted it.
    return this.#justSubmitted || this.#heardFromJob ? this.#interval * OPEN_POLL_FACTOR : this.#interval;
  }

  #schedulePoll(): void {
    this.#clock.clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    if (this.#pollInFlight) return; // its end schedules the next
    const wait = this.#lastPollAt + this.#cadence() - this.#clock.now();
    if (wait <= 0) return void this.#poll();
    this.#pollTimer = this.#clock.setTimeout(() => void this.#poll(), wait);
  }

  #pollNow(): void {
    if (this.#pollInFlight) this.#pollAgain = true;
    else void this.#poll();
  }

  async #poll(): Promise<void> {
    this.#clock.clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    this.#pollInFlight = true;
    const sentAt = (this.#lastPollAt = this.#clock.now());
    try {
      const s = await this.#jobs.getJobStatus(this.#promptId, this.#pollOptions());
      const now = this.#clock.now();
      const rtt = now - sentAt;
      this.#roundTrip = this.#roundTrip === undefined ? rtt : this.#roundTrip + (rtt - this.#roundTrip) / 8;
      this.#failures = 0;
      this.#lastAnswer = now;
      if (this.#following()) this.#onStatus(s);
    } catch (err) {
      if (this.#following()) this.#onPollError(err);
    } finally {
      this.#pollInFlight = false;
      const again = this.#pollAgain;
      this.#pollAgain = false;
      if (again && this.#following()) void this.#poll();
      else if (this.#following()) this.#schedulePoll();
    }
  }

  #pollOptions(): RequestOptions {
    // With the socket down, a poll must end within the bound: a frozen server that accepts
    // connections and never answers would otherwise hold it for the client's timeout and retries.
    const left = this.#lostAfter - (this.#clock.now() - this.#lastAnswer);
    return this.#state === 'live' || !Number.isFinite(left) ? this.#request : { ...this.#request, timeout: Math.max(1, left), retry: { limit: 0 } };
  }

  #onStatus(s: JobStatusResult): void {
    const id = this.#promptId;
    if (s.status !== this.#lastStatus) {
      this.#resetSilence();
      this.#jobs.log?.debug?.(`job ${id}: status ${s.status} (${s.phase})`, { promptId: id, status: s.status, phase: s.phase });
    }
    this.#lastStatus = s.status;
    if (s.phase === 'completed') this.#complete(s);
    else if (s.phase === 'failed' || s.phase === 'cancelled') {
      this.#settle(async () => {
        throw await failureOf(this.#jobs, id, s, this.#request);
      });
    }
  }

  #onPollError(err: unknown): void {
    const id = this.#promptId;
    const now = this.#clock.now();
    const origin = this.#jobs.baseUrl ?? 'the server';
    const busy = err instanceof APIError && err.status === 429;
    // Connection failures, timeouts, 5xx and 429 are tried again (or settled by the next reconnect);
    // a revoked key, an unknown job or an off-spec answer will not get better.
    if (!(err instanceof APIConnectionError || err instanceof APIUserAbortError || busy || (err instanceof APIError && (err.status >= 500 || err.status === 408)))) {
      this.#lastAnswer = now;
      // The server took this job and now does not know it: it restarted and lost its queue.
      return this.#giveUp(err instanceof NotFoundError && this.#justSubmitted ? new ServerLostError(id, origin, 'forgotten', 0, { cause: err }) : err);
    }
    // An open socket is an answer of its own, and so is a server that says it is busy.
    if (this.#state === 'live' || busy) this.#lastAnswer = now;
    this.#failures++;
    const silentMs = now - this.#lastAnswer;
    if (silentMs < this.#lostAfter) return;
    this.#jobs.log?.warn?.(`job ${id}: no answer from ${origin} for ${silentMs} ms; giving the job up as lost`, { promptId: id, server: origin, silentMs, ...errorDetails(err) });
    this.#giveUp(new ServerLostError(id, origin, 'unreachable', silentMs, { cause: err }));
  }

  // --- events

  readonly #onEvent = (e: SocketEvent): void => {
    if (this.#state === 'submitting') return this.#keepForLater(e);
    if (!this.#following()) return;
    const opts = this.#opts;
    this.#heardFromJob = true;
    this.#lastAnswer = this.#clock.now();
    this.#resetSilence();
    if (opts.onEvent && !this.#guard(() => opts.onEvent!(e))) return;
    // An ending whose payload is off-spec still ends the job.
    const type = e.type === 'invalid' ? e.rawType : e.type;
    switch (type) {
      case 'executed': {
        if (e.type !== 'executed') break;
        const node = e.data.node;
        if (typeof node === 'string' && e.data.output) {
          this.#outputs[node] = mergeOutputs(this.#outputs[node], e.data.output as NodeOutputs);
          this.#cachedUnheard.delete(node);
        }
        break;
      }
      case 'execution_cached': {
        const nodes = (e as { data?: { nodes?: unknown } }).data?.nodes;
        if (Array.isArray(nodes)) for (const n of nodes) if (typeof n === 'string' && !this.#outputs[n]) this.#cachedUnheard.add(n);
        break;
      }
      case 'progress':
        if (e.type === 'progress' && opts.onProgress) this.#guard(() => opts.onProgress!({ value: e.data.value as number, max: e.data.max as number, node: e.data.node as string | undefined }));
        break;
      case 'binary': {
        const f = (e as BinaryEvent).frame;
        if (opts.onPreview && isImageFrame(f)) this.#guard(() => opts.onPreview!(f));
        break;
      }
      case 'execution_start':
        this.#heardWhole = !this.#dropped;
        break;
      case 'execution_success':
        this.#complete();
        break;
      case 'execution_error':
        this.#giveUp(new ExecutionError(this.#promptId, (e as { data?: Record<string, unknown> }).data));
        break;
      case 'execution_interrupted':
        this.#giveUp(new JobCancelledError(this.#promptId, (e as { data?: Record<string, unknown> }).data));
        break;
      case 'unknown':
        // A v2 stream's status (`v2/events.ts`, not imported: the v2 chunk stays out of this one): its end is
        // confirmed by the poll, which carries the outputs (the poll is the truth).
        if (e.type === 'unknown' && e.rawType === 'job_status' && (e.data as { terminal?: unknown } | undefined)?.terminal === true) this.#pollNow();
        break;
    }
  };

  /** An event of a job still being submitted waits for the answer (`onSubmitted` comes first); previews are for the moment they arrive. */
  #keepForLater(e: SocketEvent): void {
    if (e.type === 'binary') return;
    // As many as the socket holds for a job nobody has claimed.
    if (this.#early.length < HOLD_MAX_EVENTS) this.#early.push(e);
    else this.#dropped = true;
  }

  // --- endings

  /** The job completed: its outputs, from the socket when it heard the whole job and said so, else from the record. */
  #complete(fromStatus?: JobStatusResult): void {
    // An ending found by a status poll may come before the last `executed` arrives. Outputs of any
    // kind count: a job whose only output is text, heard whole, needs no record either.
    const socketHeardAll = fromStatus === undefined && this.#heardWhole && this.#cachedUnheard.size === 0 && Object.keys(this.#outputs).length > 0;
    const id = this.#promptId;
    const outputs = this.#outputs;
    this.#settle(async () => {
      let record = hasOutputs(fromStatus) ? asRecord(fromStatus, id) : undefined;
      if (!record && !socketHeardAll) record = await readCompletedRecord(this.#jobs, id, this.#request, this.#clock);
      // The record is the server's own account: it wins for every node it lists.
      if (record?.outputs) {
        const heardNodes = Object.keys(outputs).length;
        Object.assign(outputs, record.outputs);
        this.#jobs.log?.debug?.(`job ${id}: outputs reconciled with the job record (${count(heardNodes, 'node')} heard on the socket, ${Object.keys(record.outputs).length} in the record)`, {
          promptId: id,
          socketNodes: heardNodes,
          recordNodes: Object.keys(record.outputs).length,
          endedBy: fromStatus === undefined ? 'socket' : 'status',
        });
      }
      return { promptId: id, status: 'completed', outputs, files: filesOf(outputs), ...(record ? { record } : {}) };
    });
  }

  /** The job ended: `settling` while `read` reads what it ended with, then `settled`. */
  #settle(read: () => Promise<JobResult>): void {
    if (!this.#send({ type: 'ended' })) return;
    read().then(
      (result) => this.#finish(result, undefined),
      (err: unknown) => this.#finish(undefined, err),
    );
  }

  /** Ends the run at once with `err`. */
  #giveUp(err: unknown): void {
    if (this.#send({ type: 'gave_up' })) this.#finish(undefined, err);
  }

  #finish(result: JobResult | undefined, err: unknown): void {
    this.#send({ type: 'done' });
    if (this.#followed) this.#logOutcome(result, err);
    if (result) this.#resolve(result);
    else this.#reject(err);
  }

  #logOutcome(result: JobResult | undefined, err: unknown): void {
    const log = this.#jobs.log;
    if (!log?.info) return;
    const id = this.#promptId;
    const ms = this.#clock.now() - this.#startedAt;
    if (result) {
      log.info(`job ${id} completed in ${ms} ms: ${count(result.files.length, 'file')} from ${count(Object.keys(result.outputs).length, 'node')}`, { promptId: id, status: 'completed', durationMs: ms, outputs: Object.keys(result.outputs).length, files: result.files.length });
    } else {
      log.info(`job ${id} ended without a result after ${ms} ms: ${howEnded(err)} (${describeError(err)})`, { promptId: id, status: howEnded(err), durationMs: ms, ...errorDetails(err) });
    }
  }

  // --- the caller's side

  #stopOnServer(why: string): void {
    if (this.#opts.stopOnAbort) stopInBackground(this.#jobs, this.#promptId, this.#opts.headers, why);
  }

  /** A callback that throws ends the run with its error (and stops the job nobody follows any more) instead of escaping into the socket. */
  #guard(f: () => void): boolean {
    try {
      f();
      return true;
    } catch (err) {
      this.#stopOnServer('a callback threw');
      this.#giveUp(err instanceof Error ? err : new Error(String(err)));
      return false;
    }
  }

  #resetSilence(): void {
    const ms = this.#opts.timeout;
    if (!ms || (!this.#following() && this.#state !== 'submitting')) return;
    this.#clock.clearTimeout(this.#silence);
    this.#silence = this.#clock.setTimeout(() => {
      this.#stopOnServer(`silent for ${ms} ms`);
      this.#giveUp(new JobTimeoutError(this.#promptId, ms));
    }, ms);
  }
}

function mergeOutputs(a: NodeOutputs | undefined, b: NodeOutputs): NodeOutputs {
  if (!a) return b;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Array.isArray(v) && Array.isArray(out[k]) ? [...(out[k] as unknown[]), ...v] : v;
  return out as NodeOutputs;
}
