/**
 * Pure text of the progress display: the live TTY block, the final summary,
 * the failure lines and the plain-mode lines. Everything returns strings;
 * writing them (and moving the cursor) is `display.ts`'s job.
 *
 * @module
 */
import { styleText } from 'node:util';
import { doneCount, elapsed, isEnded, type RunState } from './state.ts';

/** A file the command wrote, for the summary. */
export interface FileLine {
  path: string;
  bytes: number;
  /** The node whose outputs listed it. */
  nodeId?: string;
  /** The key it was listed under (`images`, `gifs`, `latents`, …): said beside the path unless `images`. */
  mediaType?: string;
}

/** A text output of a node (`text: ['…']`, as `PreviewAny` sends), for the summary. */
export interface TextLine {
  nodeId: string;
  text: string;
}

/** Text outputs show one line, cut to this many columns; `--json` has them whole. */
const TEXT_COLUMNS = 120;

/**
 * A text output on one line: its first line, cut to 120 columns, and how many
 * lines follow. Control characters removed.
 *
 * @example
 * ```ts
 * oneLine('tensor([[0., 1.],\n        [1., 0.]])'); // 'tensor([[0., 1.], (+1 line)'
 * ```
 */
export function oneLine(text: string): string {
  const [first = '', ...rest] = text.split('\n');
  const cut = fit([[clean(first)]], TEXT_COLUMNS).map(([t]) => t).join('');
  return rest.length > 0 ? `${cut} (+${plural(rest.length, 'line')})` : cut;
}

/** Every string under a node's `text` key, in node order. */
export function textsOf(outputs: Readonly<Record<string, unknown>> | undefined): TextLine[] {
  const texts: TextLine[] = [];
  for (const [nodeId, out] of Object.entries(outputs ?? {})) {
    const list = (out as { text?: unknown } | null | undefined)?.text;
    if (Array.isArray(list)) for (const text of list) if (typeof text === 'string') texts.push({ nodeId, text });
  }
  return texts;
}

type Style = Parameters<typeof styleText>[0];
/** A run of text and its style; lines are built from these so they can be cut to a width before colouring. */
type Segment = readonly [text: string, style?: Style];

/**
 * The live block for a state: one line for the node running, one for its
 * steps (when it reports any), one of counters. Every line fits `width`
 * columns, so the redraw's cursor arithmetic holds (a wrapped line would
 * leave a row behind).
 *
 * @example
 * ```ts
 * renderBlock(state, { width: 80, color: false, now: Date.now() });
 * // [ '▶ KSampler "Sampler" (#3)', '  ██████░░░░░░░░░░░░ 6/20', '  4/7 nodes · 2 cached · 3 previews · 12s' ]
 * ```
 */
export function renderBlock(state: RunState, options: { width: number; color: boolean; now: number }): string[] {
  const { width, color } = options;
  const lines: Segment[][] = [headLine(state)];
  const step = state.step;
  if (step && (state.phase === 'running' || state.phase === 'waiting')) {
    const count = `${step.value}/${step.max}`;
    // Bar as wide as fits, 10 to 30 cells; a terminal too narrow for 10 gets the numbers only.
    const cells = Math.min(30, width - 3 - count.length);
    const line: Segment[] = [['  ']];
    if (cells >= 10) {
      const filled = Math.round(cells * ratio(step.value, step.max));
      line.push(['█'.repeat(filled), 'green'], ['░'.repeat(cells - filled), 'dim'], [' ']);
    }
    line.push([count]);
    lines.push(line);
  }
  lines.push([['  '], [counters(state, options.now, false), 'dim']]);
  return lines.map((l) => paint(fit(l, width), color));
}

/** The lines that replace the block when the job's files are written. */
export function summaryLines(state: RunState | undefined, files: readonly FileLine[], now: number, color: boolean, tty: boolean): string[] {
  const time = state ? formatDuration(elapsed({ ...state, endedAt: undefined }, now), true) : undefined;
  const head: Segment[] = [[tty ? '✓ Done' : 'Done', 'green']];
  if (time) head.push([` in ${time}`]);
  if (state) head.push([tty ? ' · ' : ': ', 'dim'], [counters(state, now, true), 'dim']);
  const lines = [paint(head, color)];
  if (files.length === 0) lines.push(paint([['  no output files', 'dim']], color));
  // Sizes first, right-aligned: a long path then never pushes a column out of line.
  const sizes = files.map((f) => formatBytes(f.bytes));
  const pad = Math.max(0, ...sizes.map((s) => s.length));
  files.forEach((f, i) => {
    const line: Segment[] = [[`  ${(sizes[i] ?? '').padStart(pad)}  `, 'dim'], [clean(f.path), 'bold']];
    // Most files are images; another key (gifs, latents, a custom node's) says what the file is.
    if (f.mediaType && f.mediaType !== 'images') line.push([` (${clean(f.mediaType)})`, 'dim']);
    lines.push(paint(line, color));
  });
  return lines;
}

