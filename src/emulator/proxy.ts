/**
 * The partner-proxy service of the emulator (`registry-and-proxy.md`,
 * endpoints 6–7): AI image jobs that start as `CREATED`, move on a timer and
 * notify `webhook_url` on every status, and can be read back by id. Nothing
 * is computed; results are a small fixed PNG served by a second, credential-free
 * origin ({@link resultsListener}), as the live proxy's result host is.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SILENT, type Log } from '../transport/log.ts';
import { requireBearer } from './auth.ts';
import { isObject } from '../schemas/rule.ts';
import { Faults, HttpError, REQUEST_LOG_LIMIT, Router, sendError, sendJson, type RecordedRequest, type Route } from './http.ts';
import { DEFAULT_TOKENS } from './registry.ts';

/** Statuses a task goes through. The spec names only `CREATED`; the rest is the emulator's choice. */
export type TaskStatus = 'CREATED' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';

/** The two operations, as they appear in the path after `/v1/ai/`. */
export type ProxyOperation = 'image-relight' | 'skin-enhancer/creative';

/**
 * How the status routes (`GET …/image-relight/:task_id`, `GET …/skin-enhancer/:task_id`)
 * shape their answer: `wrapped` is `{ data: { task_id, status, generated, … } }`
 * like the POST answers; `bare` is `{ task_id, task_status, generated, … }`
 * (no wrapper, status under `task_status`), as the live proxy may answer.
 */
export type ProxyShape = 'wrapped' | 'bare';

/** Request headers that carry credentials: the result origin refuses any request with one of them. */
export const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'x-api-key', 'proxy-authorization'] as const;

/** Default delay between two status changes. */
export const DEFAULT_STEP_MS = 50;

/** Default time a webhook receiver gets to answer. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;

/** Body cap of the two job routes: images travel inline as base64, so 1 MiB is too small. */
export const PROXY_BODY_LIMIT = 16 * 1024 * 1024;

/** An `image` starting with this scheme makes the task end `FAILED` (a fault switch reachable from any client). */
export const FAIL_IMAGE_PREFIX = 'fail://';

/** The style presets of image-relight. */
export const RELIGHT_STYLES = ['standard', 'darker_but_realistic', 'clean', 'smooth', 'brighter', 'contrasted_n_hdr', 'just_composition'] as const;

/** One webhook notification attempt. */
export interface WebhookAttempt {
  /** Status the notification announced. */
  status: TaskStatus;
  /** Whether the receiver answered 2xx. */
  ok: boolean;
  /** HTTP status of the receiver's answer, when there was one. */
  httpStatus?: number;
  /** Why it failed without an answer (timeout, refused connection…). */
  error?: string;
}

/** A task as the emulator stores it. {@link ProxyState.view} gives its wire form. */
export interface ProxyTask {
  task_id: string;
  status: TaskStatus;
  /** Result references; filled on `COMPLETED`. */
  generated: string[];
  operation: ProxyOperation;
  /** The `:vendor` path segment the task was started under. */
  vendor: string;
  created_at: string;
  updated_at: string;
  webhook_url?: string;
  /** Set when `webhook_url` was accepted but will never be called. */
  webhook_skipped?: 'non-loopback';
  /** The validated request body. Not on the wire. */
  request: Record<string, unknown>;
  /** Notification attempts, in order. Not on the wire. */
  webhooks: WebhookAttempt[];
}

/** Options of {@link ProxyState}. */
export interface ProxyStateOptions {
  /** Accepted bearer tokens. Default: the registry's default tokens. */
  tokens?: Iterable<string>;
  /** Delay between status changes, in ms. Default {@link DEFAULT_STEP_MS}. */
  stepMs?: number;
  /** Timeout of one webhook call, in ms. Default {@link DEFAULT_WEBHOOK_TIMEOUT_MS}. */
  webhookTimeoutMs?: number;
  /** Clock, replaceable in tests. */
  now?: () => Date;
  /** Shape of the status GET answers. Default `'wrapped'`. See {@link ProxyShape}. */
  shape?: ProxyShape;
  /**
   * Each new task answers `404` to its first `notFoundPolls` status GETs, as
   * the live proxy may right after creation. Default 0.
   */
  notFoundPolls?: number;
  /**
   * Origin (`http://host:port`) result URLs are addressed under. The emulator
   * sets it to its result server; unset, results are addressed under the
   * origin the task was started through.
   */
  resultsOrigin?: string;
}

