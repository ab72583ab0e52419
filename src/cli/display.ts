/**
 * The progress display of `platformui run` / `job --follow`, in three modes:
 *
 * - `tty`: one live block redrawn in place (node running, its steps, counters,
 *   time), lines of information printed above it, a summary replacing it;
 * - `plain` (not a terminal): one line per event worth reading, no ANSI codes;
 * - `json`: one JSON object per line, for `jq`.
 *
 * The job's state and its rendering are pure (`display/state.ts`,
 * `display/render.ts`); this module only decides when to write what. The
 * job's end is its follower's decision ({@link Display.ended}, told through the
 * follower's states) where a follower runs in this process (`endsFrom:
 * 'follower'`); else an ending event ends it, by the follower's rule.
 *
 * @module
 */
import type { JobEnd } from '../cloud/follow/states.ts';
import type { SocketEvent } from '../cloud/socket.ts';
import type { NodeOutputs } from '../schemas/cloud.ts';
import { clean, endLines, failLines, plainLines, renderBlock, stoppedLine, summaryLines, textLines, textsOf, type FileLine } from './display/render.ts';
import { createRunState, endRun, fold, isEnded, reduce, type NodeLabel, type RunState } from './display/state.ts';

export { renderBlock, type FileLine, type TextLine } from './display/render.ts';
export { createRunState, reduce, type NodeLabel, type RunPhase, type RunState, type StepProgress } from './display/state.ts';

/** What {@link Display.finish} reports: the files written, and the job's outputs for what is not a file (text). */
export interface FinishedJob {
  promptId: string;
  files: FileLine[];
  /** The job's outputs (`JobResult.outputs`): text outputs are shown; `--json` carries them whole. */
  outputs?: Record<string, NodeOutputs>;
}

/** `tty`: live block; `plain`: a line per event; `json`: an object per line. */
export type DisplayMode = 'tty' | 'plain' | 'json';

/** Options of {@link createDisplay}. */
export interface DisplayOptions {
  mode: DisplayMode;
  /** Where everything goes: `process.stdout` or a test buffer. `columns` is read at every redraw. */
  out: { write(s: string): unknown; columns?: number; isTTY?: boolean };
  /** Colours (tty mode only). The caller decides: a TTY and no `NO_COLOR`. */
  color: boolean;
  /** Node id → class and title of the workflow being run, for names and "done of total". */
  nodes?: Record<string, NodeLabel>;
  /** The clock (ms), for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * What ends the job on the display. `follower`: only {@link Display.ended},
   * which the job's follower drives (a direct run, `job --follow`): an ending
   * it found by a poll shows as one heard, and an event it does not take as
   * the end ends nothing. `events` (default): also an ending event, for a feed
   * with no follower in this process (`run --queue`: the worker's follower
   * forwarded it).
   */
  endsFrom?: 'events' | 'follower';
}

/** How a job ended, as {@link Display.ended} is told: the ending event's `data` (node, exception) when there was one. */
export interface DisplayEnding {
  end: JobEnd;
  data?: Readonly<Record<string, unknown>>;
}

/** What a command tells the display; every method is safe to call in any order. */
export interface Display {
  /** A line of information ("Uploaded photo.png as photo_1.png"); printed above the live block. */
  info(line: string): void;
  /** The job exists: prints "Submitted job <id>" (keep the id: `platformui job <id>`) and starts the live block. */
  submitted(promptId: string): void;
  /** Every event of the job (`CloudClient.run({ onEvent })`): its progress (and its end, with `endsFrom: 'events'`). Never throws. */
  event(e: SocketEvent): void;
  /**
   * The job ended, as its follower found it (on the socket, by a poll) or a
   * queued job's result says: the block shows it, plain mode prints its line
   * ("Job completed in 1.2s"). The first end stands. Never throws.
   */
  ended(ending: DisplayEnding): void;
  /** The job completed and these files were written: the final summary (with its text outputs when `outputs` is given). */
  finish(result: FinishedJob): void;
  /**
   * The run failed: `message` is already one line, secret-free. On a terminal
   * and in JSON it is printed (to `out`) with where and when; in plain mode only
   * where and when, since the caller says the error on standard error (once).
   */
  fail(message: string): void;
  /** Leaves the terminal clean (cursor shown, block finalized). Idempotent; safe to call from SIGINT/exit handlers. */
  close(): void;
}

/** At most this many redraws a second; the last state is always drawn (a trailing redraw, then finish/fail/close). */
const REDRAW_MS = 100;
/** The block redraws at least this often, so the elapsed time moves while the server is quiet. */
const TICK_MS = 1000;
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