/** The lines of the text outputs under the summary: each node by name (`labels` has the workflow's), its text on one line. */
export function textLines(labels: Pick<RunState, 'labels'>, texts: readonly TextLine[], color: boolean): string[] {
  return texts.map((t) => paint([[`  ${nodeName(labels, t.nodeId)}: `, 'dim'], [oneLine(t.text)]], color));
}

/** The lines that replace the live block when the run failed: the message, then where and when. */
export function failLines(state: RunState | undefined, message: string, now: number, color: boolean): string[] {
  const lines = [paint([['✗ ', 'red'], [clean(message)]], color)];
  if (state) lines.push(paint([[`  ${whereAndWhen(state, now)}`, 'dim']], color));
  return lines;
}

/**
 * The plain mode's last line of a run that failed or was stopped: where and
 * when, not why (the error is said once, on standard error).
 */
export function stoppedLine(state: RunState, now: number): string {
  return `Stopped ${whereAndWhen(state, now)}`;
}

/** `after 1.2s · 2/5 nodes · at KSampler (#3)`. */
function whereAndWhen(state: RunState, now: number): string {
  const where = state.current !== undefined ? ` · at ${nodeName(state, state.current, state.error?.nodeType)}` : '';
  return `after ${formatDuration(elapsed(state, now), true)} · ${progressText(state)}${where}`;
}

/**
 * The plain-mode lines for one event (most events give none): the job
 * starting, nodes cached, each node starting, its steps at 25 % marks, the
 * job's ending when the event ended it ({@link endLines}). `marks`
 * remembers the last mark printed per node so progress never floods a log.
 */
export function plainLines(prev: RunState, next: RunState, e: { type: string; rawType?: string; data?: unknown }, marks: Map<string, number>, now: number): string[] {
  if (e.type === 'binary' || e.type === 'malformed') return [];
  const type = e.type === 'invalid' || e.type === 'unknown' ? e.rawType : e.type;
  // A notification carries no job id: it is the server speaking to the user, always worth a line.
  if (type === 'notification') {
    const value = (e.data as { value?: unknown } | undefined)?.value;
    return typeof value === 'string' ? [`Notice: ${clean(value)}`] : [];
  }
  if (next === prev) return [];
  if (isEnded(next.phase)) return endLines(prev, next, now);
  switch (type) {
    case 'execution_start':
      return next.phase !== prev.phase ? ['Job started'] : [];
    case 'execution_cached': {
      const added = next.cached.filter((id) => !prev.cached.includes(id));
      if (added.length === 0) return [];
      const names = added.slice(0, 6).map((id) => nodeName(next, id));
      const more = added.length > names.length ? `, and ${added.length - names.length} more` : '';
      return [`Cached ${plural(added.length, 'node')}: ${names.join(', ')}${more}`];
    }
    case 'executing':
      return next.current !== undefined && next.current !== prev.current ? [`Running ${nodeName(next, next.current)}`] : [];
    case 'progress':
    case 'progress_state': {
      const step = next.step;
      if (!step || step.max <= 1 || step === prev.step) return [];
      const mark = Math.floor(ratio(step.value, step.max) * 4);
      const printed = marks.get(step.node) ?? 0;
      // Back below its last mark: the node counts again (a second pass, tiles) and earns its marks again.
      if (mark <= (mark < printed ? 0 : printed)) return [];
      marks.set(step.node, mark);
      return [`  ${nodeName(next, step.node)}: ${step.value}/${step.max} steps (${Math.floor(ratio(step.value, step.max) * 100)}%)`];
    }
    default:
      return [];
  }
}

/**
 * The plain-mode line of the job's end, when `next` is where it ended (by its
 * follower's decision or an ending event); none when it had ended so already.
 */