// A 1×1 PNG: enough for a client to download and decode a "result".
const RESULT_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * The proxy's in-memory state and timers. Mutable knobs (`stepMs`,
 * `webhookTimeoutMs`, `failNext`, `shape`, `notFoundPolls`, `resultsOrigin`)
 * are read when used, so tests may change them at any time.
 */
export class ProxyState {
  readonly tokens: Set<string>;
  /** Every task started, by id. */
  readonly tasks = new Map<string, ProxyTask>();
  stepMs: number;
  webhookTimeoutMs: number;
  /** Fault switch: the next task started ends `FAILED`; consumed by that task. */
  failNext = false;
  now: () => Date;
  /** Shape of the status GET answers (`'wrapped'` by default); read on every GET. */
  shape: ProxyShape;
  /** How many status GETs each task answers `404` to after creation; read when a task starts (default 0). */
  notFoundPolls: number;
  /**
   * Origin of the result server (e.g. `http://127.0.0.1:41235`), where the
   * `generated` URLs of completed tasks point; read when a task completes.
   * `startEmulator()` sets it. Unset: the origin the task was started through.
   */
  resultsOrigin: string | undefined;
  /**
   * Every request the result server received (bounded, oldest first), refused
   * ones included, with its headers as sent: proof of which credentials, if
   * any, reached the result host. Cleared by {@link reset}.
   */
  readonly resultRequests: RecordedRequest[] = [];
  /** Fault switches of the result server only (the emulator's `faults` do not apply there). */
  readonly resultFaults = new Faults();

  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  /** Tasks that will end FAILED. */
  readonly #doomed = new Set<string>();
  /** Origin (`http://host:port`) each running task's results will be addressed under. */
  readonly #origins = new Map<string, string>();
  // Per-task queue of notifications, so a receiver sees statuses in order even when stepMs is tiny.
  readonly #outbox = new Map<string, Promise<void>>();
  /** Status GETs still to answer 404, per task. */
  readonly #hidden = new Map<string, number>();
  #abort = new AbortController();
  #closed = false;

  constructor(options: ProxyStateOptions = {}) {
    this.tokens = new Set(options.tokens ?? Object.keys(DEFAULT_TOKENS));
    this.stepMs = options.stepMs ?? DEFAULT_STEP_MS;
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    this.now = options.now ?? (() => new Date());
    this.shape = options.shape ?? 'wrapped';
    this.notFoundPolls = options.notFoundPolls ?? 0;
    this.resultsOrigin = options.resultsOrigin;
  }

  /** Starts a task (already validated) and schedules its progress. */
  start(operation: ProxyOperation, vendor: string, request: Record<string, unknown>, origin: string): ProxyTask {
    const at = this.now().toISOString();
    const task: ProxyTask = {
      task_id: randomUUID(),
      status: 'CREATED',
      generated: [],
      operation,
      vendor,
      created_at: at,
      updated_at: at,
      request,
      webhooks: [],
    };
    const webhook = request.webhook_url;
    if (typeof webhook === 'string') {
      task.webhook_url = webhook;
      if (!isLoopback(webhook)) task.webhook_skipped = 'non-loopback';
    }
    if (this.failNext || String(request.image).startsWith(FAIL_IMAGE_PREFIX)) this.#doomed.add(task.task_id);
    this.failNext = false;
    this.tasks.set(task.task_id, task);
    this.#origins.set(task.task_id, origin);
    if (this.notFoundPolls > 0) this.#hidden.set(task.task_id, Math.floor(this.notFoundPolls));
    this.#schedule(task);
    return task;
  }

  /** The wire form `{ data: {...} }` of a task: internal bookkeeping left out. */
  view(task: ProxyTask): { data: Record<string, unknown> } {
    const { request: _request, webhooks: _webhooks, ...data } = task;
    return { data: structuredClone(data) };
  }

  /** The answer of a status GET in the current {@link shape}. */
  statusView(task: ProxyTask): Record<string, unknown> {
    const { data } = this.view(task);
    if (this.shape !== 'bare') return { data };
    const { status, ...rest } = data;
    return { ...rest, task_status: status };
  }

