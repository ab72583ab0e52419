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
  /** Whether Ctrl-C was pressed. */
  readonly interrupted: boolean;
  /** What a second Ctrl-C leaves undone (`job … may still be running`), said on standard error as it exits. */
  note: string | undefined;
  dispose(): void;
}

/** Installs the handler; `beforeExit` runs before a second Ctrl-C exits (to leave the terminal clean), given the handler's note. */
export function handleInterrupt(beforeExit: (note: string | undefined) => void): InterruptHandler {
  const controller = new AbortController();
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
    note: undefined,
    dispose: () => void process.off('SIGINT', onSigint),
  };
  return handler;
}
