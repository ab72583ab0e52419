/**
 * The frame of the commands that follow a job on the progress display (`run`,
 * `job --follow`): opens the display, handles Ctrl-C, ends the display on a
 * failure before `main` reports it on standard error, and always closes the
 * display: the terminal is left clean on success, errors and Ctrl-C alike.
 * The error is said once to a person: on a terminal by the display (then
 * standard error gets it only when it goes elsewhere), in plain mode on
 * standard error only (standard output gets where and when); with `--json`,
 * `main` ends the stream with the error object, as for any failure.
 *
 * @module
 */
import { FOLLOWER_STATES, type FollowerStatesListener } from '../cloud/follow/states.ts';
import type { NodeHandle, Workflow } from '../index.ts';
import type { Context } from './context.ts';
import { createDisplay, type Display, type NodeLabel } from './display.ts';
import { describeFailure } from './errors.ts';
import { handleInterrupt, type InterruptHandler } from './interrupt.ts';

/** The display's node labels (class and title by node id) of a workflow. */
export function labelsOf(wf: Workflow | undefined): Record<string, NodeLabel> {
  const labels: Record<string, NodeLabel> = {};
  for (const n of (wf?.nodes() ?? []) as NodeHandle[]) labels[n.id] = { classType: n.classType, ...(n.title !== undefined ? { title: n.title } : {}) };
  return labels;
}

/**
 * The internal option of `run()` / `follow()` (`FOLLOWER_STATES`, not a
 * `RunOptions` member) that tells `display` the job's end as its follower
 * decides it: spread into the options of a run whose display was opened with
 * `endsFrom: 'follower'`.
 *
 * @example
 * ```ts
 * await cloud.follow(id, { onEvent: (e) => display.event(e), ...followerEnds(display) });
 * ```
 */
export function followerEnds(display: Display): { [FOLLOWER_STATES]: FollowerStatesListener } {
  return { [FOLLOWER_STATES]: (_state, ending) => ending && display.ended(ending) };
}

/**
 * Runs `task` with an open display and a Ctrl-C handler; resolves with its
 * exit code. A failure is shown by the display (`fail`), then rethrown for
 * `main` to report on standard error with its exit code. `endsFrom`: what
 * ends the job on the display (`DisplayOptions.endsFrom`): `follower` where
 * the task runs one and passes it {@link followerEnds}.
 */
export async function withDisplay(ctx: Context, nodes: Record<string, NodeLabel>, task: (display: Display, interrupt: InterruptHandler) => Promise<number>, endsFrom: 'events' | 'follower' = 'events'): Promise<number> {
  const display = createDisplay({ mode: ctx.mode, out: ctx.io.stdout, color: ctx.color, nodes, endsFrom });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    display.close();
  };
  const interrupt = handleInterrupt((note) => {
    close();
    if (note) ctx.warn(`platformui: interrupted twice: ${note}`);
  });
  // Log lines print above the live block when it shares the terminal with standard error.
  if (ctx.mode === 'tty' && ctx.io.stderr.isTTY) ctx.above = (line) => display.info(line);
  try {
    return await task(display, interrupt);
  } catch (err) {
    const { lines, summary } = describeFailure(err, ctx.failureContext('cloud'));
    // JSON's error object is main's (every failure gets one, before a job too); a terminal gets one line
    // each, then the summary; plain mode's standard output none of them (main writes them to standard error).
    if (ctx.mode === 'json') display.close();
    else if (ctx.mode !== 'tty' || lines.length === 1) display.fail(lines.join('\n'));
    else {
      for (const line of lines) display.info(line);
      display.fail(summary ?? `${lines.length} problems (above)`);
    }
    ctx.failureShown = true;
    throw err;
  } finally {
    ctx.above = undefined;
    interrupt.dispose();
    close();
  }
}