  /**
   * The task a status GET for `operation` (`'image-relight'`, or
   * `'skin-enhancer'` for every skin-enhancer mode) finds, `undefined` for an
   * unknown id, one of another operation, or one still within its `notFoundPolls`
   * (that GET is counted).
   */
  lookup(operation: 'image-relight' | 'skin-enhancer', taskId: string): ProxyTask | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    if (task.operation !== operation && !task.operation.startsWith(`${operation}/`)) return undefined;
    const hidden = this.#hidden.get(taskId) ?? 0;
    if (hidden > 0) {
      if (hidden === 1) this.#hidden.delete(taskId);
      else this.#hidden.set(taskId, hidden - 1);
      return undefined;
    }
    return task;
  }

  /** Queues the notification of the task's current status (no-op without a callable webhook). */
  notify(task: ProxyTask): void {
    if (!task.webhook_url || task.webhook_skipped) return;
    const url = task.webhook_url;
    const status = task.status;
    // Snapshot now: a late delivery must still announce the status it was sent for.
    const body = JSON.stringify(this.view(task));
    const id = task.task_id;
    // Captured now: after reset() the state has a fresh controller, but this delivery belongs to the old run.
    const signal = this.#abort.signal;
    const next = (this.#outbox.get(id) ?? Promise.resolve()).then(() => this.#deliver(task, { url, status, body, signal }));
    this.#outbox.set(id, next);
    void next.then(() => {
      if (this.#outbox.get(id) === next) this.#outbox.delete(id);
    });
  }

  /** Drops every task and stops timers and pending webhooks; the state stays usable. */
  reset(): void {
    this.#stop();
    this.tasks.clear();
    this.failNext = false;
    this.resultRequests.length = 0;
    this.resultFaults.reset();
    this.#abort = new AbortController();
  }

  /** Stops every timer and aborts pending webhooks for good (called by the emulator's close()). */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  /** Whether `file` is a result of a completed task `taskId`. */
  hasResult(taskId: string, file: string): boolean {
    const task = this.tasks.get(taskId);
    return task?.status === 'COMPLETED' && task.generated.some((ref) => ref.endsWith(`/${taskId}/${file}`));
  }

  #stop(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#doomed.clear();
    this.#origins.clear();
    this.#outbox.clear();
    this.#hidden.clear();
    this.#abort.abort();
  }

  #schedule(task: ProxyTask): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#advance(task);
    }, this.stepMs);
    // Timers never hold a test process open; close() clears them anyway.
    timer.unref();
    this.#timers.add(timer);
  }

  #advance(task: ProxyTask): void {
    if (task.status === 'CREATED') {
      this.#set(task, 'IN_PROGRESS');
      this.#schedule(task);
    } else if (task.status === 'IN_PROGRESS') {
      if (this.#doomed.delete(task.task_id)) {
        this.#set(task, 'FAILED');
      } else {
        const origin = this.resultsOrigin ?? this.#origins.get(task.task_id);
        task.generated = [`${origin}/proxy/results/${task.task_id}/0.png`];
        this.#set(task, 'COMPLETED');
      }
      this.#origins.delete(task.task_id);
    }
  }

  #set(task: ProxyTask, status: TaskStatus): void {
    task.status = status;
    task.updated_at = this.now().toISOString();
    this.notify(task);
  }

  async #deliver(task: ProxyTask, n: { url: string; status: TaskStatus; body: string; signal: AbortSignal }): Promise<void> {
    const { url, status, body, signal: abort } = n;
    if (abort.aborted) return;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'platformui-emulator' },
        body,
        // A loopback receiver must not bounce the call to another host.
        redirect: 'manual',
        signal: AbortSignal.any([abort, AbortSignal.timeout(this.webhookTimeoutMs)]),
      });
      await res.body?.cancel();
      task.webhooks.push({ status, ok: res.ok, httpStatus: res.status });
    } catch (err) {
      if (abort.aborted) return; // reset/close, not the receiver's fault
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      task.webhooks.push({ status, ok: false, error: `${err instanceof Error ? err.message : String(err)}${cause}` });
    }
  }
}

/** Whether a URL points at this machine (127.0.0.0/8, localhost, [::1]): the only webhooks the emulator calls. */
export function isLoopback(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

// ---------------------------------------------------------------------------
// Validation: the same rules as the SDK (proxy/rules.ts, schemas/proxy.ts),
// written again so a bug on one side is caught by the other.

type Check = (value: unknown, field: string) => void;

function bad(field: string, message: string): HttpError {
  return new HttpError(400, `${field}: ${message}`, 'bad_request');
}

const string: Check = (v, f) => {
  if (typeof v !== 'string') throw bad(f, 'must be a string');
};
const boolean: Check = (v, f) => {
  if (typeof v !== 'boolean') throw bad(f, 'must be a boolean');
};
const number: Check = (v, f) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(f, 'must be a number');
};
const percent: Check = (v, f) => {
  number(v, f);
  if ((v as number) < 0 || (v as number) > 100) throw bad(f, 'must be from 0 to 100');
};

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

// Standard or URL-safe alphabet, padding optional; whitespace (MIME line breaks) is stripped first.
const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;
const DATA_URI = /^data:[^,]*;base64,/i;

