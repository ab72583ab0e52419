/**
 * The state of one followed job, as the progress display sees it: its
 * progress folded from socket events ({@link fold}), its end as the job's
 * follower decided it ({@link endRun}, told through the follower's states), or,
 * for a feed with no follower in this process, as an ending event says by the
 * follower's rule ({@link reduce}). No I/O here: the TTY block, the plain
 * lines and the tests all read the same state.
 *
 * @module
 */
import { jobEndOf, type JobEnd } from '../../cloud/follow/states.ts';
import type { SocketEvent } from '../../cloud/socket.ts';

/** How a node of the workflow is named on screen. */
export interface NodeLabel {
  classType: string;
  title?: string;
}

/** Where the job is. `waiting`: submitted, not started (queued). The last three are the follower's endings (`JobEnd`), as the display names them. */
export type RunPhase = 'waiting' | 'running' | 'success' | 'error' | 'interrupted';

/** The display's name of each way a job ends (`JobEnd`, as the follower says it). */
const ENDED: Record<JobEnd, RunPhase> = { completed: 'success', failed: 'error', cancelled: 'interrupted' };

/** Steps (`value` of `max`) of one node, from `progress` or `progress_state`. */
export interface StepProgress {
  node: string;
  value: number;
  max: number;
}

/**
 * Everything the display shows about a job. Immutable: {@link reduce} returns
 * a new object when something changed and the same object when the event
 * changed nothing (so a caller can skip a redraw with `===`).
 */
export interface RunState {
  /** The job; events of any other job are ignored once it is known. */
  promptId: string | undefined;
  phase: RunPhase;
  /** Node id → class and title, from the workflow being run (may be empty). */
  labels: Readonly<Record<string, NodeLabel>>;
  /** The workflow's node count, when the workflow is known. */
  total: number | undefined;
  /** The node running now. */
  current: string | undefined;
  /** Steps of the node running now (absent before its first progress). */
  step: StepProgress | undefined;
  /** Nodes finished (run or cached), in the order they finished. */
  done: readonly string[];
  /** Nodes the server skipped because their outputs were cached. */
  cached: readonly string[];
  /** Preview images received (binary frames of types 1 and 4). */
  previews: number;
  /** When the display started following the job (ms, the display's clock). */
  startedAt: number;
  /** When the job ended (success, error or interruption). */
  endedAt: number | undefined;
  /** What the server said about a failure or a cancellation. */
  error: { nodeId?: string; nodeType?: string; type?: string; message?: string } | undefined;
}

/**
 * A fresh state: nothing heard yet.
 *
 * @example
 * ```ts
 * let s = createRunState({ promptId: 'p1', nodes: { '3': { classType: 'KSampler' } }, startedAt: Date.now() });
 * s = reduce(s, event, Date.now());
 * ```
 */
export function createRunState(init: { promptId?: string; nodes?: Record<string, NodeLabel>; startedAt: number }): RunState {
  const labels = init.nodes ?? {};
  return {
    promptId: init.promptId,
    phase: 'waiting',
    labels,
    total: init.nodes ? Object.keys(labels).length : undefined,
    current: undefined,
    step: undefined,
    done: [],
    cached: [],
    previews: 0,
    startedAt: init.startedAt,
    endedAt: undefined,
    error: undefined,
  };
}

/**
 * Folds one event of the job into the state, an ending event included: the
 * reading of a feed with no follower in this process (`run --queue`: the
 * worker's follower forwarded the events), by the follower's rule of which
 * event ends a job (`jobEndOf`). Where a follower runs here, its decision is
 * {@link endRun}'s and events go through {@link fold}. Pure, and tolerant: the
 * API is experimental, so an `invalid` message (known type, off-spec data) is
 * read by its `rawType` with every member checked, and nothing here throws.
 * `now` stamps the end of the job (defaults to `state.startedAt` for tests that do not care).
 */
export function reduce(state: RunState, e: SocketEvent, now: number = state.startedAt): RunState {
  const m = messageOf(state, e);
  const end = m && jobEndOf(m.type);
  if (!end) return fold(state, e);
  const ended = endRun(state, { end, data: m.data }, now);
  return ended === state || ended.promptId !== undefined ? ended : { ...ended, promptId: m.promptId };
}

/**
 * The job ended: as its follower decided (socket, poll or record), or as
 * {@link reduce} read an ending event. A late ending must not reopen a
 * finished job (the legacy `executing: null` after success); a failure still
 * says where. `data`: the ending event's (node, exception), when there was one.
 */
