// A clock for follower tests: time moves only when the test says so, firing due timers in
// order and letting promises settle after each, so a test drives polls and silences
// without sleeping.
import type { Clock, TimerHandle } from '../../src/cloud/follow/clock.ts';

/** Lets every pending promise callback run (a macrotask turn). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ManualClock implements Clock {
  #now = 1_000_000;
  #next = 1;
  #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Timers not fired yet. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing the timers due on the way in order (promises settle after each). */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      await settle();
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= until && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].fn();
    }
    this.#now = until;
    await settle();
  }
}