const image: Check = (v, f) => {
  if (typeof v !== 'string' || v === '') throw bad(f, 'must be a non-empty string: base64 data or an http(s) URL');
  if (f === 'image' && v.startsWith(FAIL_IMAGE_PREFIX)) return;
  // Base64 never holds a colon, so anything with a scheme is a URL.
  if (/^[a-z][a-z0-9+.-]*:/i.test(v) && !DATA_URI.test(v)) {
    if (!isHttpUrl(v)) throw bad(f, 'must be base64 data or an absolute http(s) URL');
    return;
  }
  if (!BASE64.test(v.replace(DATA_URI, '').replace(/\s+/g, ''))) throw bad(f, 'is neither base64 data nor an http(s) URL');
};

const webhookUrl: Check = (v, f) => {
  if (typeof v !== 'string' || !isHttpUrl(v)) throw bad(f, 'must be an absolute http(s) URL');
};

const style: Check = (v, f) => {
  if (!(RELIGHT_STYLES as readonly unknown[]).includes(v)) throw bad(f, `must be one of ${RELIGHT_STYLES.join(', ')}`);
};

// `(text:weight)`: innermost parentheses holding a colon; a non-numeric weight is prose, not emphasis.
const EMPHASIS = /\(([^()]*):([^():]*)\)/g;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;

const prompt: Check = (v, f) => {
  string(v, f);
  for (const m of (v as string).matchAll(EMPHASIS)) {
    const raw = (m[2] ?? '').trim();
    if (!DECIMAL.test(raw)) continue;
    const weight = Number(raw);
    if (weight < 1 || weight > 1.4) throw bad(f, `emphasis weight ${raw} in "${m[0]}" is outside 1–1.4`);
  }
};

const ADVANCED: Record<string, Check> = {
  blacks: number,
  brightness: number,
  contrast: number,
  saturation: number,
  whites: number,
  engine: string,
  transfer_light_a: string,
  transfer_light_b: string,
  fixed_generation: boolean,
};

const advancedSettings: Check = (v, f) => {
  if (!isObject(v)) throw bad(f, 'must be an object');
  checkMembers(v, ADVANCED, `${f}.`);
};

const RELIGHT: Record<string, Check> = {
  image,
  prompt,
  style,
  change_background: boolean,
  interpolate_from_original: boolean,
  light_transfer_strength: percent,
  preserve_details: boolean,
  transfer_light_from_lightmap: image,
  transfer_light_from_reference_image: image,
  webhook_url: webhookUrl,
  advanced_settings: advancedSettings,
};

const SKIN: Record<string, Check> = {
  image,
  sharpen: percent,
  smart_grain: percent,
  webhook_url: webhookUrl,
};

// Unknown members are refused, like the SDK's strict schemas: a misspelt
// option of a paid job should fail loudly, not be silently dropped.
function checkMembers(obj: Record<string, unknown>, checks: Record<string, Check>, prefix: string): void {
  for (const [key, value] of Object.entries(obj)) {
    const check = checks[key];
    if (!check) throw bad(`${prefix}${key}`, 'is not a known field');
    check(value, `${prefix}${key}`);
  }
}

/** Validates a job body; `image` is the one required member. Throws 400 naming the field. */
export function validateJob(operation: ProxyOperation, body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw bad('body', 'must be a JSON object');
  if (body.image === undefined) throw bad('image', 'is required');
  checkMembers(body, operation === 'image-relight' ? RELIGHT : SKIN, '');
  if (body.transfer_light_from_lightmap !== undefined && body.transfer_light_from_reference_image !== undefined) {
    throw bad('transfer_light_from_reference_image', 'cannot be combined with transfer_light_from_lightmap');
  }
  return body;
}

// ---------------------------------------------------------------------------
// Routes

/**
 * The proxy routes. Decisions where the spec is silent:
 *
 * - Any `:vendor` is accepted and recorded on the task.
 * - `image` is required; unknown members are 400.
 * - Statuses: `CREATED` → `IN_PROGRESS` → `COMPLETED` (or `FAILED`), one step
 *   every `stepMs`. The webhook receives `{ data: task }` for each of them,
 *   `CREATED` included, in order, but only on loopback; other hosts are
 *   accepted and never called (`webhook_skipped: 'non-loopback'`).
 * - `GET /proxy/:vendor/v1/ai/image-relight/:task_id` and
 *   `GET /proxy/:vendor/v1/ai/skin-enhancer/:task_id` (Bearer) answer the
 *   task's current record in `state.shape`; `404 not_found` for an unknown id,
 *   a task of the other operation, or during the task's `notFoundPolls`. Any
 *   `:vendor` finds the task.
 * - `GET /proxy/results/:taskId/:file` serves the results without auth, like
 *   a CDN link; 404 until the task is `COMPLETED`. The emulator's result URLs
 *   point at the separate result server ({@link resultsListener}); this route
 *   stays on the main origin for routers without one.
 */
