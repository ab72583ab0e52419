/**
 * The v2 job routes, one named handler per `METHOD /path`: submit, list,
 * get, workflow, logs, cancel (the event stream is `events.ts`).
 *
 * @module
 */
import { isObject } from '../../schemas/rule.ts';
import type { RequestContext, RouteRow } from '../dispatch.ts';
import { sendEmpty, sendJson, sendText } from '../reply.ts';
import { enter } from './access.ts';
import { notFound, V2Error } from './errors.ts';
import { jobJson } from './render.ts';
import { isTerminal, type V2JobRecord, type V2State } from './state.ts';
import { submitJob } from './submit.ts';

const MiB = 1024 * 1024;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const REAL_DEFAULT_LIMIT = 100;
const REAL_MAX_LIMIT = 1000;
const STATUSES = new Set(['queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired']);

/** `POST /api/v2/jobs`: 201 the queued Job (or, with the `loseSubmitAnswers` fault, the job and no answer). */
async function postJobs(state: V2State, ctx: RequestContext): Promise<void> {
  const lane = enter(state, ctx);
  const r = await submitJob(state, ctx, lane);
  if (state.faults.loseSubmitAnswers > 0) {
    state.faults.loseSubmitAnswers--;
    ctx.req.socket.destroy();
    return;
  }
  sendJson(ctx.res, 201, jobJson(state, r, ctx.origin, { created: true }));
}

/** The jobs of `lane` whose metadata has every `metadata[k]=v` of the query (spec), newest first. */
function filtered(state: V2State, lane: string, query: URLSearchParams): V2JobRecord[] {
  const filters: Array<[string, string]> = [];
  for (const [name, value] of query) {
    const m = /^metadata\[(.+)\]$/.exec(name);
    if (name.startsWith('metadata') && !m) throw new V2Error(400, 'invalid_metadata_filter', `Malformed metadata filter: ${name}.`);
    if (m) filters.push([m[1]!, value]);
  }
  if (filters.length > 3) throw new V2Error(400, 'invalid_metadata_filter', 'At most 3 metadata filters.');
  return [...state.jobs.values()]
    .filter((r) => r.lane === lane)
    .filter((r) => filters.every(([k, v]) => isObject(r.metadata) && r.metadata[k] === v))
    .reverse();
}

/** A `limit` query parameter within 1..max. */
function limitOf(query: URLSearchParams, fallback: number, max: number): number {
  const raw = query.get('limit');
  if (raw === null) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > max) throw new V2Error(400, 'invalid_request', `'limit' must be between 1 and ${max}.`);
  return n;
}

/** `GET /api/v2/jobs`: spec `{ jobs, next_cursor? }` (items without outputs or urls); real `{ jobs, truncated }` (full jobs, `status` filter). */
function getJobs(state: V2State, ctx: RequestContext): void {
  const lane = enter(state, ctx);
  if (state.behaviour.jobList === 'truncated') {
    const limit = limitOf(ctx.query, REAL_DEFAULT_LIMIT, REAL_MAX_LIMIT);
    const wanted = ctx.query.get('status')?.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = wanted?.filter((s) => !STATUSES.has(s)) ?? [];
    if (bad.length) throw new V2Error(400, 'invalid_request', `Unknown status filter value(s): ${bad.sort().join(', ')}.`);
    const all = [...state.jobs.values()].filter((r) => r.lane === lane && (!wanted?.length || wanted.includes(state.statusOf(r)))).reverse();
    return sendJson(ctx.res, 200, { jobs: all.slice(0, limit).map((r) => jobJson(state, r, ctx.origin)), truncated: all.length > limit });
  }
  const limit = limitOf(ctx.query, DEFAULT_LIMIT, MAX_LIMIT);
  const all = filtered(state, lane, ctx.query);
  const cursor = ctx.query.get('cursor');
  let start = 0;
  if (cursor) {
    const after = Buffer.from(cursor, 'base64url').toString('utf8');
    start = all.findIndex((r) => r.id === after) + 1;
    if (start === 0) throw new V2Error(400, 'invalid_request', 'Unknown or expired cursor.');
  }
  const page = all.slice(start, start + limit);
  const body: Record<string, unknown> = { jobs: page.map((r) => jobJson(state, r, ctx.origin, { list: true })) };
  if (start + limit < all.length) body.next_cursor = Buffer.from(page[page.length - 1]!.id, 'utf8').toString('base64url');
  sendJson(ctx.res, 200, body);
}