export function endRun(state: RunState, ending: { end: JobEnd; data?: Readonly<Record<string, unknown>> }, now: number): RunState {
  const { end } = ending;
  if (isEnded(state.phase) && end === 'completed') return state;
  if (end === 'completed') {
    const done = state.current !== undefined ? union(state.done, [state.current]) : state.done;
    return { ...state, phase: ENDED[end], current: undefined, step: undefined, done, endedAt: now };
  }
  const data = ending.data ?? {};
  const nodeId = str(data.node_id) ?? state.current;
  const error = { nodeId, nodeType: str(data.node_type), type: str(data.exception_type), message: str(data.exception_message) };
  return { ...state, phase: ENDED[end], current: nodeId, error, endedAt: state.endedAt ?? now };
}

/**
 * Folds one event's progress into the state (node running, steps, done,
 * cached, previews); an ending event changes nothing here: the end is the
 * follower's ({@link endRun}). A job that ended takes no more progress.
 */
export function fold(state: RunState, e: SocketEvent): RunState {
  if (e.type === 'binary') {
    if (state.promptId !== undefined && e.promptId !== undefined && e.promptId !== state.promptId) return state;
    const kind = e.frame.type;
    return kind === 'preview_image' || kind === 'preview_image_with_metadata' ? { ...state, previews: state.previews + 1 } : state;
  }
  const m = messageOf(state, e);
  if (!m || isEnded(state.phase) || jobEndOf(m.type)) return state;
  const { type, data } = m;
  const s: RunState = state.promptId === undefined ? { ...state, promptId: m.promptId } : state;
  switch (type) {
    case 'execution_start':
      return s.phase === 'waiting' ? { ...s, phase: 'running' } : s;
    case 'execution_cached': {
      const nodes = strings(data.nodes);
      const cached = union(s.cached, nodes);
      return { ...s, phase: 'running', cached, done: union(s.done, nodes) };
    }
    case 'executing': {
      const node = str(data.node);
      if (node === s.current && s.phase === 'running') return s;
      // A new node starts: the one before it is finished (nodes without outputs send no `executed`).
      const done = s.current !== undefined && node !== s.current ? union(s.done, [s.current]) : s.done;
      return { ...s, phase: 'running', current: node, step: s.step?.node === node ? s.step : undefined, done };
    }
    case 'progress': {
      const value = num(data.value);
      const max = num(data.max);
      if (value === undefined || max === undefined) return s;
      const node = str(data.node) ?? s.current;
      if (node === undefined) return s;
      return { ...s, phase: 'running', current: s.current ?? node, step: { node, value, max } };
    }
    case 'progress_state': {
      const nodes = isRecord(data.nodes) ? data.nodes : {};
      const finished: string[] = [];
      let step = s.step;
      for (const [id, p] of Object.entries(nodes)) {
        if (!isRecord(p)) continue;
        if (p.state === 'finished') finished.push(id);
        const value = num(p.value);
        const max = num(p.max);
        // Only the running node's steps are shown; a stale snapshot must not move the bar back.
        if (id === s.current && p.state === 'running' && value !== undefined && max !== undefined && !(step?.node === id && step.value > value)) {
          step = { node: id, value, max };
        }
      }
      const done = union(s.done, finished);
      return done === s.done && step === s.step ? s : { ...s, done, step };
    }
    case 'executed': {
      const node = str(data.node);
      return node === undefined ? s : { ...s, done: union(s.done, [node]) };
    }
    default:
      return s;
  }
}

/** Nodes finished, counted against the workflow when it is known (a server-made id is not one of its nodes). */
export function doneCount(state: RunState): number {
  if (state.total === undefined) return state.done.length;
  let n = 0;
  for (const id of state.done) if (Object.hasOwn(state.labels, id)) n++;
  return n;
}

/** Milliseconds since the job was followed, frozen at its end. */
export function elapsed(state: RunState, now: number): number {
  return Math.max(0, (state.endedAt ?? now) - state.startedAt);
}

/** Whether the job has ended (completed, failed or cancelled). */
export function isEnded(phase: RunPhase): boolean {
  return phase === 'success' || phase === 'error' || phase === 'interrupted';
}

/** A message of the job (not a frame, not another job's), read by its `rawType` when off-spec or new. */
function messageOf(state: RunState, e: SocketEvent): { type: string; data: Record<string, unknown>; promptId: string } | undefined {
  if (e.type === 'binary' || e.type === 'malformed') return undefined;
  const type = e.type === 'invalid' || e.type === 'unknown' ? e.rawType : e.type;
  const data = isRecord(e.data) ? e.data : {};
  const promptId = str(data.prompt_id);
  // The socket routes by job already; this guards a caller that feeds a shared stream.
  if (promptId === undefined || (state.promptId !== undefined && promptId !== state.promptId)) return undefined;
  return { type, data, promptId };
}

/** `a` plus the members of `b` it lacks; `a` itself when nothing is new. */
function union(a: readonly string[], b: readonly string[]): readonly string[] {
  let out: string[] | undefined;
  for (const x of b) if (!a.includes(x) && !out?.includes(x)) (out ??= [...a]).push(x);
  return out ?? a;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