export function proxyRoutes(state: ProxyState): Route[] {
  const job = (operation: ProxyOperation): Route => ({
    method: 'POST',
    path: `/proxy/:vendor/v1/ai/${operation}`,
    bodyLimit: PROXY_BODY_LIMIT,
    handler: async (ctx) => {
      requireBearer(ctx, (token) => state.tokens.has(token));
      const body = validateJob(operation, await ctx.readJson());
      const task = state.start(operation, ctx.params.vendor ?? 'vendor', body, ctx.origin);
      sendJson(ctx.res, 200, state.view(task));
      state.notify(task);
    },
  });
  const status = (operation: 'image-relight' | 'skin-enhancer'): Route => ({
    method: 'GET',
    path: `/proxy/:vendor/v1/ai/${operation}/:task_id`,
    handler: (ctx) => {
      requireBearer(ctx, (token) => state.tokens.has(token));
      const id = ctx.params.task_id ?? '';
      const task = state.lookup(operation, id);
      if (!task) throw new HttpError(404, `No ${operation} task ${id}`, 'not_found');
      sendJson(ctx.res, 200, state.statusView(task));
    },
  });
  return [job('image-relight'), job('skin-enhancer/creative'), status('image-relight'), status('skin-enhancer'), resultRoute(state)];
}

function resultRoute(state: ProxyState): Route {
  return {
    method: 'GET',
    path: '/proxy/results/:taskId/:file',
    handler: (ctx) => {
      const { taskId = '', file = '' } = ctx.params;
      if (!state.hasResult(taskId, file)) throw new HttpError(404, `No result ${file} for task ${taskId}`);
      ctx.res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(RESULT_PNG.length) });
      ctx.res.end(ctx.method === 'HEAD' ? undefined : RESULT_PNG);
    },
  };
}

/**
 * The request listener of the result server: the host `generated` URLs point
 * at, on its own origin, like the live proxy's result host.
 *
 * - Every request is recorded in `state.resultRequests` first.
 * - Any request carrying a credential header ({@link CREDENTIAL_HEADERS}:
 *   `Authorization`, `Cookie`, `X-API-Key`, `Proxy-Authorization`) is refused
 *   with `401 { error: 'unauthorized' }`, whatever its path.
 * - `GET /proxy/results/:taskId/:file` serves a completed task's result PNG
 *   (404 otherwise); `GET /redirect/:taskId/:file` answers `302` with an
 *   absolute `Location` to that path, to test redirects.
 * - `state.resultFaults` applies (after the credential check).
 * - `extraRoutes` are served too, behind the same credential check (the
 *   emulator adds the registry's signed upload route, `PUT /registry-uploads/:nodeId/:version/node.zip`).
 */
export function resultsListener(state: ProxyState, log: Log = SILENT, extraRoutes: Route[] = []): (req: IncomingMessage, res: ServerResponse) => void {
  const router = new Router(state.resultFaults, 0, log).add(extraRoutes).add([
    resultRoute(state),
    {
      method: 'GET',
      path: '/redirect/:taskId/:file',
      handler: (ctx) => {
        const { taskId = '', file = '' } = ctx.params;
        if (!state.hasResult(taskId, file)) throw new HttpError(404, `No result ${file} for task ${taskId}`);
        const location = `${state.resultsOrigin ?? ctx.origin}/proxy/results/${encodeURIComponent(taskId)}/${encodeURIComponent(file)}`;
        ctx.res.writeHead(302, { Location: location, 'Content-Length': '0' });
        ctx.res.end();
      },
    },
  ]);
  return (req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    state.resultRequests.push({
      method: (req.method ?? 'GET').toUpperCase(),
      path: q >= 0 ? target.slice(0, q) : target,
      url: target,
      headers: { ...req.headers },
      time: Date.now(),
    });
    if (state.resultRequests.length > REQUEST_LOG_LIMIT) state.resultRequests.splice(0, state.resultRequests.length - REQUEST_LOG_LIMIT);
    const sent = CREDENTIAL_HEADERS.filter((h) => req.headers[h] !== undefined);
    if (sent.length > 0) {
      sendError(res, 401, 'unauthorized', `The result host takes no credentials; got ${sent.join(', ')}`);
      return;
    }
    router.listener(req, res);
  };
}
