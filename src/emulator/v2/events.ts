/**
 * `GET /api/v2/jobs/{id}/events`: one job's `text/event-stream`. On connect
 * the job's `status`, its latest `progress` and `preview` (and, for a job
 * already over, its outputs and terminal `status`), then live frames; it ends
 * after the terminal `status`. `output` frames go out as outputs are written,
 * or after the terminal `status` on a server that sends them late
 * (`outputFrames: 'after'`). `: keepalive` after `keepaliveMs` of silence.
 * Past `streamLimit` open streams: 429 `too_many_streams` + `Retry-After`;
 * with the `eventsNotImplemented` fault: 501 `not_implemented`.
 *
 * @module
 */
import type { RequestContext, RouteRow } from '../dispatch.ts';
import { enter } from './access.ts';
import { notFound, V2Error } from './errors.ts';
import { outputJson } from './render.ts';
import { isTerminal, type V2Frame, type V2JobRecord, type V2State } from './state.ts';

/** Opens the stream (after every check), writes frames until the terminal status or the client leaves. */
function getEvents(state: V2State, ctx: RequestContext): void {
  const lane = enter(state, ctx);
  if (state.faults.eventsNotImplemented) throw new V2Error(501, 'not_implemented', 'Event streams are not available on this surface; poll GET /jobs/{id} instead.');
  const r = state.get(lane, ctx.params.id ?? '');
  if (!r) throw notFound('Job');
  if (state.counters.streamsOpen >= state.streamLimit) {
    throw new V2Error(429, 'too_many_streams', 'Maximum concurrent event streams reached; poll GET /jobs/{id} instead.', null, { 'Retry-After': String(state.streamRetryAfter) });
  }
  const { res } = ctx;
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
  res.flushHeaders();
  state.counters.streamsOpened++;
  state.counters.streamsOpen++;
  const after = state.behaviour.outputFrames === 'after';
  const held: V2Frame[] = [];
  let keepalive: NodeJS.Timeout | undefined;
  let ended = false;

  const arm = () => {
    clearTimeout(keepalive);
    keepalive = setTimeout(() => {
      if (ended) return;
      res.write(': keepalive\n\n');
      arm();
    }, state.keepaliveMs);
    keepalive.unref();
  };
  const write = (frame: V2Frame) => {
    if (ended) return;
    const data = frame.event === 'output' ? outputJson(state, r, frame.entry, ctx.origin) : frame.data;
    res.write(`event: ${frame.event}\ndata: ${JSON.stringify(data)}\n\n`);
    arm();
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    clearTimeout(keepalive);
    off();
    state.counters.streamsOpen--;
    res.end();
  };
  const onFrame = (frame: V2Frame) => {
    if (frame.event === 'output' && after) {
      held.push(frame);
      return;
    }
    if (frame.event === 'status' && isTerminal(String(frame.data.status))) {
      write(frame);
      held.splice(0).forEach(write);
      finish();
      return;
    }
    write(frame);
  };
  const off = state.listen(r, onFrame);
  res.once('close', () => {
    if (ended) return;
    ended = true;
    clearTimeout(keepalive);
    off();
    state.counters.streamsOpen--;
  });
  replay(state, r, onFrame);
}

/** What a stream sends on connect: status, latest progress and preview; for a finished job its outputs and the terminal status. */
function replay(state: V2State, r: V2JobRecord, send: (frame: V2Frame) => void): void {
  const status = state.statusFrame(r);
  const terminal = isTerminal(String(status.data.status));
  if (!terminal) send(status);
  if (status.data.status !== 'queued') send(state.progressFrame(r));
  if (r.preview) send({ event: 'preview', data: r.preview });
  if (!terminal) return;
  for (const entry of r.outputs) send({ event: 'output', entry });
  send(status);
}

/** The event-stream table. */
export const EVENT_ROUTES: readonly RouteRow<V2State>[] = [['GET /api/v2/jobs/:id/events', getEvents]];