/**
 * The display for a mode.
 *
 * @example
 * ```ts
 * const display = createDisplay({ mode: process.stdout.isTTY ? 'tty' : 'plain', out: process.stdout, color: process.stdout.isTTY && !process.env.NO_COLOR, nodes });
 * process.on('exit', () => display.close());
 * const result = await cloud.run(workflow, { onSubmitted: (id) => display.submitted(id), onEvent: (e) => display.event(e) });
 * display.finish({ promptId: result.promptId, files, outputs: result.outputs });
 * ```
 */
export function createDisplay(options: DisplayOptions): Display {
  if (options.mode === 'json') return jsonDisplay(options);
  if (options.mode === 'plain') return plainDisplay(options);
  return new TtyDisplay(options);
}

function jsonDisplay({ out }: DisplayOptions): Display {
  let ended = false;
  const emit = (o: object) => void out.write(`${JSON.stringify(o)}\n`);
  return {
    info: (message) => emit({ type: 'info', message }),
    submitted: (promptId) => emit({ type: 'submitted', promptId }),
    event: (e) => {
      if (!ended) emit({ type: 'event', event: jsonEvent(e) });
    },
    // The stream carries the events as they came; the result or the error object says how the job ended.
    ended: () => undefined,
    finish: ({ promptId, files, outputs }) => {
      if (!ended) emit({ type: 'result', promptId, files: files.map(({ path, bytes, nodeId, mediaType }) => ({ path, bytes, nodeId, mediaType })), outputs });
      ended = true;
    },
    fail: (message) => {
      if (!ended) emit({ type: 'error', message });
      ended = true;
    },
    close: () => {
      ended = true;
    },
  };
}

/**
 * An event as a `jq` user wants it: a message as the server sent it (an
 * off-spec or new type keeps its own `type`), a binary frame summarised
 * without its bytes.
 */
function jsonEvent(e: SocketEvent): unknown {
  if (e.type === 'unknown' || e.type === 'invalid') return { type: e.rawType, data: e.data };
  if (e.type !== 'binary') return e;
  const f = e.frame;
  switch (f.type) {
    case 'preview_image':
      return { type: 'binary', kind: 'preview', bytes: f.image.byteLength, mime: f.mime, promptId: e.promptId };
    case 'preview_image_with_metadata':
      return { type: 'binary', kind: 'preview', bytes: f.image.byteLength, mime: f.mime, promptId: e.promptId, nodeId: f.nodeId };
    case 'text':
      return { type: 'binary', kind: 'text', nodeId: f.nodeId, text: f.text, promptId: e.promptId };
    default:
      return { type: 'binary', kind: 'unknown', eventType: f.eventType, bytes: f.data.byteLength, promptId: e.promptId };
  }
}

/** How a display folds an event into its state: progress only, or also its end (see `endsFrom`). */
function readerOf(options: DisplayOptions): (state: RunState, e: SocketEvent, now: number) => RunState {
  return options.endsFrom === 'follower' ? fold : reduce;
}

function plainDisplay(options: DisplayOptions): Display {
  const now = options.now ?? Date.now;
  const read = readerOf(options);
  const marks = new Map<string, number>();
  let state: RunState | undefined;
  let ended = false;
  const write = (lines: string[]) => {
    if (lines.length > 0) options.out.write(lines.map((l) => `${l}\n`).join(''));
  };
  return {
    info: (line) => write([clean(line)]),
    submitted: (promptId) => {
      state = createRunState({ promptId, nodes: options.nodes, startedAt: now() });
      write([`Submitted job ${clean(promptId)}`]);
    },
    event: (e) => {
      if (ended) return;
      const t = now();
      const prev = (state ??= createRunState({ nodes: options.nodes, startedAt: t }));
      state = read(prev, e, t);
      write(plainLines(prev, state, e, marks, t));
    },
    ended: (ending) => {
      if (ended) return;
      const t = now();
      const prev = (state ??= createRunState({ nodes: options.nodes, startedAt: t }));
      if (isEnded(prev.phase)) return;
      state = endRun(prev, ending, t);
      write(endLines(prev, state, t));
    },
    finish: ({ files, outputs }) => {
      if (!ended) write([...summaryLines(state, files, now(), false, false), ...textLines({ labels: options.nodes ?? {} }, textsOf(outputs), false)]);
      ended = true;
    },
    fail: () => {
      if (!ended && state) write([stoppedLine(state, now())]);
      ended = true;
    },
    close: () => {
      ended = true;
    },
  };
}

/**
 * The live block. It is printed as whole lines, so the cursor rests at the
 * start of the row below it; a redraw moves up over it, clears to the end of
 * the screen and prints it again, all in one `write` (no flicker).
 */
