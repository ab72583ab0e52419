/**
 * The follower of one job: the pure reducer of `reducer.ts` (states, polls,
 * endings) and this thin driver, which feeds it the submission, the socket,
 * status polls, the caller's signal and a clock, and performs the effects it
 * returns (subscriptions, timers, HTTP reads through `records.ts`, the
 * caller's callbacks, settling). The socket is a live feed; the job status is
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
import { APIUserAbortError } from '../../errors.ts';
import type { Workflow } from '../../schemas/cloud.ts';
import { count } from '../../transport/log.ts';
import type { RequestOptions } from '../../transport/options.ts';
import { isImageFrame } from '../frames.ts';
import type { JobBackend } from '../jobs.ts';
import type { JobResult, RunOptions } from '../run-options.ts';
import type { CloudSocket, SocketEvent } from '../socket.ts';
import { answerLost } from '../submission.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { asRecord, failureOf, hasOutputs, readCompletedRecord, stopAndConfirm, stopInBackground } from './records.ts';
import { initialFollower, reduce, type Effect, type FollowerInput, type FollowerState } from './reducer.ts';
import type { FollowState } from './states.ts';

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

/** The longest a submission waits for a first socket connection still under way. */
const FIRST_ATTEMPT_MS = 1000;
/** How long a server may give no answer before a run gives its job up as lost (`serverLostAfter`). */
const SERVER_LOST_AFTER_MS = 30_000;

const abortError = (signal: AbortSignal) => new APIUserAbortError(undefined, { cause: signal.reason });

/** Input without its time stamp: the driver stamps it. */
type Unstamped = FollowerInput extends infer I ? (I extends unknown ? Omit<I, 'now'> : never) : never;

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
 * {@link attach} to a job that exists (`follow()`). Every input goes through
 * the reducer; this class only performs what it says.
 */
export class JobFollower {
  readonly #jobs: JobBackend;
  readonly #socket: FollowSocket;
  readonly #opts: RunOptions;
  readonly #clock: Clock;
  readonly #request: RequestOptions;
  readonly #result: Promise<JobResult>;
  #resolve!: (result: JobResult) => void;
  #reject!: (err: unknown) => void;
  #s: FollowerState;
  /** The id the submission is under (the reducer learns it once the job is accepted). */
  #promptId: string;
  /** Socket listeners and the signal's, undone when the job ends. */
  #offs: Array<() => void> = [];
  #unsubscribe: (() => void) | undefined;
  #pollTimer: TimerHandle;
  #silence: TimerHandle;
  /** Inputs that came while effects were being performed: taken in turn, so no effect runs inside another. */
  #inbox: Unstamped[] = [];
  #busy = false;

  /**
   * @param justSubmitted Whether this run submits the job: a job followed later may have ended already, and is polled at once.
   */
  constructor(jobs: JobBackend, socket: FollowSocket, promptId: string, opts: RunOptions, clock: Clock, justSubmitted: boolean) {
    this.#jobs = jobs;
    this.#socket = socket;
    this.#promptId = promptId;
    this.#opts = opts;
    this.#clock = clock;
    this.#request = { ...(opts.headers ? { headers: opts.headers } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
    const config = {
      interval: opts.pollInterval ?? 1000,
      lostAfter: opts.serverLostAfter ?? SERVER_LOST_AFTER_MS,
      timeout: opts.timeout,
      stopOnAbort: !!opts.stopOnAbort,
      justSubmitted,
      pollsAtOnce: !!socket.pollsAtOnce,
      origin: jobs.baseUrl ?? 'the server',
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
    this.#submit(workflow).catch((err: unknown) => this.#send({ type: 'give_up', error: err }));
    return this.#result;
  }

  /** Follows a job that exists already. */
  attach(): Promise<JobResult> {
    this.#listen();
    this.#accept();
    return this.#result;
  }

  async #submit(workflow: Workflow): Promise<void> {
    const { signal, onSubmitted } = this.#opts;
    const giveUp = (error: unknown) => this.#send({ type: 'give_up', error });
    if (signal?.aborted) return giveUp(abortError(signal));
    this.#listen();
    // Before the request: no event of the job can come before its subscriber.
    this.#subscribe();
    await firstAttempt(this.#socket, FIRST_ATTEMPT_MS, signal, this.#clock);
    if (signal?.aborted) return giveUp(abortError(signal));
    const { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit } = this.#opts;
    let id: string;
    // With stopOnAbort, an abort while the submission is out (its answer may be slow, or being looked up) ends
    // the run at once; the submission is not given the signal, and the job, if it was made, is stopped once it
    // has settled. Without (a caller who stops jobs itself, as the pool does), the run waits for the submission,
    // so that the job it may have made is known by its id before the run gives up.
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      giveUp(new APIUserAbortError(`Aborted while submitting job ${this.#promptId}; it is stopped if it was made`, { cause: signal!.reason, promptId: this.#promptId }));
    };
    if (this.#opts.stopOnAbort) signal?.addEventListener('abort', onAbort, { once: true });
    try {
      ({ prompt_id: id } = await this.#jobs.submit(workflow, { headers, partnerApiKey, extraData, validate, resubmitUnconfirmed, confirmWithin, beforeSubmit, promptId: this.#promptId, clientId: this.#socket.clientId, ...(signal ? { stopBefore: signal } : {}) }));
    } catch (err) {
      if (!abandoned) return giveUp(err);
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
        return giveUp(err);
      }
    }
    this.#accept();
  }

  /** The job is the follower's now: listen to the signal, hand it to the reducer, then let it enter `live` or `polling`. */
  #accept(): void {
    if (this.#s.phase !== 'submitting') return;
    const { signal } = this.#opts;
    if (signal) {
      const onAbort = () => this.#send({ type: 'aborted', reason: signal.reason });
      signal.addEventListener('abort', onAbort, { once: true });
      this.#offs.push(() => signal.removeEventListener('abort', onAbort));
    }
    this.#send({ type: 'accepted', promptId: this.#promptId, socket: this.#socket.state, aborted: signal?.aborted === true, abortReason: signal?.reason });
    this.#send({ type: 'enter' });
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
      for (let next = this.#inbox.shift(); next; next = this.#inbox.shift()) {
        // Stamped in place: every input is a fresh object of this driver's (no copy per event).
        (next as FollowerInput).now = this.#clock.now();
        const [state, effects] = reduce(this.#s, next as FollowerInput);
        this.#s = state;
        for (const effect of effects) this.#perform(effect);
      }
    } finally {
      this.#busy = false;
    }
  }

  #perform(effect: Effect): void {
    const clock = this.#clock;
    switch (effect.type) {
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
    const down = () => this.#send({ type: 'socket_down', socket: this.#socket.state });
    this.#offs.push(this.#socket.on('reconnecting', down), this.#socket.on('close', down), this.#socket.on('open', () => this.#send({ type: 'socket_open' })));
  }

  #subscribe(): void {
    const off = this.#socket.subscribe(this.#promptId, (event) => this.#send({ type: 'event', event }), { onLost: () => this.#send({ type: 'lost' }) });
    // Held events replayed by subscribe() may have ended the job already.
    const phase = this.#s.phase;
    if (phase === 'settling' || phase === 'settled') off();
    else this.#unsubscribe = off;
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

  #stopOnServer(why: string): void {
    if (this.#opts.stopOnAbort) stopInBackground(this.#jobs, this.#promptId, this.#opts.headers, why);
  }
}