/** The job of the path, or 404 `not_found`. */
function jobOf(state: V2State, ctx: RequestContext, lane: string): V2JobRecord {
  const r = state.get(lane, ctx.params.id ?? '');
  if (!r) throw notFound('Job');
  return r;
}

/** `GET /api/v2/jobs/{id}`: the Job; with the `falseExpired` fault, a just-finished job reads `expired` once. */
function getJob(state: V2State, ctx: RequestContext): void {
  const r = jobOf(state, ctx, enter(state, ctx));
  const status = state.statusOf(r);
  let as: string | undefined;
  if (isTerminal(status) && !r.polledAfterEnd) {
    r.polledAfterEnd = true;
    if (state.faults.falseExpired > 0 && status !== 'expired') {
      state.faults.falseExpired--;
      as = 'expired';
    }
  }
  sendJson(ctx.res, 200, jobJson(state, r, ctx.origin, as ? { as } : {}));
}

/** `GET /api/v2/jobs/{id}/workflow`: `{ workflow, format: 'api' }`, as submitted (spec) or with assets resolved to file names (real). */
function getWorkflow(state: V2State, ctx: RequestContext): void {
  const r = jobOf(state, ctx, enter(state, ctx));
  const workflow = state.behaviour.workflowEcho === 'resolved' ? r.job.prompt : r.submitted;
  sendJson(ctx.res, 200, { workflow: structuredClone(workflow), format: 'api' });
}

/** `GET /api/v2/jobs/{id}/logs`: 204 before the job starts, else `{ text, truncated, captured_at, complete }`; absent on the real server. */
function getLogs(state: V2State, ctx: RequestContext): void {
  if (!state.behaviour.logs) return sendText(ctx.res, 404, '404: Not Found');
  const r = jobOf(state, ctx, enter(state, ctx));
  const j = r.job;
  if (j.started === undefined) return sendEmpty(ctx.res, 204);
  const lines = ['got prompt', ...j.executed.map((id) => `Executing node ${id} (${j.prompt[id]?.class_type ?? '?'})`)];
  if (j.status === 'failed' && j.error) lines.push(`!!! Exception during processing !!! ${j.error.exception_message}`);
  if (j.status === 'cancelled') lines.push('Processing interrupted');
  if (j.status === 'completed' && j.ended !== undefined) lines.push(`Prompt executed in ${((j.ended - j.started) / 1000).toFixed(2)} seconds`);
  const complete = isTerminal(state.statusOf(r));
  sendJson(ctx.res, 200, { text: lines.join('\n') + '\n', truncated: false, captured_at: new Date().toISOString(), complete });
}

/** `POST /api/v2/jobs/{id}/cancel`: 200 the Job, `canceling` while a running job reaches its next boundary; idempotent. */
async function postCancel(state: V2State, ctx: RequestContext): Promise<void> {
  const lane = enter(state, ctx);
  state.counters.cancels++;
  await ctx.readBody();
  const r = jobOf(state, ctx, lane);
  state.cancel(r);
  const canceling = r.job.status === 'in_progress' && r.cancelRequested;
  sendJson(ctx.res, 200, jobJson(state, r, ctx.origin, canceling ? { as: 'canceling' } : {}));
}

/** The job table. */
export const JOB_ROUTES: readonly RouteRow<V2State>[] = [
  ['POST /api/v2/jobs', postJobs, { bodyLimit: 16 * MiB }],
  ['GET /api/v2/jobs', getJobs],
  ['GET /api/v2/jobs/:id', getJob],
  ['GET /api/v2/jobs/:id/workflow', getWorkflow],
  ['GET /api/v2/jobs/:id/logs', getLogs],
  ['POST /api/v2/jobs/:id/cancel', postCancel],
];