export function endLines(prev: RunState, next: RunState, now: number): string[] {
  if (next.phase === prev.phase || !isEnded(next.phase)) return [];
  // The counters come with the summary (finish), after the downloads this line announces.
  if (next.phase === 'success') return [`Job completed in ${formatDuration(elapsed(next, now), true)}`];
  const at = next.current !== undefined ? ` at ${nodeName(next, next.current, next.error?.nodeType)}` : '';
  // Not why: the error itself is said once, on standard error.
  return [`Job ${next.phase === 'interrupted' ? 'cancelled' : 'failed'}${at}`];
}

/** `KSampler "Sampler" (#3)`; `node #3` when the workflow does not name it. Control characters removed. */
export function nodeName(state: Pick<RunState, 'labels'>, id: string, fallbackClass?: string): string {
  const label = state.labels[id];
  const cls = label?.classType ?? fallbackClass;
  if (!cls) return `node #${clean(id)}`;
  const title = label?.title && label.title !== cls ? ` "${label.title}"` : '';
  return clean(`${cls}${title} (#${id})`);
}

/**
 * Removes control characters (ESC included) from text that reaches the
 * terminal: titles, file names and server messages come from outside, and an
 * escape sequence in one could move the cursor or restyle the terminal.
 */
export function clean(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** `405 B`, `1.2 KiB`, `312 MiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 1024) return `${Math.max(0, Math.round(n || 0))} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** `12s` live (`12.3s` when `precise`), `1m 05s`, `1h 02m`. */
export function formatDuration(ms: number, precise = false): string {
  const s = ms / 1000;
  if (s < 60) return precise ? `${s.toFixed(1)}s` : `${Math.floor(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** Columns a string takes in a terminal: wide (CJK, emoji) characters take two, combining marks none. */
export function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0) ?? 0);
  return w;
}

function headLine(state: RunState): Segment[] {
  const at = state.current !== undefined ? nodeName(state, state.current, state.error?.nodeType) : undefined;
  switch (state.phase) {
    case 'waiting':
      return [['◌ ', 'dim'], ['Queued, waiting to start']];
    case 'running':
      return at ? [['▶ ', 'cyan'], [at, 'bold']] : [['▶ ', 'cyan'], ['Running']];
    case 'success':
      return [['✓ ', 'green'], ['Job completed, fetching outputs']];
    case 'interrupted':
      return [['■ ', 'yellow'], [`Cancelled${at ? ` at ${at}` : ''}`]];
    case 'error': {
      const what = [state.error?.type, state.error?.message].filter(Boolean).join(': ');
      return [['✗ ', 'red'], [`Failed${at ? ` at ${at}` : ''}${what ? `: ${clean(firstLine(what))}` : ''}`]];
    }
  }
}

/** `4/7 nodes · 2 cached · 3 previews · 12s` (the time left out of the final summaries, which say it first). */
function counters(state: RunState, now: number, final: boolean): string {
  const parts = [progressText(state), `${state.cached.length} cached`, plural(state.previews, 'preview')];
  if (!final) parts.push(formatDuration(elapsed(state, now)));
  return parts.join(final ? ', ' : ' · ');
}

function progressText(state: RunState): string {
  const done = doneCount(state);
  return state.total === undefined ? `${plural(done, 'node')} done` : `${done}/${state.total} nodes`;
}

/** Cuts a line to `width` columns, ending it with `…` when something was cut. */
function fit(line: Segment[], width: number): Segment[] {
  const full = line.reduce((n, [t]) => n + textWidth(t), 0);
  if (full <= width) return line;
  const out: Segment[] = [];
  let room = Math.max(0, width - 1); // one column for the ellipsis
  for (const [text, style] of line) {
    let kept = '';
    for (const ch of text) {
      const w = charWidth(ch.codePointAt(0) ?? 0);
      if (w > room) break;
      kept += ch;
      room -= w;
    }
    if (kept) out.push([kept, style]);
    if (kept.length < text.length) break;
  }
  if (width > 0) out.push(['…']);
  return out;
}

function paint(line: readonly Segment[], color: boolean): string {
  // validateStream: false — the caller already decided (TTY, NO_COLOR); the default would check process.stdout instead of our `out`.
  return line.map(([text, style]) => (color && style ? styleText(style, text, { validateStream: false }) : text)).join('');
}

function charWidth(cp: number): number {
  if (cp >= 0x300 && cp <= 0x36f) return 0; // combining marks
  if (cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0; // joiner, variation selectors
  const wide =
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd);
  return wide ? 2 : 1;
}

function ratio(value: number, max: number): number {
  return max > 0 ? Math.min(1, Math.max(0, value / max)) : 0;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0] ?? '';
}