class TtyDisplay implements Display {
  readonly #o: DisplayOptions;
  readonly #now: () => number;
  readonly #read: (state: RunState, e: SocketEvent, now: number) => RunState;
  #state: RunState | undefined;
  /** Rows the block occupies on screen now (0: nothing to erase). */
  #rows = 0;
  #lastDraw = -Infinity;
  #pending: ReturnType<typeof setTimeout> | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #cursorHidden = false;
  /** The block is over (finish, fail or close): later events are ignored, lines print plainly. */
  #ended = false;
  #closed = false;

  constructor(options: DisplayOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#read = readerOf(options);
  }

  info(line: string): void {
    this.#write(this.#erase() + `${clean(line)}\n` + this.#block());
  }

  submitted(promptId: string): void {
    if (this.#ended) return this.info(`Submitted job ${promptId}`);
    this.#start(promptId);
    this.info(`Submitted job ${promptId}`);
  }

  event(e: SocketEvent): void {
    if (this.#ended) return;
    const prev = this.#state ?? this.#start(undefined);
    const next = this.#read(prev, e, this.#now());
    // A notification is the server speaking to the user: a permanent line, not a block detail.
    if (e.type === 'notification' && typeof e.data.value === 'string') {
      this.#state = next;
      return this.info(`Notice: ${e.data.value}`);
    }
    if (next === prev) return;
    this.#state = next;
    this.#schedule();
  }

  ended(ending: DisplayEnding): void {
    if (this.#ended) return;
    const prev = this.#state ?? this.#start(undefined);
    if (isEnded(prev.phase)) return;
    this.#state = endRun(prev, ending, this.#now());
    this.#schedule();
  }

  finish(result: FinishedJob): void {
    if (this.#ended) return;
    const { color } = this.#o;
    this.#end([...summaryLines(this.#state, result.files, this.#now(), color, true), ...textLines({ labels: this.#o.nodes ?? {} }, textsOf(result.outputs), color)]);
  }

  fail(message: string): void {
    if (this.#ended) return;
    this.#end(failLines(this.#state, message, this.#now(), this.#o.color));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Interrupted mid-run: the last state (throttled updates included) stays on screen as plain text.
    const last = this.#ended ? '' : this.#erase() + this.#block();
    this.#stop();
    this.#ended = true;
    this.#rows = 0;
    // Shown unconditionally: whatever hid it, the terminal must not be left without a cursor.
    this.#write(last + SHOW_CURSOR);
    this.#cursorHidden = false;
  }

  #start(promptId: string | undefined): RunState {
    this.#state = createRunState({ promptId, nodes: this.#o.nodes, startedAt: this.#now() });
    this.#tick ??= setInterval(() => this.#pending === undefined && this.#draw(), TICK_MS);
    // A display must never keep the process alive.
    this.#tick.unref?.();
    return this.#state;
  }

  /** Draws now, or once the throttle window ends (one pending redraw at most, drawing the latest state). */
  #schedule(): void {
    const wait = REDRAW_MS - (this.#now() - this.#lastDraw);
    if (wait <= 0) return this.#draw();
    if (this.#pending !== undefined) return;
    this.#pending = setTimeout(() => {
      this.#pending = undefined;
      this.#draw();
    }, wait);
    this.#pending.unref?.();
  }

  #draw(): void {
    if (!this.#ended && this.#state) this.#write(this.#erase() + this.#block());
  }

  /** The block's text (cursor hidden first); records its height and the time. Empty when not live. */
  #block(): string {
    if (this.#ended || !this.#state) return '';
    // One column spare: some terminals wrap on writing the last column, which would add a row the redraw does not know of.
    const width = Math.max(1, (this.#o.out.columns || 80) - 1);
    const now = this.#now();
    const lines = renderBlock(this.#state, { width, color: this.#o.color, now });
    this.#rows = lines.length;
    this.#lastDraw = now;
    const hide = this.#cursorHidden ? '' : HIDE_CURSOR;
    this.#cursorHidden = true;
    return hide + lines.map((l) => `${l}\n`).join('');
  }

  /** Moves up over the block and clears it; the next text takes its place. */
  #erase(): string {
    if (this.#rows === 0) return '';
    const s = `\r\x1b[${this.#rows}A\x1b[J`;
    this.#rows = 0;
    return s;
  }

  #end(lines: string[]): void {
    const erase = this.#erase();
    this.#stop();
    this.#ended = true;
    this.#write(erase + lines.map((l) => `${l}\n`).join('') + (this.#cursorHidden ? SHOW_CURSOR : ''));
    this.#cursorHidden = false;
  }

  #stop(): void {
    clearTimeout(this.#pending);
    clearInterval(this.#tick);
    this.#pending = this.#tick = undefined;
  }

  #write(s: string): void {
    if (s) this.#o.out.write(s);
  }
}
