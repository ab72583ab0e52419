/**
 * The follower of one job: the pure reducer of `reducer.ts` (the submission,
 * states, polls, endings) and this thin driver, which feeds it the socket,
 * the answers of the requests it makes, the caller's signal and a clock, and
 * performs the effects it returns (the submission and `onSubmitted`,
 * subscriptions, timers, HTTP reads through `records.ts`, the caller's
 * callbacks, settling). The socket is a live feed; the job status is
 * the truth (an ending missed while the socket was down is found by polling)
 * and the job record is where outputs the socket did not carry are recovered
 * (DESIGN §8).
 *
 * It only follows: the one thing it does to a job is `jobs.stopJob` (this
 * job, never another) when the caller gives up on it with `stopOnAbort`; an
 * abort rejects once that stop is confirmed, or says the job may still run.
 *
 * @module
 */
import type { Workflow } from '../../schemas/cloud.ts';
import type { RequestOptions } from '../../transport/options.ts';
import { isImageFrame } from '../frames.ts';
import type { JobBackend } from '../jobs.ts';
import type { JobResult, RunOptions } from '../run-options.ts';
import type { CloudSocket, SocketEvent } from '../socket.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { asRecord, failureOf, hasOutputs, readCompletedRecord, stopAndConfirm, stopInBackground } from './records.ts';
import { initialFollower, reduce, type Effect, type FollowerInput, type FollowerState } from './reducer.ts';
import { FOLLOWER_STATES, type FollowerStatesListener, type FollowState } from './states.ts';

export { downPollGap } from './rules.ts';

/**
 * The part of `CloudSocket` a follower uses: the client's socket, or one
 * Comfy API v2 job's event stream (`v2/stream.ts`), which has no client id.
 */
export type FollowSocket = Pick<CloudSocket, 'state' | 'on' | 'subscribe'> & {
  readonly clientId: string | undefined;
  /** A feed whose job's end is only confirmed by a poll (v2's stream): a job just submitted is polled at once, not an interval later. */
  readonly pollsAtOnce?: boolean;
};

/** How long a server may give no answer before a run gives its job up as lost (`serverLostAfter`). */
const SERVER_LOST_AFTER_MS = 30_000;

/** Input without its time stamp: the driver stamps it. */
type Unstamped = FollowerInput extends infer I ? (I extends unknown ? Omit<I, 'now'> : never) : never;

/**
 * One job followed to its end, once: {@link submit} a workflow (`run()`), or
 * {@link attach} to a job that exists (`follow()`). Every input goes through
 * the reducer; this class only performs what it says.
 */
export class JobFollower {
  readonly #jobs: JobBackend;
  readonly #socket: FollowSocket;
  readonly #opts: RunOptions;
  readonly #clock: Clock;
  readonly #request: RequestOptions;
  /** The internal listener of the follower's states (`FOLLOWER_STATES`), if the caller passed one. */
  readonly #told: FollowerStatesListener | undefined;
  readonly #result: Promise<JobResult>;
  #resolve!: (result: JobResult) => void;
  #reject!: (err: unknown) => void;
  #s: FollowerState;
  /** Socket listeners, the signal's and a first connection's wait, undone when the job ends. */
  readonly #offs: Array<() => void> = [];
  #unsubscribe: (() => void) | undefined;
  #pollTimer: TimerHandle;
  #silence: TimerHandle;
  /** Inputs that came while effects were being performed: taken in turn, so no effect runs inside another. */
  readonly #inbox: Unstamped[] = [];
  /** Inputs taken once the inbox is empty (`enter`). */
  readonly #later: Unstamped[] = [];
  #busy = false;

