/**
 * The pool's waiting line: jobs no server can take yet, by priority then
 * order; and the start window, in which a new pool's first jobs wait for
 * every server's first answer.
 *
 * @module
 */

/** Jobs waiting for a server: higher `priority` first, equals in order. */
export class WaitingLine<J extends { readonly priority: number }> {
  readonly #jobs: J[] = [];

  get length(): number {
    return this.#jobs.length;
  }

  [Symbol.iterator](): Iterator<J> {
    return this.#jobs[Symbol.iterator]();
  }

  /** Adds a job after those of its priority, or with `first` before them (a job that must move has waited already). */
  add(job: J, first = false): void {
    let i = this.#jobs.length;
    while (i > 0 && (this.#jobs[i - 1]!.priority < job.priority || (first && this.#jobs[i - 1]!.priority === job.priority))) i--;
    this.#jobs.splice(i, 0, job);
  }

  /** Takes a job out of the line; whether it was there. */
  remove(job: J): boolean {
    const i = this.#jobs.indexOf(job);
    if (i >= 0) this.#jobs.splice(i, 1);
    return i >= 0;
  }

  /** Empties the line; returns what waited, in order. */
  takeAll(): J[] {
    return this.#jobs.splice(0);
  }

  /**
   * Places waiting jobs in order while `room()` says a server has a free
   * slot: each job `pick` finds a server for leaves the line and goes to
   * `place`; the others keep their place.
   */
  drain<S>(room: () => boolean, pick: (job: J) => S | undefined, place: (job: J, server: S) => void): void {
    for (let i = 0; i < this.#jobs.length; ) {
      if (!room()) return;
      const job = this.#jobs[i]!;
      const server = pick(job);
      if (server === undefined) {
        i++;
        continue;
      }
      this.#jobs.splice(i, 1);
      place(job, server);
    }
  }
}

/**
 * A new pool's start window: its first jobs wait until every server has
 * answered once (up or down), for at most `ms`, so that a burst handed to a
 * fresh pool spreads instead of going to whichever server answered first.
 * Once every server has answered, or the time is up, it is closed for good:
 * a server added later holds nothing.
 */
export class StartWindow {
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `onEnd` runs when the time is up with jobs perhaps held (it places them). */
  constructor(ms: number, onEnd: () => void) {
    if (ms <= 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      onEnd();
    }, ms);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Whether it is still open: a server's first answer may end it. */
  get open(): boolean {
    return this.#timer !== undefined;
  }

  /** Whether jobs must wait: it is open and some server has not answered yet. Closes it once every server has. */
  holds(servers: Iterable<{ readonly state: string }>): boolean {
    if (!this.open) return false;
    for (const s of servers) if (s.state === 'starting') return true;
    this.close();
    return false;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
