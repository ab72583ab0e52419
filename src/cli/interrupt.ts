/**
 * Ctrl-C while a command follows a job: the first SIGINT aborts the signal
 * the command passed to the SDK (the command then stops its job and exits
 * 130 once its display is closed); a second one closes the display and exits
 * 130 at once, whatever is still under way.
 *
 * @module
 */

/** The SIGINT handling of one command; {@link dispose} restores Node's default. */
export interface InterruptHandler {
  /** Aborted by the first Ctrl-C. */
  readonly signal: AbortSignal;
  /** Whether Ctrl-C was pressed, or standard output was closed (see {@link brokenPipe}). */
  readonly interrupted: boolean;
  /** Whether the reader of standard output went away (EPIPE: `platformui run … | head -2`): exit 141, as for SIGPIPE. */
  readonly brokenPipe: boolean;
  /** What a second Ctrl-C leaves undone (`job … may still be running`), said on standard error as it exits. */
  note: string | undefined;
  dispose(): void;
}

/** The handlers of the commands under way: a closed standard output interrupts them as Ctrl-C does. */
const active = new Set<{ pipeClosed(): void }>();

/**
 * Standard output was closed (EPIPE): interrupts every command under way as a
 * first Ctrl-C does (the command stops its job, then exits 141). Returns
 * whether one was under way; when none is, the caller may exit quietly.
 */
export function interruptOnBrokenPipe(): boolean {
  for (const h of active) h.pipeClosed();
  return active.size > 0;
}

/** Installs the handler; `beforeExit` runs before a second Ctrl-C exits (to leave the terminal clean), given the handler's note. */
export function handleInterrupt(beforeExit: (note: string | undefined) => void): InterruptHandler {
  const controller = new AbortController();
  let brokenPipe = false;
  const onSigint = () => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    try {
      beforeExit(handler.note);
    } finally {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);
  const handler: InterruptHandler = {
    signal: controller.signal,
    get interrupted() {
      return controller.signal.aborted;
    },
    get brokenPipe() {
      return brokenPipe;
    },
    note: undefined,
    dispose: () => {
      process.off('SIGINT', onSigint);
      active.delete(pipe);
    },
  };
  const pipe = {
    pipeClosed: () => {
      if (controller.signal.aborted) return;
      brokenPipe = true;
      controller.abort();
    },
  };
  active.add(pipe);
  return handler;
}