  /**
   * @param justSubmitted Whether this run submits the job: a job followed later may have ended already, and is polled at once.
   */
  constructor(jobs: JobBackend, socket: FollowSocket, promptId: string, opts: RunOptions, clock: Clock, justSubmitted: boolean) {
    this.#jobs = jobs;
    this.#socket = socket;
    this.#opts = opts;
    this.#clock = clock;
    this.#told = (opts as { [FOLLOWER_STATES]?: FollowerStatesListener })[FOLLOWER_STATES];
    this.#request = { ...(opts.headers ? { headers: opts.headers } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
    const config = {
      interval: opts.pollInterval ?? 1000,
      lostAfter: opts.serverLostAfter ?? SERVER_LOST_AFTER_MS,
      timeout: opts.timeout,
      stopOnAbort: !!opts.stopOnAbort,
      justSubmitted,
      pollsAtOnce: !!socket.pollsAtOnce,
      origin: jobs.baseUrl ?? 'the server',
      onSubmitted: !!opts.onSubmitted,
      clientId: socket.clientId,
    };
    this.#s = initialFollower(config, promptId, clock.now());
    this.#result = new Promise<JobResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The state the follower is in. */
  get state(): FollowState {
    return this.#s.phase;
  }

  /** Subscribes under the job's id, submits `workflow`, and follows the job to its end. */
  submit(workflow: Workflow): Promise<JobResult> {
    const { signal } = this.#opts;
    this.#send({ type: 'submit', workflow, aborted: signal?.aborted === true, abortReason: signal?.reason });
    return this.#result;
  }

  /** Follows a job that exists already. */
  attach(): Promise<JobResult> {
    const { signal } = this.#opts;
    this.#send({ type: 'attach', socket: this.#socket.state, aborted: signal?.aborted === true, abortReason: signal?.reason });
    return this.#result;
  }

  /**
   * Feeds one input to the reducer and performs what it says, in order. An
   * input sent by an effect (a callback's `delivered`, an event a subscription
   * replays) waits for the effects before it: the reducer puts such an effect
   * last, and a long replay does not nest.
   */
  #send(input: Unstamped): void {
    this.#inbox.push(input);
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (let next = this.#inbox.shift() ?? this.#later.shift(); next; next = this.#inbox.shift() ?? this.#later.shift()) {
        // Stamped in place: every input is a fresh object of this driver's (no copy per event).
        (next as FollowerInput).now = this.#clock.now();
        const [state, effects] = reduce(this.#s, next as FollowerInput);
        const moved = state.phase !== this.#s.phase;
        this.#s = state;
        if (moved) this.#tell(state);
        for (const effect of effects) this.#perform(effect);
      }
    } finally {
      this.#busy = false;
    }
  }

