/**
 * Time as the job follower sees it: the current time and timers, injectable
 * so that tests drive a follower's polls, silences and waits without sleeping.
 *
 * @module
 */
import type { Timers } from '../../transport/sleep.ts';

/** The longest delay a runtime timer takes; longer ones would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** A timer handle, as {@link Clock.setTimeout} returns it. */
export type TimerHandle = unknown;

/** The time source and timers of a job follower. */
export interface Clock extends Timers {
  /** The current time, ms since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer (an `undefined` handle is nothing to cancel). */
  clearTimeout(handle: TimerHandle): void;
}

/** The runtime's clock; delays beyond what a timer takes are cut to the longest it takes. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.min(ms, MAX_TIMER_MS)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