  #perform(effect: Effect): void {
    const clock = this.#clock;
    switch (effect.type) {
      case 'listen':
        return this.#listen();
      case 'first_attempt':
        return this.#firstAttempt(effect.ms);
      case 'send':
        return void this.#sendSubmission(effect.workflow);
      case 'resubscribe':
        this.#unsubscribe?.();
        this.#subscribe();
        // After the events the socket held for the new id (they came in as it subscribed).
        return this.#send({ type: 'resubscribed', socket: this.#socket.state });
      case 'record':
        return void this.#record();
      case 'enter':
        return void this.#later.push({ type: 'enter' });
      case 'poll':
        clock.clearTimeout(this.#pollTimer);
        this.#pollTimer = undefined;
        return void this.#poll(effect.timeout);
      case 'sleep':
        clock.clearTimeout(this.#pollTimer);
        this.#pollTimer = clock.setTimeout(() => this.#send({ type: 'poll_due' }), effect.ms);
        return;
      case 'silence':
        clock.clearTimeout(this.#silence);
        this.#silence = clock.setTimeout(() => this.#send({ type: 'silent' }), effect.ms);
        return;
      case 'subscribe':
        return this.#subscribe();
      case 'emit':
        return this.#emit(effect.event);
      case 'read':
        return void this.#read(effect);
      case 'stop':
        if (!effect.confirm) return stopInBackground(this.#jobs, this.#s.promptId, this.#opts.headers, effect.why);
        return void stopAndConfirm(this.#jobs, this.#s.promptId, this.#opts.headers, effect.why, this.#opts.stopWithin).then((stopError) => this.#send({ type: 'stopped', stopError, reason: effect.confirm!.reason }));
      case 'unlisten':
        return this.#stopListening();
      case 'log':
        return this.#jobs.log?.[effect.level]?.(effect.message, effect.details);
      case 'settle':
        return 'result' in effect ? this.#resolve(effect.result) : this.#reject(effect.error);
    }
  }

  #listen(): void {
    const socket = this.#socket;
    const { signal } = this.#opts;
    const down = () => this.#send({ type: 'socket_down', socket: socket.state });
    this.#offs.push(socket.on('reconnecting', down), socket.on('close', down), socket.on('open', () => this.#send({ type: 'socket_open' })));
    if (signal) {
      const onAbort = () => this.#send({ type: 'aborted', reason: signal.reason });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#offs.push(() => signal.removeEventListener('abort', onAbort));
    }
  }

  /** Feeds `socket_tried` once a first connection under way has an outcome (open, refused, failed) or after `ms`; a microtask later when none is under way. */
  #firstAttempt(ms: number): void {
    const socket = this.#socket;
    const tried = () => void Promise.resolve().then(() => this.#send({ type: 'socket_tried' }));
    if (socket.state !== 'connecting') return tried();
    let pending = true;
    const undo = () => {
      if (!pending) return;
      pending = false;
      this.#clock.clearTimeout(timer);
      for (const off of offs) off();
    };
    const done = () => {
      undo();
      tried();
    };
    const timer = this.#clock.setTimeout(done, ms);
    const offs = [socket.on('open', done), socket.on('reconnecting', done), socket.on('close', done)];
    this.#offs.push(undo);
  }

  async #sendSubmission(workflow: Workflow): Promise<void> {
    const { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit, signal } = this.#opts;
    let input: Unstamped;
    try {
      const { prompt_id } = await this.#jobs.submit(workflow, { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit, promptId: this.#s.promptId, clientId: this.#socket.clientId, ...(signal ? { stopBefore: signal } : {}) });
      input = { type: 'submitted', promptId: prompt_id, socket: this.#socket.state };
    } catch (error) {
      input = { type: 'submit_failed', error };
    }
    this.#send(input);
  }

  async #record(): Promise<void> {
    let input: Unstamped;
    try {
      await this.#opts.onSubmitted!(this.#s.promptId);
      input = { type: 'recorded', socket: this.#socket.state };
    } catch (error) {
      input = { type: 'record_failed', error };
    }
    this.#send(input);
  }

  #subscribe(): void {
    this.#unsubscribe = this.#socket.subscribe(this.#s.promptId, (event) => this.#send({ type: 'event', event }), { onLost: () => this.#send({ type: 'lost' }) });
  }

  #stopListening(): void {
    this.#clock.clearTimeout(this.#pollTimer);
    this.#clock.clearTimeout(this.#silence);
    this.#pollTimer = this.#silence = undefined;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const off of this.#offs.splice(0)) off();
  }

  async #poll(timeout: number | undefined): Promise<void> {
    const options = timeout === undefined ? this.#request : { ...this.#request, timeout, retry: { limit: 0 } };
    let input: Unstamped;
    try {
      input = { type: 'poll_answer', status: await this.#jobs.getJobStatus(this.#s.promptId, options) };
    } catch (error) {
      input = { type: 'poll_failed', error };
    }
    this.#send(input);
  }

  /** Tells the state entered to the internal listener; one that throws ends the run as a callback that throws does. */
  #tell(state: FollowerState): void {
    try {
      this.#told?.(state.phase, state.ending);
    } catch (error) {
      this.#send({ type: 'callback_threw', error });
    }
  }

  /** The caller's callbacks; one that throws ends the run with its error instead of escaping into the socket. */
  #emit(e: SocketEvent): void {
    const { onEvent, onProgress, onPreview } = this.#opts;
    try {
      onEvent?.(e);
      if (e.type === 'progress' && onProgress) onProgress({ value: e.data.value as number, max: e.data.max as number, node: e.data.node as string | undefined });
      else if (e.type === 'binary' && onPreview && isImageFrame(e.frame)) onPreview(e.frame);
    } catch (error) {
      return this.#send({ type: 'callback_threw', error });
    }
    this.#send({ type: 'delivered', event: e });
  }

  async #read(effect: Extract<Effect, { type: 'read' }>): Promise<void> {
    const id = this.#s.promptId;
    let input: Unstamped;
    try {
      if (effect.kind === 'failure') throw await failureOf(this.#jobs, id, effect.status, this.#request);
      let record = hasOutputs(effect.status) ? asRecord(effect.status, id) : undefined;
      if (!record && !effect.socketHeardAll) record = await readCompletedRecord(this.#jobs, id, this.#request, this.#clock);
      input = { type: 'read', record };
    } catch (error) {
      input = { type: 'read_failed', error };
    }
    this.#send(input);
  }
}
